package io.shoal.server;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.SupervisorStrategy;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import akka.actor.typed.pubsub.Topic;
import io.shoal.admin.AdminEndpoint;
import io.shoal.cache.AnswerCache;
import io.shoal.cluster.CacheFlush;
import io.shoal.cluster.ClusterBoot;
import io.shoal.cluster.Membership;
import io.shoal.cluster.NodeStatus;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.cluster.OwnerEndpoint;
import io.shoal.config.ClusterSettings;
import io.shoal.cache.TtlRules;
import io.shoal.cache.lmdb.CacheInUseException;
import io.shoal.cache.lmdb.LmdbAnswerCache;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.cache.CacheSettings;
import io.shoal.config.ProfileSettings;
import io.shoal.config.ShoalConfig;
import io.shoal.config.UpstreamGroupSettings;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.IngressWorker;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.PrometheusEndpoint;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.transport.TcpTransport;
import io.shoal.transport.UdpTransport;
import io.shoal.upstream.TcpExchange;
import io.shoal.upstream.UdpExchange;
import io.shoal.upstream.UpstreamClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running shoal node: the actor system with its workers and upstream clients, the caches,
 * and the UDP and TCP listeners, wired as README.md's "What shoal does with a query" describes, with an
 * orderly shutdown through Akka's
 * CoordinatedShutdown (stop accepting, finish in-flight queries, close).
 */
public final class ShoalServer {
  private static final Logger log = LoggerFactory.getLogger(ShoalServer.class);

  private final ActorSystem<Void> system;
  private final UdpTransport udp;
  private final TcpTransport tcp;
  private final Ingress ingress;
  private final String metricsEndpoint;
  private final InetSocketAddress adminAddress;
  private final OwnerDirectory owners;

  private ShoalServer(
      ActorSystem<Void> system, UdpTransport udp, TcpTransport tcp, Ingress ingress, String metricsEndpoint,
      InetSocketAddress adminAddress, OwnerDirectory owners) {
    this.adminAddress = adminAddress;
    this.owners = owners;
    this.system = system;
    this.udp = udp;
    this.tcp = tcp;
    this.ingress = ingress;
    this.metricsEndpoint = metricsEndpoint;
  }

  /** What the guardian built: the ingress and everything that must be closed at the end. */
  private record Wiring(
      Ingress ingress, List<AnswerCache> caches, ActorRef<Topic.Command<CacheFlush.Flush>> flushTopic,
      OwnerDirectory owners) {}

  /** Starts a node; throws {@link StartupException} with an operator-readable message. */
  public static ShoalServer start(Config raw, ShoalConfig config, LongSupplier clock) {
    Duration grace = config.shutdownGrace();
    ClusterSettings cluster = config.cluster();
    Config akkaConfig = ConfigFactory.parseMap(Map.of(
            "akka.coordinated-shutdown.phases.service-requests-done.timeout", (grace.toMillis() + 1000) + "ms"))
        .withFallback(cluster.enabled() ? ClusterBoot.akkaConfig(cluster) : ConfigFactory.empty())
        .withFallback(raw);
    String metricsEndpoint = PrometheusEndpoint.start(
        raw, config.metricsEnabled(), config.metricsHost(), config.metricsPort());
    String node = cluster.enabled() ? cluster.nodeLabel() : null;
    ServerMetrics metrics = node == null ? new ServerMetrics() : new ServerMetrics(node);
    UdpExchange udpExchange;
    try {
      udpExchange = new UdpExchange(8192, metrics);
    } catch (IOException e) {
      throw new StartupException("cannot open the upstream UDP selector: " + e.getMessage());
    }
    TcpExchange tcpExchange = new TcpExchange(4);
    CompletableFuture<Wiring> wired = new CompletableFuture<>();
    ActorSystem<Void> system = ActorSystem.create(
        Behaviors.setup(ctx -> {
          try {
            wired.complete(wire(ctx, config, clock, metrics, node, udpExchange, tcpExchange));
          } catch (RuntimeException e) {
            wired.completeExceptionally(e);
          }
          return Behaviors.empty();
        }),
        "shoal",
        akkaConfig);
    Wiring wiring = null;
    UdpTransport udp = null;
    String step = "start";
    try {
      wiring = wired.get(30, TimeUnit.SECONDS);
      NodeStatus.get(system).cachesOpen(true);
      if (cluster.enabled()) {
        step = "start cluster management on " + cluster.managementHost() + ":" + cluster.managementPort();
        ClusterBoot.start(system);
      }
      InetSocketAddress admin = null;
      if (config.admin().enabled()) {
        step = "listen on admin HTTP " + config.admin().host() + ":" + config.admin().port();
        admin = startAdmin(system, config, wiring);
      }
      step = "listen on UDP " + config.udpListen();
      udp = UdpTransport.bind(system, config.udpListen(), wiring.ingress(), metrics);
      step = "listen on TCP " + config.tcpListen();
      TcpTransport tcp = TcpTransport.bind(system, config.tcpListen(), wiring.ingress(), metrics)
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      ShoalServer server = new ShoalServer(system, udp, tcp, wiring.ingress(), metricsEndpoint, admin, wiring.owners());
      server.registerShutdown(grace, wiring.caches(), udpExchange, tcpExchange);
      log.info("shoal answering on udp {} and tcp {}; metrics at http://{}/metrics",
          udp.localAddress(), tcp.localAddress(), metricsEndpoint);
      return server;
    } catch (Exception e) {
      if (udp != null) {
        udp.stopReading();
        udp.close();
      }
      if (wiring != null) {
        // Release the caches' directories (LMDB cache locks) before the system goes.
        for (AnswerCache c : wiring.caches()) {
          c.close();
        }
      }
      system.terminate();
      udpExchange.close();
      tcpExchange.close();
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      if (cause instanceof StartupException se) {
        throw se;
      }
      throw new StartupException("cannot " + step + ": " + cause.getMessage());
    }
  }

