package io.shoal.cluster;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.receptionist.Receptionist;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.japi.function.Function;
import com.typesafe.config.Config;
import io.shoal.cache.AnswerCache;
import io.shoal.dnssec.DenialProofs;
import io.shoal.config.WarmJoinSettings;
import io.shoal.metrics.ClusterMetrics;
import io.shoal.profile.ProfileTable;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's membership of the cluster. It runs in an actor system of its own, apart from the
 * one that answers DNS: that system joins through Cluster Bootstrap and hosts the owner endpoint,
 * the membership tracker and the record of flushes. When it is downed (the split-brain resolver on the
 * minority side, a failed join) it terminates; the node then serves on its own, owner lookups
 * off, and a fresh system joins again after a back-off. DNS is answered throughout, and so are
 * /ready and /alive: the management port is bound in the node's own system ({@link ManagementPort})
 * and hands only Akka Management's routes to the membership system of the moment.
 */
public final class ClusterNode {
  private static final Logger log = LoggerFactory.getLogger(ClusterNode.class);
  private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
  private static final Duration LONGEST_RETRY = Duration.ofSeconds(30);

  /**
   * What the cluster side needs from the node it belongs to.
   *
   * @param dnsUdp, dnsTcp where the node answers DNS: other nodes ask it there for the keys it owns
   * @param caches every cache of the node, near copies included
   * @param profiles the profiles now, which say which cache an answer warm join brings goes to
   * @param clock epoch milliseconds, as the caches count them
   * @param denials the node's kept DNSSEC denials, shared with the other nodes
   * @param recursionFlush forgets what the node's resolving groups learnt at or below a flushed
   *     name (delegations, addresses, kept records), when a flush made anywhere in the cluster is applied
   */
  public record Services(
      InetSocketAddress dnsUdp,
      InetSocketAddress dnsTcp,
      List<AnswerCache> caches,
      OwnerDirectory owners,
      NodeStatus status,
      String nodeLabel,
      Duration flushRetention,
      Supplier<ProfileTable> profiles,
      LongSupplier clock,
      DenialProofs denials,
      Consumer<String> recursionFlush) {}

  /** One incarnation: its actor system, the flush record in it, and its Akka Management routes. */
  private record Incarnation(
      ActorSystem<Void> system, ActorRef<FlushRecord.Command> flushes, ActorRef<WarmJoin.Command> warmJoin,
      ActorRef<OwnerEndpoint.WhereIsDns> ownerEndpoint,
      Function<HttpRequest, CompletionStage<HttpResponse>> managementRoutes) {}

  /**
   * How long a stopping node waits at most, after it withdrew from the owner ring, for every other
   * node to say that its ring dropped it. The receptionist writes the withdrawal to every node at
   * once and they hear of it within Distributed Data's 100 ms notification interval, but a busy
   * host (a JIT, a full core) can delay that past any fixed wait: so it is asked, not assumed.
   */
  static final Duration WITHDRAW_CONFIRM_LIMIT = Duration.ofSeconds(5);
  /** How often the other nodes are asked, until every one confirms (or the limit passes). */
  private static final Duration WITHDRAW_POLL = Duration.ofMillis(100);
  /**
   * How long a stopping node keeps answering DNS once every other node has dropped it from its
   * ring: lookups they sent just before arrive and are answered.
   */
  static final Duration WITHDRAW_SETTLE = Duration.ofSeconds(1);
  /** The longest a withdrawal takes: confirmation, then the settle. */
  public static final Duration WITHDRAW_MOST = WITHDRAW_CONFIRM_LIMIT.plus(WITHDRAW_SETTLE);

  /** Set once by {@link #start}, before the first incarnation. */
  private Config akkaConfig;
  /** Set once by {@link #start}: bound before the first incarnation, closed after the last. */
  private ServerBinding managementPort;
  private final Services services;
  private final Duration joinWait;
  private final WarmJoinSettings warmJoin;
  private final ClusterMetrics metrics;
  private volatile Incarnation current;
  private volatile boolean leaving;
  private Duration nextRetry = FIRST_RETRY;

