package io.shoal.server;

import akka.serialization.Serializer;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The serializers of an actor system whose messages never leave the JVM (cluster mode off): Akka's
 * own basic ones, and {@link Unused} in place of the rest. Akka makes every configured serializer
 * when a system starts; those of the cluster, remoting, sharding, distributed data, streams and
 * Jackson come with their jars and, never used by a node on its own, cost it some thousand loaded
 * classes (docs/operating.md, "Memory"). Akka requires every serializer its jars name to be
 * configured, so they are replaced, not removed.
 */
final class LocalSerializers {
  private LocalSerializers() {
  }

  /**
   * {@code akka} with each serializer outside package akka.serialization (and Jackson's) replaced
   * by {@link Unused}, and the classes bound to them bound to Akka's byte-array serializer
   * instead (which serializes nothing else: Akka warns of its own classes bound to a serializer
   * that is not Akka's).
   */
  static Config basicOnly(Config akka) {
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
