package io.shoal.server;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import io.shoal.config.ConfigLoader;
import io.shoal.config.ShoalConfig;
import io.shoal.metrics.PrometheusEndpoint;
import java.util.Optional;

/**
 * An idle JVM holding only the bottom layers of a node's stack, for bench/footprint/idle.sh
 * (members with LAYER=...): what a node's resident set would be with nothing of the resolver on
 * top. It sits in the node's package to build the actor system from the configuration a node
 * builds it from (ShoalServer.akkaConfig, package-private); compiled by idle.sh against the jar
 * measured.
 *
 * <pre>
 *   java [the JVM options bin/shoal passes] -cp DIR:shoal.jar io.shoal.server.StackFloor LAYER SECONDS
 * </pre>
 *
 * <ul>
 *   <li>{@code jvm}: the JVM alone (nothing of the jar is loaded);
 *   <li>{@code akka}: the embedded configuration loaded, and an actor system made from it as
 *       ShoalServer makes a node's (no actor of shoal's in it);
 *   <li>{@code kamon}: that and Kamon with its Prometheus endpoint on a port the OS picks, started
 *       as a node starts them (no instrument of shoal's registered).
 * </ul>
 * Prints "ready LAYER" once it holds its layer, then waits SECONDS and exits by itself.
 */
public final class StackFloor {
  private StackFloor() {
  }

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 2 || !java.util.List.of("jvm", "akka", "kamon").contains(args[0])) {
      System.err.println("usage: StackFloor jvm|akka|kamon SECONDS");
      System.exit(2);
    }
    String layer = args[0];
    ActorSystem<Void> system = null;
    if (!layer.equals("jvm")) {
      Config raw = ConfigLoader.load(Optional.empty());
      if (layer.equals("kamon")) {
        PrometheusEndpoint.init(raw, true, "127.0.0.1", 0);
      }
      system = ActorSystem.create(Behaviors.empty(), "shoal", ShoalServer.akkaConfig(raw, ShoalConfig.from(raw)));
      if (layer.equals("kamon")) {
        PrometheusEndpoint.serve();
      }
    }
    System.out.println("ready " + layer);
    System.out.flush();
    Thread.sleep(Long.parseLong(args[1]) * 1000);
    if (system != null) {
      system.terminate();
    }
    System.exit(0);
  }
}
