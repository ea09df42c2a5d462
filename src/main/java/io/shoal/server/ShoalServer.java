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
import io.shoal.access.AccessControl;
import io.shoal.admin.AdminEndpoint;
import io.shoal.cache.AnswerCache;
import io.shoal.cluster.ClusterNode;
import io.shoal.cluster.NodeStatus;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.ClusterSettings;
import io.shoal.cache.TtlRules;
import io.shoal.cache.WhenFull;
import io.shoal.cache.lmdb.CacheInUseException;
import io.shoal.cache.lmdb.CacheShard;
import io.shoal.cache.lmdb.LmdbAnswerCache;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.cache.CacheSettings;
import io.shoal.config.ProfileSettings;
import io.shoal.config.ShoalConfig;
import io.shoal.config.UpstreamGroupSettings;
import io.shoal.dnssec.ValidatingUpstream;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.IngressWorker;
import io.shoal.ingress.Prefetch;
import io.shoal.loop.LoopDetector;
import io.shoal.loop.SelfUpstreamCheck;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.DnssecMetrics;
import io.shoal.metrics.PrometheusEndpoint;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.ratelimit.ResponseRateLimiter;
import io.shoal.transport.TcpTransport;
import io.shoal.transport.UdpTransport;
import io.shoal.upstream.DescriptorBudget;
import io.shoal.upstream.Upstream;
import io.shoal.upstream.UpstreamGroup;
import io.shoal.upstream.UpstreamSelector;
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
 * and the UDP and TCP listeners, wired as README.md's "What shoal does with a query" describes,
 * with an orderly shutdown through Akka's CoordinatedShutdown (lameduck, stop accepting, finish
 * in-flight queries, close). In cluster mode a {@link ClusterNode} holds the node's membership
 * in an actor system of its own, so being downed never stops the DNS service.
 */
public final class ShoalServer {
  private static final Logger log = LoggerFactory.getLogger(ShoalServer.class);
  /** The cache label of the near cache (copies of answers other cluster nodes own). */
  private static final String NEAR_CACHE = "near";

  private final ActorSystem<Void> system;
  private final UdpTransport udp;
  private final TcpTransport tcp;
  private final Ingress ingress;
  private final String metricsEndpoint;
  private final InetSocketAddress adminAddress;
  private final OwnerDirectory owners;
  private final NodeStatus status;
  private final ClusterNode clusterNode;

  private ShoalServer(
      ActorSystem<Void> system, UdpTransport udp, TcpTransport tcp, Ingress ingress, String metricsEndpoint,
      InetSocketAddress adminAddress, OwnerDirectory owners, NodeStatus status, ClusterNode clusterNode) {
    this.status = status;
    this.clusterNode = clusterNode;
    this.adminAddress = adminAddress;
    this.owners = owners;
    this.system = system;
    this.udp = udp;
    this.tcp = tcp;
    this.ingress = ingress;
    this.metricsEndpoint = metricsEndpoint;
  }

  /** What the guardian built: the ingress and everything that must be closed at the end. */
  private record Wiring(Ingress ingress, List<AnswerCache> caches, OwnerDirectory owners) {}

  /** Starts a node; throws {@link StartupException} with an operator-readable message. */
  public static ShoalServer start(Config raw, ShoalConfig config, LongSupplier clock) {
    return start(raw, config, clock, CacheShard.Opener.FILES);
  }

