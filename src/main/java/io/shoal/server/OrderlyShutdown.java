package io.shoal.server;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.cache.AnswerCache;
import io.shoal.cluster.ClusterNode;
import io.shoal.cluster.NodeStatus;
import io.shoal.config.ShoalConfig;
import io.shoal.ingress.Ingress;
import io.shoal.transport.TcpTransport;
import io.shoal.transport.UdpTransport;
import io.shoal.upstream.UpstreamSelector;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's orderly shutdown as tasks of Akka's CoordinatedShutdown: the lameduck, stop accepting,
 * finish in-flight queries, close the listeners, leave the cluster, close the caches.
 */
final class OrderlyShutdown {
  private static final Logger log = LoggerFactory.getLogger(OrderlyShutdown.class);

  private final ActorSystem<Void> system;
  private final UdpTransport udp;
  private final TcpTransport tcp;
  private final Ingress ingress;
  private final NodeStatus status;
  private final ClusterNode clusterNode;
  /** The longest a stopping node spends handing its answers over before it goes on stopping. */
  static final Duration HAND_OVER_LIMIT = Duration.ofSeconds(10);

  /** @param clusterNode null when cluster mode is off */
  OrderlyShutdown(
      ActorSystem<Void> system, UdpTransport udp, TcpTransport tcp, Ingress ingress, NodeStatus status,
      ClusterNode clusterNode) {
    this.system = system;
    this.udp = udp;
    this.tcp = tcp;
    this.ingress = ingress;
    this.status = status;
    this.clusterNode = clusterNode;
  }

  /**
   * Timeouts of the shutdown phases that wait on purpose: the lameduck, the in-flight queries,
   * and leaving the cluster (Akka's default of 5 s per phase would cut the first two short).
   */
  static Config phases(ShoalConfig config) {
    String phases = "akka.coordinated-shutdown.phases.";
    return ConfigFactory.parseMap(Map.of(
        phases + "before-service-unbind.timeout",
        (Math.max(config.shutdownLameduck().toMillis(), HAND_OVER_LIMIT.plus(ClusterNode.WITHDRAW_MOST).toMillis())
            + 1000) + "ms",
        phases + "service-requests-done.timeout", (config.shutdownGrace().toMillis() + 1000) + "ms",
        phases + "cluster-leave.timeout", "20s"));
  }

  /**
   * SIGTERM's order: the lameduck (readiness fails, DNS still answered) and, in a cluster, the
   * hand-over of the node's answers (warm join) beside it, stop reading, finish
   * what is in flight, close the listeners, leave the cluster, close the caches.
   */
  void register(ShoalConfig config, List<AnswerCache> caches, UpstreamSelector upstreamSockets) {
    CoordinatedShutdown cs = CoordinatedShutdown.get(system);
    cs.addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "lameduck", () -> {
      // In a cluster the hand-over, beside the lameduck, reads the answers this node owns; one it
      // refreshed after that would stay behind, and the next owner would fetch the name again.
      ingress.stopPrefetching();
      return lameduck(config.shutdownLameduck());
    });
    cs.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "stop-accepting", () ->
        udp.stopReading().thenCombine(tcp.unbind(), (a, b) -> Done.getInstance()));
    cs.addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "finish-in-flight", () -> drained(config.shutdownGrace()));
    cs.addTask(CoordinatedShutdown.PhaseServiceStop(), "close-listeners", () -> {
      upstreamSockets.close();
      return udp.close();
    });
    if (clusterNode != null) {
      // Beside the lameduck: the node still answers DNS, its peers' owner lookups too, while its
      // answers go to the nodes that own them once it has left.
      cs.addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "hand-over", () -> clusterNode.handOver(HAND_OVER_LIMIT));
      cs.addTask(CoordinatedShutdown.PhaseClusterLeave(), "leave-cluster", clusterNode::leave);
    }
    cs.addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "close-caches", () -> {
      for (AnswerCache c : caches) {
        c.close();
      }
      return CompletableFuture.completedFuture(Done.getInstance());
    });
  }

  /** Fails readiness at once, then keeps answering for {@code lameduck} before the unbind. */
  private CompletionStage<Done> lameduck(Duration lameduck) {
    status.lameduck(true);
    if (lameduck.isZero()) {
      return CompletableFuture.completedFuture(Done.getInstance());
    }
    log.info("stopping: readiness fails now; still answering DNS for the lameduck of {} ms", lameduck.toMillis());
    CompletableFuture<Done> over = new CompletableFuture<>();
    system.scheduler().scheduleOnce(lameduck, () -> over.complete(Done.getInstance()), system.executionContext());
    return over;
  }

  private CompletionStage<Done> drained(Duration grace) {
    CompletableFuture<Done> done = new CompletableFuture<>();
    long deadline = System.nanoTime() + grace.toNanos();
    pollDrained(done, deadline);
    return done;
  }

  private void pollDrained(CompletableFuture<Done> done, long deadline) {
    int left = ingress.pending();
    if (left == 0 || System.nanoTime() >= deadline) {
      if (left > 0) {
        log.warn("shutdown grace over with {} queries still unanswered", left);
      }
      done.complete(Done.getInstance());
      return;
    }
    system.scheduler().scheduleOnce(Duration.ofMillis(20), () -> pollDrained(done, deadline), system.executionContext());
  }
}
