package io.shoal.server;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.admin.AdminToken;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.HeapBudget;
import io.shoal.cluster.ClusterNode;
import io.shoal.cluster.NodeStatus;
import io.shoal.dnssec.ValidatingUpstream;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.ClusterSettings;
import io.shoal.cache.lmdb.CacheShard;
import io.shoal.cache.CacheSettings;
import io.shoal.config.ConfigSource;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import io.shoal.loop.LoopDetector;
import io.shoal.loop.SelfUpstreamCheck;
import io.shoal.local.LocalData;
import io.shoal.metrics.PolicyMetrics;
import io.shoal.metrics.PrometheusEndpoint;
import io.shoal.metrics.ReloadMetrics;
import io.shoal.metrics.ServerMetrics;
import io.shoal.policy.ResponsePolicy;
import io.shoal.ratelimit.ResponseRateLimiter;
import io.shoal.reload.ConfigReload;
import io.shoal.transport.TcpTransport;
import io.shoal.transport.UdpTransport;
import io.shoal.upstream.DescriptorBudget;
import io.shoal.upstream.UpstreamSelector;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running shoal node: the actor system with its workers and upstream clients, the caches
 * (both built by {@link Resolver}), and the UDP and TCP listeners, wired as docs/queries.md, "What
 * shoal does with a query" describes, with an orderly shutdown through Akka's CoordinatedShutdown
 * ({@link OrderlyShutdown}: lameduck, stop accepting, finish in-flight queries, close). In
 * cluster mode a {@link ClusterNode} holds the node's membership in an actor system of its own, so
 * being downed never stops the DNS service.
 */
public final class ShoalServer {
  private static final Logger log = LoggerFactory.getLogger(ShoalServer.class);

  private final ActorSystem<Void> system;
  private final UdpTransport udp;
  private final TcpTransport tcp;
  private final String metricsEndpoint;
  private final InetSocketAddress adminAddress;
  private final OwnerDirectory owners;
  private final NodeStatus status;
  private final ClusterNode clusterNode;
  private final EncryptedListeners encrypted;
  private final ConfigReload reload;

  private ShoalServer(
      ActorSystem<Void> system, UdpTransport udp, TcpTransport tcp, String metricsEndpoint,
      InetSocketAddress adminAddress, OwnerDirectory owners, NodeStatus status, ClusterNode clusterNode,
      EncryptedListeners encrypted, ConfigReload reload) {
    this.reload = reload;
    this.encrypted = encrypted;
    this.status = status;
    this.clusterNode = clusterNode;
    this.adminAddress = adminAddress;
    this.owners = owners;
    this.system = system;
    this.udp = udp;
    this.tcp = tcp;
    this.metricsEndpoint = metricsEndpoint;
  }

  /** Starts a node; throws {@link StartupException} with an operator-readable message. */
  public static ShoalServer start(Config raw, ShoalConfig config, LongSupplier clock) {
    return start(raw, config, clock, CacheShard.Opener.FILES);
  }

  /**
   * Starts a node whose LMDB shards open their stores through {@code lmdbStores}: their files
   * ({@link CacheShard.Opener#FILES}), or in a test a store that fails on cue.
   */
  public static ShoalServer start(Config raw, ShoalConfig config, LongSupplier clock, CacheShard.Opener lmdbStores) {
    return start(raw, config, clock, lmdbStores, ConfigSource.fixed(raw));
  }

  /**
   * The configuration a node's actor system is made from: its shutdown phases and a 20 ms
   * scheduler tick over {@code raw}, and out of cluster mode {@link StandaloneAkka}'s set-up.
   */
  static Config akkaConfig(Config raw, ShoalConfig config) {
    Config akka = OrderlyShutdown.phases(config)
        // Akka's scheduler thread wakes every tick whether or not a timer is due: at Akka's 10 ms
        // that was about 7 ms of CPU a second on an idle node here (a wake-up costs tens of
        // microseconds on a virtual machine), a share that matters under a fraction of a CPU. This
        // system's timers (serve-stale's client wait, LMDB's commit window, the shutdown's polls)
        // keep 20 ms granularity.
        .withFallback(ConfigFactory.parseMap(Map.of("akka.scheduler.tick-duration", "20ms")))
        .withFallback(raw);
    return config.cluster().enabled() ? akka : StandaloneAkka.of(akka);
  }

