package io.shoal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializer;
import akka.stream.SystemMaterializer$;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An actor system out of cluster mode starts with Akka's basic serializers only: none of the
 * cluster's, remoting's or Jackson's is made (each would load its classes), and a message that
 * would have needed one is refused rather than sent. Its stream materializer is made when a stream
 * first runs, not at start.
 */
class StandaloneAkkaTest {
  @Test
  void onlyAkkasBasicSerializersAreMadeAndTheRestRefuse() {
    Config config = StandaloneAkka.of(ConfigFactory.load());
    for (Map.Entry<String, Object> e : config.getObject("akka.actor.serializers").unwrapped().entrySet()) {
      String serializer = String.valueOf(e.getValue());
      assertTrue(serializer.equals(StandaloneAkka.Unused.class.getName())
          || serializer.startsWith("akka.serialization.") && !serializer.startsWith("akka.serialization.jackson."),
          e.getKey() + " = " + serializer);
    }
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "local-serializers", config);
    try {
      Serialization serialization = SerializationExtension.get(Adapter.toClassic(system));
      // Akka's own basic ones still serve what they served.
      assertEquals("akka.serialization.StringSerializer",
          serialization.findSerializerFor("a string").getClass().getName());
      // An actor ref, which only leaves the JVM in a cluster, has no serializer that would send it.
      Serializer forRef = serialization.findSerializerFor(system.ignoreRef());
      assertThrows(RuntimeException.class, () -> forRef.toBinary(system.ignoreRef()));
    } finally {
      system.terminate();
    }
  }

  @Test
  void theStreamMaterializerIsMadeWhenAStreamFirstRunsNotAtStart() throws Exception {
    Config config = ConfigFactory.load();
    assertTrue(config.getStringList("akka.library-extensions").contains(StandaloneAkka.STREAM_MATERIALIZER),
        "akka-stream's jar lists its materializer among the extensions made at start");
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "standalone-streams", StandaloneAkka.of(config));
    try {
      akka.actor.ActorSystem classic = Adapter.toClassic(system);
      assertFalse(classic.hasExtension(SystemMaterializer$.MODULE$), "made at start");
      // An upstream over TLS streams on a node on its own: the materializer comes when it runs.
      assertEquals(3, Source.from(List.of(1, 2)).runWith(Sink.fold(0, Integer::sum), system)
          .toCompletableFuture().get(10, TimeUnit.SECONDS));
      assertTrue(classic.hasExtension(SystemMaterializer$.MODULE$), "made on first use");
    } finally {
      system.terminate();
    }
  }
}
