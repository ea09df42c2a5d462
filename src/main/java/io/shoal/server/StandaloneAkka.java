package io.shoal.server;

import akka.serialization.Serializer;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Akka set-up of a node out of cluster mode, whose messages never leave the JVM: what Akka
 * would make at start for a cluster, and a node on its own never uses, is left to be made when
 * something asks for it, or not made at all (each costs loaded classes: docs/operating.md,
 * "Memory").
 *
 * <ul>
 *   <li>The serializers: Akka's own basic ones, and {@link Unused} in place of the rest. Akka makes
 *       every configured serializer when a system starts; those of the cluster, remoting, sharding,
 *       distributed data, streams and Jackson come with their jars and cost some thousand classes.
 *       Akka requires every serializer its jars name to be configured, so they are replaced, not
 *       removed.
 *   <li>Akka Streams' materializer, which akka-stream's jar lists among the extensions made at
 *       start: it is made on first use instead (an upstream over TLS streams; nothing else on a
 *       node on its own does).
 * </ul>
 */
final class StandaloneAkka {
  /** The extension akka-stream's reference.conf has every actor system make at start. */
  static final String STREAM_MATERIALIZER = "akka.stream.SystemMaterializer$";

  private StandaloneAkka() {
  }

  /** {@code akka} with the serializers of {@link #basicSerializersOnly} and the stream materializer made on first use. */
  static Config of(Config akka) {
    List<String> extensions = new ArrayList<>(akka.getStringList("akka.library-extensions"));
    extensions.remove(STREAM_MATERIALIZER);
    return basicSerializersOnly(akka)
        .withValue("akka.library-extensions", ConfigValueFactory.fromIterable(extensions));
  }

  /**
   * {@code akka} with each serializer outside package akka.serialization (and Jackson's) replaced
   * by {@link Unused}, and the classes bound to them bound to Akka's byte-array serializer
   * instead (which serializes nothing else: Akka warns of its own classes bound to a serializer
   * that is not Akka's).
   */
  static Config basicSerializersOnly(Config akka) {
    Config replaced = akka;
    Set<String> unused = new HashSet<>();
    for (Map.Entry<String, ConfigValue> e : akka.getObject("akka.actor.serializers").entrySet()) {
      String serializer = String.valueOf(e.getValue().unwrapped());
      if (!serializer.startsWith("akka.serialization.") || serializer.startsWith("akka.serialization.jackson.")) {
        unused.add(e.getKey());
        replaced = replaced.withValue(ConfigUtil.joinPath("akka", "actor", "serializers", e.getKey()),
            ConfigValueFactory.fromAnyRef(Unused.class.getName()));
      }
    }
    for (Map.Entry<String, ConfigValue> e : akka.getObject("akka.actor.serialization-bindings").entrySet()) {
      if (unused.contains(String.valueOf(e.getValue().unwrapped()))) {
        replaced = replaced.withValue(ConfigUtil.joinPath("akka", "actor", "serialization-bindings", e.getKey()),
            ConfigValueFactory.fromAnyRef("bytes"));
      }
    }
    return replaced;
  }

  /**
   * Stands for a serializer a node on its own never uses: loads nothing, and refuses to
   * serialize, so a message that would leave the JVM fails loudly rather than silently.
   */
  public static final class Unused implements Serializer {
    /** Akka wants a distinct identifier per serializer; these are far from Akka's own (0 to 40). */
    private static final AtomicInteger NEXT = new AtomicInteger(Integer.MAX_VALUE - 1000);
    private final int identifier = NEXT.incrementAndGet();

    @Override
    public int identifier() {
      return identifier;
    }

    @Override
    public byte[] toBinary(Object o) {
      throw new UnsupportedOperationException("a node out of cluster mode serializes no " + o.getClass().getName());
    }

    @Override
    public boolean includeManifest() {
      return false;
    }

    @Override
    public Object fromBinary(byte[] bytes, scala.Option<Class<?>> manifest) {
      throw new UnsupportedOperationException("a node out of cluster mode deserializes nothing");
    }

    @Override
    public Object fromBinary(byte[] bytes) {
      return fromBinary(bytes, scala.Option.empty());
    }

    @Override
    public Object fromBinary(byte[] bytes, Class<?> clazz) {
      return fromBinary(bytes, scala.Option.empty());
    }
  }
}