  private static Wiring wire(
      ActorContext<Void> ctx, ShoalConfig config, LongSupplier clock, ServerMetrics metrics, String node,
      UdpExchange udpExchange, TcpExchange tcpExchange) {
    Map<String, ActorRef<UpstreamClient.Command>> upstreams = new HashMap<>();
    for (UpstreamGroupSettings group : config.upstreams().values()) {
      upstreams.put(group.name(), ctx.spawn(
          Behaviors.supervise(UpstreamClient.create(group, udpExchange, tcpExchange, metrics))
              .onFailure(SupervisorStrategy.restart()),
          "upstream-" + group.name()));
    }
    Map<String, AnswerCache> caches = new LinkedHashMap<>();
    Map<String, CacheMetrics> cacheMetrics = new HashMap<>();
    for (CacheSettings c : config.caches().values()) {
      CacheMetrics m = new CacheMetrics(c.name(), c.backend().configName(), node);
      cacheMetrics.put(c.name(), m);
      caches.put(c.name(), openCache(ctx, c, m));
    }
    Map<String, Profile> bySuffix = new HashMap<>();
    for (ProfileSettings p : config.profiles()) {
      CacheSettings c = config.cache(p.cache());
      UpstreamGroupSettings group = config.upstreams().get(p.upstreams());
      Profile profile = new Profile(p.name(), caches.get(c.name()), cacheMetrics.get(c.name()),
          new TtlRules(c), upstreams.get(group.name()), group.deadline());
      for (String suffix : p.match()) {
        bySuffix.put(suffix, profile);
      }
    }
    ProfileTable table = new ProfileTable(bySuffix);
    List<ActorRef<IngressWorker.Command>> workers = new ArrayList<>();
    AtomicInteger[] pending = new AtomicInteger[config.workers()];
    Duration longest = Duration.ZERO;
    for (UpstreamGroupSettings g : config.upstreams().values()) {
      longest = g.deadline().compareTo(longest) > 0 ? g.deadline() : longest;
    }
    OwnerDirectory owners = new OwnerDirectory();
    Duration ownerTimeout = config.cluster().ownerTimeout();
    for (int i = 0; i < config.workers(); i++) {
      pending[i] = new AtomicInteger();
      workers.add(ctx.spawn(
          Behaviors.supervise(IngressWorker.create(table, config.fill(), clock, pending[i], metrics, owners, ownerTimeout))
              .onFailure(SupervisorStrategy.restart().withLoggingEnabled(false)),
          "ingress-" + i));
    }
    Ingress ingress = new Ingress(workers, pending, config.maxPendingPerWorker(), metrics,
        ctx.getSystem().scheduler(), longest.plus(ownerTimeout).plusSeconds(1));
    List<AnswerCache> cacheList = List.copyOf(caches.values());
    ActorRef<Topic.Command<CacheFlush.Flush>> flushTopic = ctx.spawn(CacheFlush.topic(), "cache-flush-topic");
    ctx.spawn(CacheFlush.subscriber(flushTopic, cacheList), "cache-flush");
    if (config.cluster().enabled()) {
      ctx.spawn(OwnerEndpoint.create(ingress::resolveForPeer), "owner");
      ctx.spawn(Membership.create(owners, node), "membership");
    }
    return new Wiring(ingress, cacheList, flushTopic, owners);
  }