  private ClusterNode(Services services, Duration joinWait, WarmJoinSettings warmJoin, ClusterMetrics metrics) {
    this.joinWait = joinWait;
    this.warmJoin = warmJoin;
    this.services = services;
    this.metrics = metrics;
  }

  /**
   * Binds the management port in {@code nodeSystem} (the system that answers DNS) and starts the
   * first incarnation; throws what Akka throws when it cannot (e.g. the remoting or management
   * port is taken), so a node that cannot cluster at all fails its start.
   */
  public static ClusterNode start(
      ActorSystem<?> nodeSystem, Config raw, io.shoal.config.ClusterSettings settings, Services services) {
    if (settings.discovery() == io.shoal.config.ClusterSettings.Discovery.KUBERNETES_API) {
      ClusterBoot.requireServiceAccount(ClusterBoot.akkaConfig(settings, settings.managementPort()).withFallback(raw));
    }
    ClusterNode node = new ClusterNode(services, settings.joinWait(), settings.warmJoin(), new ClusterMetrics(services.nodeLabel()));
    try {
      node.managementPort = ManagementPort.bind(nodeSystem, settings.managementHost(), settings.managementPort(),
          services.status(), node::managementRoutes).toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new IllegalStateException("cannot listen on the management port " + settings.managementHost() + ":"
          + settings.managementPort() + ": " + cause.getMessage(), cause);
    }
    // Bootstrap tells other nodes the port that is bound (the OS's pick when the setting is 0).
    node.akkaConfig = ClusterBoot.akkaConfig(settings, node.managementPort.localAddress().getPort()).withFallback(raw);
    try {
      node.current = node.incarnate(node.joinWait);
    } catch (RuntimeException e) {
      node.managementPort.unbind();
      throw e;
    }
    return node;
  }

  /** Akka Management's routes in the membership system now, or null while there is none. */
  private Function<HttpRequest, CompletionStage<HttpResponse>> managementRoutes() {
    Incarnation now = current;
    return now == null || now.system().whenTerminated().isCompleted() ? null : now.managementRoutes();
  }