  /**
   * Starts a node whose LMDB shards open their stores through {@code lmdbStores}: their files
   * ({@link CacheShard.Opener#FILES}), or in a test a store that fails on cue.
   */
  public static ShoalServer start(Config raw, ShoalConfig config, LongSupplier clock, CacheShard.Opener lmdbStores) {
    ClusterSettings cluster = config.cluster();
    SelfUpstreamCheck.refuse(config);
    Config akkaConfig = shutdownPhases(config)
        .withFallback(UdpTransport.readerDispatcher(config.udpSockets()))
        .withFallback(raw);
    String metricsEndpoint = PrometheusEndpoint.init(
        raw, config.metricsEnabled(), config.metricsHost(), config.metricsPort());
    String node = cluster.enabled() ? cluster.nodeLabel() : null;
    ServerMetrics metrics = node == null ? new ServerMetrics() : new ServerMetrics(node);
    LoopDetector loops = new LoopDetector(config, node);
    // The DNS sockets are bound before anything reports the node up (/metrics, readiness, the
    // log); queries that arrive while the rest starts wait in the kernel's buffers, not lost.
    UdpTransport udp;
    try {
      udp = UdpTransport.bind(config.udpListen(), config.udpSockets(), metrics,
          new ResponseRateLimiter(config.rateLimit(), metrics));
    } catch (IOException e) {
      throw new StartupException("cannot listen on UDP " + config.udpListen() + ": " + e.getMessage());
    }
    UpstreamSelector upstreamSockets;
    try {
      upstreamSockets = new UpstreamSelector(DescriptorBudget.upstreamSockets(config), metrics);
    } catch (IOException e) {
      udp.close();
      throw new StartupException("cannot open the upstream selector: " + e.getMessage());
    }
    CompletableFuture<Wiring> wired = new CompletableFuture<>();
    ActorSystem<Void> system = ActorSystem.create(
        Behaviors.setup(ctx -> {
          try {
            wired.complete(wire(ctx, config, clock, metrics, node, upstreamSockets, loops, lmdbStores));
          } catch (RuntimeException e) {
            wired.completeExceptionally(e);
          }
          return Behaviors.empty();
        }),
        "shoal",
        akkaConfig);
    Wiring wiring = null;
    ClusterNode clusterNode = null;
    NodeStatus status = new NodeStatus();
    String step = "start";
    try {
      wiring = wired.get(30, TimeUnit.SECONDS);
      status.cachesOpen(true);
      step = "listen on TCP " + config.tcpListen();
      TcpTransport tcp = TcpTransport.bind(system, config.tcpListen(), config.tcp(), wiring.ingress(), metrics)
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      udp.serve(system, wiring.ingress());
      status.socketsBound(true);
      loops.start(upstreamSockets, system);
      if (cluster.enabled()) {
        step = "start the cluster (management " + cluster.managementHost() + ":" + cluster.managementPort()
            + ", remoting " + cluster.remotingHost() + ":" + cluster.remotingPort() + ")";
        clusterNode = ClusterNode.start(raw, cluster,
            new ClusterNode.Services(udp.localAddress(), tcp.localAddress(), wiring.caches(), wiring.owners(), status, node,
                longestMaxTtl(config)));
      }
      InetSocketAddress admin = null;
      if (config.admin().enabled()) {
        step = "listen on admin HTTP " + config.admin().host() + ":" + config.admin().port();
        admin = startAdmin(system, config, wiring, clusterNode);
      }
      step = "serve metrics on " + config.metricsHost() + ":" + config.metricsPort();
      PrometheusEndpoint.serve();
      ShoalServer server = new ShoalServer(
          system, udp, tcp, wiring.ingress(), metricsEndpoint, admin, wiring.owners(), status, clusterNode);
      server.registerShutdown(config, wiring.caches(), upstreamSockets);
      logStarted(udp, tcp.localAddress(), config.metricsEnabled() ? metricsEndpoint : null);
      return server;
    } catch (Exception e) {
      udp.stopReading();
      udp.close();
      if (clusterNode != null) {
        clusterNode.leave();
      }
      if (wiring != null) {
        // Release the caches' directories (LMDB cache locks) before the system goes.
        for (AnswerCache c : wiring.caches()) {
          c.close();
        }
      }
      system.terminate();
      upstreamSockets.close();
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      if (cause instanceof StartupException se) {
        throw se;
      }
      throw new StartupException("cannot " + step + ": " + cause.getMessage());
    }
  }

  /**
   * Timeouts of the shutdown phases that wait on purpose: the lameduck, the in-flight queries,
   * and leaving the cluster (Akka's default of 5 s per phase would cut the first two short).
   */
  private static Config shutdownPhases(ShoalConfig config) {
    String phases = "akka.coordinated-shutdown.phases.";
    return ConfigFactory.parseMap(Map.of(
        phases + "before-service-unbind.timeout", (config.shutdownLameduck().toMillis() + 1000) + "ms",
        phases + "service-requests-done.timeout", (config.shutdownGrace().toMillis() + 1000) + "ms",
        phases + "cluster-leave.timeout", "20s"));
  }

  /** How long a flush must be remembered: no answer outlives the longest max_ttl. */
  private static Duration longestMaxTtl(ShoalConfig config) {
    Duration longest = Duration.ZERO;
    for (CacheSettings c : config.caches().values()) {
      longest = c.maxTtl().compareTo(longest) > 0 ? c.maxTtl() : longest;
    }
    return longest;
  }

  private static void logStarted(UdpTransport udp, InetSocketAddress tcp, String metricsEndpoint) {
    log.info("shoal answering on udp {} ({} sockets) and tcp {}; {}", udp.localAddress(), udp.socketCount(), tcp,
        metricsEndpoint == null ? "metrics off" : "metrics at http://" + metricsEndpoint + "/metrics");
  }