  /** Flushes here at once (to report a count), and publishes to every other node in cluster mode. */
  private static InetSocketAddress startAdmin(ActorSystem<Void> system, ShoalConfig config, Wiring wiring)
      throws Exception {
    boolean clustered = config.cluster().enabled();
    return AdminEndpoint.start(system, config.admin(), (name, qtype) -> {
      CompletableFuture<Integer> removed = CompletableFuture.completedFuture(0);
      for (AnswerCache c : wiring.caches()) {
        removed = removed.thenCombine(c.flushName(name, qtype), Integer::sum);
      }
      if (clustered) {
        wiring.flushTopic().tell(Topic.publish(new CacheFlush.Flush(name, qtype)));
      }
      return removed.thenApply(n -> String.format(
          "{\"name\":\"%s\",\"type\":%d,\"removed_here\":%d,\"cluster\":%s}", name, qtype, n, clustered));
    }).toCompletableFuture().get(30, TimeUnit.SECONDS).localAddress();
  }

  private static AnswerCache openCache(ActorContext<Void> ctx, CacheSettings c, CacheMetrics metrics) {
    return switch (c.backend()) {
      case MEMORY -> new MemoryAnswerCache(c.name(), c.maxEntries(), c.whenFull(), metrics);
      case LMDB -> {
        try {
          yield LmdbAnswerCache.open(ctx, c, metrics);
        } catch (CacheInUseException e) {
          throw new StartupException("shoal.caches." + c.name() + ".lmdb.path: " + e.getMessage()
              + "; a cache directory serves one cache of one node");
        } catch (UncheckedIOException e) {
          throw new StartupException("shoal.caches." + c.name() + ".lmdb.path: cannot use "
              + c.lmdb().path() + " (" + e.getCause() + ")");
        }
      }
    };
  }

  private void registerShutdown(
      Duration grace, List<AnswerCache> caches, UdpExchange udpExchange, TcpExchange tcpExchange) {
    CoordinatedShutdown cs = CoordinatedShutdown.get(system);
    cs.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "stop-accepting", () ->
        udp.stopReading().thenCombine(tcp.unbind(), (a, b) -> Done.getInstance()));
    cs.addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "finish-in-flight", () -> drained(grace));
    cs.addTask(CoordinatedShutdown.PhaseServiceStop(), "close-listeners", () -> {
      udpExchange.close();
      tcpExchange.close();
      return udp.close();
    });
    cs.addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "close-caches", () -> {
      for (AnswerCache c : caches) {
        c.close();
      }
      return CompletableFuture.completedFuture(Done.getInstance());
    });
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

  public InetSocketAddress udpAddress() {
    return udp.localAddress();
  }

  public InetSocketAddress tcpAddress() {
    return tcp.localAddress();
  }

  /** Nodes in this node's owner ring (0 when cluster mode is off). */
  public int ownerRingSize() {
    return owners.size();
  }

  /** The admin HTTP endpoint's bound address, or null when it is disabled. */
  public InetSocketAddress adminAddress() {
    return adminAddress;
  }

  /** The node's actor system; tests reach a node's actors by path through it. */
  public ActorSystem<Void> system() {
    return system;
  }

  /** host:port of the Prometheus endpoint in use by this process. */
  public String metricsEndpoint() {
    return metricsEndpoint;
  }

  /** Runs the coordinated shutdown; completes when the actor system has terminated. */
  public CompletionStage<Done> stop() {
    return CoordinatedShutdown.get(system).runAll(CoordinatedShutdown.unknownReason())
        .thenCompose(d -> system.getWhenTerminated());
  }

  public CompletionStage<Done> whenTerminated() {
    return system.getWhenTerminated();
  }
}