  /**
   * @param joinWait how long readiness waits for joining and catching up on flushes: the node's
   *     start only; a node that was downed was serving already and stays ready while it rejoins
   */
  private Incarnation incarnate(Duration joinWait) {
    CompletableFuture<ActorRef<FlushRecord.Command>> flushes = new CompletableFuture<>();
    CompletableFuture<ActorRef<WarmJoin.Command>> warmJoins = new CompletableFuture<>();
    CompletableFuture<ActorRef<OwnerEndpoint.WhereIsDns>> endpoints = new CompletableFuture<>();
    ActorSystem<Void> system = ActorSystem.create(
        Behaviors.setup(ctx -> {
          flushes.complete(ctx.spawn(
              FlushRecord.create(services.caches(), services.recursionFlush(), services.status(),
                  services.flushRetention(), joinWait),
              "flush-record"));
          // Before the owner endpoint: once that is listed, other nodes send warm join answers here.
          ActorRef<WarmJoin.Command> warm = ctx.spawn(WarmJoin.create(services.caches(), services.owners(),
              services.profiles(), services.clock(), warmJoin, metrics, services.status()), WarmJoin.NAME);
          warmJoins.complete(warm);
          endpoints.complete(ctx.spawn(OwnerEndpoint.create(services.dnsUdp(), services.dnsTcp(), services.owners()), "owner"));
          ctx.spawn(Membership.create(services.owners(), metrics, warm), "membership");
          ctx.spawn(DenialSharing.create(services.denials()), "denial-sharing");
          return Behaviors.empty();
        }),
        "shoal",
        akkaConfig);
    try {
      // Owner lookups stop before the system does: a lookup sent through a stopping system
      // would wait for its owner timeout for nothing.
      CoordinatedShutdown.get(system).addTask(
          CoordinatedShutdown.PhaseBeforeServiceUnbind(), "owner-lookups-off", () -> {
            services.owners().clear();
            return CompletableFuture.completedFuture(Done.getInstance());
          });
      system.getWhenTerminated().thenRun(() -> onTerminated(system));
      Function<HttpRequest, CompletionStage<HttpResponse>> routes = ClusterBoot.start(system);
      return new Incarnation(system, flushes.get(30, TimeUnit.SECONDS), warmJoins.get(30, TimeUnit.SECONDS),
          endpoints.get(30, TimeUnit.SECONDS), routes);
    } catch (Exception e) {
      system.terminate();
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  private void onTerminated(ActorSystem<Void> system) {
    services.owners().clear();
    // A flush catch-up cut short by the downing must not keep the node out of service.
    services.status().flushesPending(false);
    if (leaving || current == null || current.system() != system) {
      return;
    }
    log.warn("this node is out of the cluster (downed, or it could not join); serving DNS on its own"
        + " with owner lookups off, joining again in {} ms", nextRetry.toMillis());
    retryAfter(nextRetry);
  }

  private void retryAfter(Duration delay) {
    nextRetry = delay.multipliedBy(2).compareTo(LONGEST_RETRY) > 0 ? LONGEST_RETRY : delay.multipliedBy(2);
    CompletableFuture.runAsync(this::rejoin,
        CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS));
  }

  private synchronized void rejoin() {
    if (leaving) {
      return;
    }
    try {
      current = incarnate(Duration.ZERO);
      metrics.rejoined();
      nextRetry = FIRST_RETRY;
      log.info("cluster membership restarted; bootstrapping to join again");
    } catch (RuntimeException e) {
      log.warn("cannot restart cluster membership ({}); trying again in {} ms", e.getMessage(), nextRetry.toMillis());
      retryAfter(nextRetry);
    }
  }

  /**
   * Adds a flush made now to the cluster's record; completes when it is written on every
   * reachable node (true) or on this one only so far (false).
   */
  public CompletionStage<Boolean> recordFlush(String name, int qtype) {
    ActorSystem<Void> system = current.system();
    long now = System.currentTimeMillis();
    return AskPattern.<FlushRecord.Command, FlushRecord.Recorded>ask(current.flushes(),
            replyTo -> new FlushRecord.Record(name, qtype, now, replyTo), Duration.ofSeconds(5), system.scheduler())
        .handle((recorded, failure) -> recorded != null && recorded.everywhere());
  }

  /**
   * Sends the answers this node owns to the members that own them once it has left (warm join's
   * hand-over), while it still answers DNS; completes when they are stored there, or after
   * {@code limit}, whichever comes first. Never fails: a node that cannot hand over still stops.
   *
   * <p>Then the node withdraws from the owner ring (its endpoint leaves the receptionist), waits
   * until every other node says its ring dropped this one (at most {@link
   * #WITHDRAW_CONFIRM_LIMIT}), and keeps answering for {@link #WITHDRAW_SETTLE} more: the other
   * nodes ask the new owners, which hold the answers now, before this node stops reading. Until
   * this was so, the others kept asking it from its unbind until it left the cluster, each lookup
   * timed out and went upstream: a burst of upstream queries at every node's stop in a rolling
   * restart.
   */
  public CompletionStage<Done> handOver(Duration limit) {
    Incarnation now = current;
    if (now == null || now.system().whenTerminated().isCompleted()) {
      return CompletableFuture.completedFuture(Done.getInstance());
    }
    return AskPattern.<WarmJoin.Command, Done>ask(now.warmJoin(), WarmJoin.HandOver::new, limit,
            now.system().scheduler())
        .handle((done, failure) -> {
          if (failure != null) {
            log.info("hand-over of this node's answers cut short after {} ms", limit.toMillis());
          }
          return Done.getInstance();
        })
        .thenCompose(done -> withdraw(now));
  }

  /**
   * Takes this node's endpoint out of the receptionist, waits until no other node looks keys up
   * here (or {@link #WITHDRAW_CONFIRM_LIMIT}), then {@link #WITHDRAW_SETTLE}.
   */
  private CompletionStage<Done> withdraw(Incarnation now) {
    ActorSystem<Void> system = now.system();
    system.receptionist().tell(Receptionist.deregister(OwnerEndpoint.KEY, now.ownerEndpoint()));
    String self = akka.cluster.typed.Cluster.get(system).selfMember().address().toString();
    long started = System.nanoTime();
    return droppedEverywhere(system, self, started + WITHDRAW_CONFIRM_LIMIT.toNanos())
        .thenCompose(confirmed -> {
          long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
          if (confirmed) {
            log.info("withdrawn from the owner ring: every other node dropped this one within {} ms", ms);
          } else {
            log.warn("withdrawn from the owner ring, but not every other node confirmed it within {} ms;"
                + " stopping anyway", ms);
          }
          CompletableFuture<Done> settled = new CompletableFuture<>();
          system.scheduler().scheduleOnce(WITHDRAW_SETTLE, () -> settled.complete(Done.getInstance()),
              system.executionContext());
          return settled;
        });
  }

  /**
   * Completes with true once every other listed node says its ring no longer sends lookups to
   * {@code self}, asking again every {@link #WITHDRAW_POLL}; with false at {@code deadline}.
   */
  private CompletionStage<Boolean> droppedEverywhere(ActorSystem<Void> system, String self, long deadline) {
    Duration wait = WITHDRAW_POLL.multipliedBy(5);
    return AskPattern.<Receptionist.Command, Receptionist.Listing>ask(system.receptionist(),
            replyTo -> Receptionist.find(OwnerEndpoint.KEY, replyTo), wait, system.scheduler())
        .thenCompose(listing -> {
          List<CompletableFuture<Boolean>> answers = new ArrayList<>();
          for (ActorRef<OwnerEndpoint.WhereIsDns> peer : listing.getServiceInstances(OwnerEndpoint.KEY)) {
            if (!peer.path().address().hasGlobalScope()) {
              continue; // this node's own endpoint, if the withdrawal has not reached the listing yet
            }
            ActorRef<Object> endpoint = peer.unsafeUpcast();
            answers.add(AskPattern.<Object, OwnerEndpoint.Listed>ask(endpoint,
                    replyTo -> new OwnerEndpoint.StillOwner(self, replyTo), wait, system.scheduler())
                .handle((listed, failure) -> listed != null && !listed.listed)
                .toCompletableFuture());
          }
          return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
              .thenApply(v -> answers.stream().allMatch(CompletableFuture::join));
        })
        .exceptionally(failure -> false)
        .thenCompose(all -> {
          if (all || System.nanoTime() >= deadline) {
            return CompletableFuture.completedFuture(all);
          }
          CompletableFuture<Boolean> again = new CompletableFuture<>();
          try {
            system.scheduler().scheduleOnce(WITHDRAW_POLL,
                () -> droppedEverywhere(system, self, deadline).whenComplete((r, e) -> again.complete(r != null && r)),
                system.executionContext());
          } catch (IllegalStateException stopped) {
            again.complete(false); // the system is stopping already: nobody left to ask
          }
          return again;
        });
  }

  /**
   * Leaves the cluster for good (the node is stopping); completes when the system is gone and the
   * management port closed. /ready answers until then (failing, from the lameduck on).
   */
  public synchronized CompletionStage<Done> leave() {
    leaving = true;
    ActorSystem<Void> system = current.system();
    return CoordinatedShutdown.get(system).runAll(CoordinatedShutdown.unknownReason())
        .thenCompose(d -> system.getWhenTerminated())
        .thenCompose(t -> managementPort.unbind());
  }

  /** Where the management port (/ready, /alive, bootstrap) is bound. */
  public InetSocketAddress managementAddress() {
    return managementPort.localAddress();
  }

  /** The actor system of the current incarnation (tests reach cluster actors through it). */
  public ActorSystem<Void> system() {
    return current.system();
  }
}