  /**
   * Starts a node that reloads its configuration from {@code source} ({@link #reload}); {@code
   * raw} is what the source gave at start, {@code config} its validated form.
   */
  public static ShoalServer start(
      Config raw, ShoalConfig config, LongSupplier clock, CacheShard.Opener lmdbStores, ConfigSource source) {
    ClusterSettings cluster = config.cluster();
    SelfUpstreamCheck.refuse(config);
    String heapShort = HeapBudget.shortfall(config, Runtime.getRuntime().maxMemory());
    if (heapShort != null) {
      log.warn(heapShort);
    }
    Config akkaConfig = akkaConfig(raw, config);
    String metricsEndpoint = PrometheusEndpoint.init(
        raw, config.metricsEnabled(), config.metricsHost(), config.metricsPort());
    String node = cluster.enabled() ? cluster.nodeLabel() : null;
    ServerMetrics metrics = node == null ? new ServerMetrics() : new ServerMetrics(node);
    LoopDetector loops = new LoopDetector(config, node);
    // Local data and the response policy are read before any socket binds: a bad file exits 2.
    LocalData local;
    ResponsePolicy responsePolicy;
    try {
      local = LocalData.load(config.local());
      responsePolicy = ResponsePolicy.load(config.policy(), new PolicyMetrics(node));
    } catch (InvalidConfigException e) {
      throw e;
    } catch (RuntimeException | OutOfMemoryError | StackOverflowError e) {
      // One line and exit 2, never a stack trace or a main thread gone with the JVM left running.
      throw new InvalidConfigException("shoal.local, shoal.policy", ConfigReload.reason(e));
    }
    // A certificate that cannot be used is a configuration error: found before any socket is bound.
    EncryptedListeners encrypted = EncryptedListeners.load(config.tls());
    // The admin token file is written before any DNS socket binds, so a client that sees the node
    // answer finds the token to manage it (with admin port 0 and a file named for the port, the
    // name is known, and the file written, once the port is bound).
    AdminToken adminToken = AdminToken.fresh();
    Path earlyToken = NodeAdmin.writeEarlyToken(config, adminToken);
    // The DNS sockets are bound before anything reports the node up (/metrics, readiness, the
    // log); queries that arrive while the rest starts wait in the kernel's buffers, not lost.
    UdpTransport udp;
    try {
      udp = UdpTransport.bind(config.udpListen(), config.udpSockets(), config.udpBatch(), config.udpQueueTime(),
          config.udpBatchWait(), metrics,
          new ResponseRateLimiter(config.rateLimit(), metrics));
    } catch (IOException e) {
      NodeAdmin.forget(earlyToken);
      throw new StartupException("cannot listen on UDP " + config.udpListen() + ": " + e.getMessage());
    }
    UpstreamSelector upstreamSockets;
    try {
      upstreamSockets = new UpstreamSelector(DescriptorBudget.upstreamSockets(config), metrics);
    } catch (IOException e) {
      udp.close();
      NodeAdmin.forget(earlyToken);
      throw new StartupException("cannot open the upstream selector: " + e.getMessage());
    }
    NodeStatus status = new NodeStatus();
    if (cluster.enabled() && !cluster.joinWait().isZero()) {
      // From before the first query is read: a node back from being away must not answer from a
      // cache (its LMDB kept what it held) before it has applied the flushes made meanwhile.
      status.flushesPending(true);
    }
    CompletableFuture<Resolver> wired = new CompletableFuture<>();
    ActorSystem<Void> system = ActorSystem.create(
        Behaviors.setup(ctx -> {
          try {
            wired.complete(Resolver.build(ctx, config, clock, metrics, node, upstreamSockets, loops, lmdbStores,
                local, responsePolicy, status));
          } catch (RuntimeException e) {
            wired.completeExceptionally(e);
          }
          return Behaviors.empty();
        }),
        "shoal",
        akkaConfig);
    Resolver resolver = null;
    ClusterNode clusterNode = null;
    String step = "start";
    try {
      resolver = wired.get(30, TimeUnit.SECONDS);
      status.cachesOpen(true);
      step = "listen on TCP " + config.tcpListen();
      TcpTransport tcp = TcpTransport.bind(system, config.tcpListen(), config.tcp(), resolver.ingress(), metrics)
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      step = "listen for DNS over TLS or HTTPS";
      encrypted.bind(system, config, resolver.ingress(), metrics);
      udp.serve(resolver.ingress());
      status.socketsBound(true);
      resolver.ingress().plan().loops().start(upstreamSockets, system);
      Resolver live = resolver;
      // Said at start, in the log and on /ready, not first by a client's SERVFAIL.
      ValidatingUpstream.checkUpstreams(resolver.ingress().plan().profiles().upstreams());
      status.warnings(() -> ValidatingUpstream.dnssecProblems(live.ingress().plan().profiles().upstreams()));
      if (cluster.enabled()) {
        step = "start the cluster (management " + cluster.managementHost() + ":" + cluster.managementPort()
            + ", remoting " + cluster.remotingHost() + ":" + cluster.remotingPort() + ")";
        clusterNode = ClusterNode.start(system, raw, cluster,
            new ClusterNode.Services(udp.localAddress(), tcp.localAddress(), resolver.caches(), resolver.owners(), status, node,
                longestMaxTtl(config), () -> live.ingress().plan().profiles(), clock, resolver.plans().denials(),
                name -> NodeAdmin.flushRecursion(live, name)));
      }
      ConfigReload reload = new ConfigReload(source, raw,
          (next, changed) -> LiveReconfiguration.apply(next, live, udp, metrics, encrypted), new ReloadMetrics(node));
      if (config.reloadWatch()) {
        reload.watch(system);
      }
      InetSocketAddress admin = null;
      if (config.admin().enabled()) {
        step = "listen on admin HTTP " + config.admin().host() + ":" + config.admin().port();
        admin = NodeAdmin.start(system, config, resolver, clusterNode, clock, reload, adminToken);
      }
      step = "serve metrics on " + config.metricsHost() + ":" + config.metricsPort();
      PrometheusEndpoint.serve();
      ShoalServer server = new ShoalServer(
          system, udp, tcp, metricsEndpoint, admin, resolver.owners(), status, clusterNode, encrypted, reload);
      new OrderlyShutdown(system, udp, tcp, resolver.ingress(), status, clusterNode)
          .register(config, resolver.caches(), upstreamSockets);
      logStarted(udp, tcp.localAddress(), config.metricsEnabled() ? metricsEndpoint : null);
      return server;
    } catch (Exception e) {
      encrypted.close();
      udp.stopReading();
      udp.close();
      if (clusterNode != null) {
        clusterNode.leave();
      }
      if (resolver != null) {
        // Release the caches' directories (LMDB cache locks) before the system goes.
        for (AnswerCache c : resolver.caches()) {
          c.close();
        }
      }
      system.terminate();
      upstreamSockets.close();
      NodeAdmin.forget(earlyToken);
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      if (cause instanceof StartupException se) {
        throw se;
      }
      throw new StartupException("cannot " + step + ": " + cause.getMessage());
    }
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

  public InetSocketAddress udpAddress() {
    return udp.localAddress();
  }

  public InetSocketAddress tcpAddress() {
    return tcp.localAddress();
  }

  /** The DNS over TLS listener's address, or null when it is off. */
  public InetSocketAddress tlsAddress() {
    return encrypted.dotAddress();
  }

  /** The DNS over HTTPS listener's address, or null when it is off. */
  public InetSocketAddress httpsAddress() {
    return encrypted.dohAddress();
  }

  /** The node this one asks for {@code key}'s answer; null when it answers the key itself. */
  public OwnerDirectory.Owner ownerOf(io.shoal.wire.CacheKey key) {
    return owners.ownerOf(key);
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

  /** Where /ready, /alive and cluster bootstrap are served (null when cluster mode is off). */
  public InetSocketAddress managementAddress() {
    return clusterNode == null ? null : clusterNode.managementAddress();
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

  /**
   * Reads the configuration again from where it came from and applies what can change live (see
   * {@link ConfigReload}); a config that cannot be applied is refused whole, the running one kept.
   */
  public ConfigReload.Outcome reload(String trigger) {
    return reload.reload(trigger);
  }

  /** Applies {@code candidate}, a resolved configuration, as {@link #reload(String)} applies a re-read one. */
  public ConfigReload.Outcome reload(String trigger, Config candidate) {
    return reload.reload(trigger, candidate);
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