  private static Wiring wire(
      ActorContext<Void> ctx, ShoalConfig config, LongSupplier clock, ServerMetrics metrics, String node,
      UpstreamSelector upstreamSockets, LoopDetector loops, CacheShard.Opener lmdbStores) {
    Map<String, Upstream> upstreams = new HashMap<>();
    DnssecMetrics dnssecMetrics = new DnssecMetrics(node);
    for (UpstreamGroupSettings group : config.upstreams().values()) {
      upstreams.put(group.name(), ValidatingUpstream.wrap(config.dnssec(),
          loops.guard(group.name(), new UpstreamGroup(group, upstreamSockets, metrics)), clock, dnssecMetrics));
    }
    Map<String, AnswerCache> caches = new LinkedHashMap<>();
    Map<String, CacheMetrics> cacheMetrics = new HashMap<>();
    for (CacheSettings c : config.caches().values()) {
      CacheMetrics m = new CacheMetrics(c.name(), c.backend().configName(), node);
      cacheMetrics.put(c.name(), m);
      caches.put(c.name(), openCache(ctx, c, m, lmdbStores));
    }
    Map<String, Profile> bySuffix = new HashMap<>();
    for (ProfileSettings p : config.profiles()) {
      CacheSettings c = config.cache(p.cache());
      UpstreamGroupSettings group = config.upstreams().get(p.upstreams());
      Profile profile = new Profile(p.name(), caches.get(c.name()), cacheMetrics.get(c.name()),
          new TtlRules(c), upstreams.get(group.name()));
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
    List<AnswerCache> cacheList = new ArrayList<>(caches.values());
    long nearEntries = config.cluster().nearCacheMaxEntries();
    if (config.cluster().enabled()) {
      MemoryAnswerCache near = null;
      CacheMetrics nearMetrics = null;
      if (nearEntries > 0) {
        nearMetrics = new CacheMetrics(NEAR_CACHE, "memory", node);
        near = new MemoryAnswerCache(NEAR_CACHE, nearEntries, WhenFull.EVICT_ONE, nearMetrics);
        // Listed with the caches so flushes reach it; not in the map, where profiles pick caches by name.
        cacheList.add(near);
      }
      owners = new OwnerDirectory(upstreamSockets, near, nearMetrics);
    }
    Duration ownerTimeout = config.cluster().ownerTimeout();
    Prefetch prefetch = config.prefetch()
        ? new Prefetch(true, config.workers() * config.maxPendingPerWorker()) : Prefetch.OFF;
    for (int i = 0; i < config.workers(); i++) {
      pending[i] = new AtomicInteger();
      workers.add(ctx.spawn(
          Behaviors.supervise(IngressWorker.create(table, config.fill(), clock, pending[i], metrics, owners, ownerTimeout,
                  config.serveStale(), prefetch))
              .onFailure(SupervisorStrategy.restart().withLoggingEnabled(false)),
          "ingress-" + i));
    }
    Ingress ingress = new Ingress(table, clock, workers, pending, config.maxPendingPerWorker(), metrics,
        longest.plus(ownerTimeout).plusSeconds(1), new AccessControl(config.accessControl(), metrics), config.replies(),
        prefetch, loops, owners);
    return new Wiring(ingress, List.copyOf(cacheList), owners);
  }

  /**
   * Flushes here at once (to report a count) and, in cluster mode, adds the flush to the
   * cluster's record, which every node applies (now, or when it is back if it is away).
   */
  private static InetSocketAddress startAdmin(
      ActorSystem<Void> system, ShoalConfig config, Wiring wiring, ClusterNode clusterNode) throws Exception {
    return AdminEndpoint.start(system, config.admin(), (name, qtype) -> {
      CompletableFuture<Integer> removed = CompletableFuture.completedFuture(0);
      for (AnswerCache c : wiring.caches()) {
        removed = removed.thenCombine(c.flushName(name, qtype), Integer::sum);
      }
      CompletionStage<Boolean> everyNode = clusterNode == null
          ? CompletableFuture.completedFuture(null)
          : clusterNode.recordFlush(name, qtype);
      return removed.thenCombine(everyNode, (n, all) -> new AdminEndpoint.Flushed(n, clusterNode != null, all));
    }).toCompletableFuture().get(30, TimeUnit.SECONDS).localAddress();
  }

  private static AnswerCache openCache(
      ActorContext<Void> ctx, CacheSettings c, CacheMetrics metrics, CacheShard.Opener lmdbStores) {
    return switch (c.backend()) {
      case MEMORY -> new MemoryAnswerCache(c.name(), c.maxEntries(), c.whenFull(), metrics);
      case LMDB -> {
        try {
          yield LmdbAnswerCache.open(ctx, c, metrics, lmdbStores);
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

  /**
   * SIGTERM's order: the lameduck (readiness fails, DNS still answered), stop reading, finish
   * what is in flight, close the listeners, leave the cluster, close the caches.
   */
  private void registerShutdown(ShoalConfig config, List<AnswerCache> caches, UpstreamSelector upstreamSockets) {
    CoordinatedShutdown cs = CoordinatedShutdown.get(system);
    cs.addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "lameduck", () -> lameduck(config.shutdownLameduck()));
    cs.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "stop-accepting", () ->
        udp.stopReading().thenCombine(tcp.unbind(), (a, b) -> Done.getInstance()));
    cs.addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "finish-in-flight", () -> drained(config.shutdownGrace()));
    cs.addTask(CoordinatedShutdown.PhaseServiceStop(), "close-listeners", () -> {
      upstreamSockets.close();
      return udp.close();
    });
    if (clusterNode != null) {
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

  /** Whether the node takes traffic: what /ready reports in cluster mode. */
  public boolean ready() {
    return status.ready();
  }

  /** The actor system of the node's cluster membership now (null when cluster mode is off). */
  public ActorSystem<Void> clusterSystem() {
    return clusterNode == null ? null : clusterNode.system();
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
