package io.shoal.cache.lmdb;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.SupervisorStrategy;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.TimerScheduler;
import io.shoal.metrics.CacheMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Spawns and watches the shards of one LMDB cache, restarts a failed shard with backoff (its
 * environment reopened, the other shards untouched), sends every shard a Sync each sync_interval
 * in periodic mode, and closes them all on request.
 */
public final class CacheSupervisor extends AbstractBehavior<CacheSupervisor.Command> {

  /** What the supervisor of an LMDB cache accepts. */
  public interface Command {}

  /** Close every shard (commit, sync, close its environment); reply once all have stopped. */
  public record Close(ActorRef<Done> replyTo) implements Command {}

  /** The periodic-sync timer fired. */
  private enum SyncTick implements Command { INSTANCE }

  /** A shard actor stopped: at close, as expected; otherwise it gave up and is spawned anew. */
  private record ShardStopped(int shard) implements Command {}

  /** A shard that has not stopped this long after Close is stopped from outside. */
  private enum CloseDeadline implements Command { INSTANCE }

  /**
   * How long Close waits for shards to commit and stop by themselves. A shard caught between
   * failures in its restart back-off can lose the Close that was stashed for it; without a
   * deadline the node's shutdown would wait for the caller's ask to time out.
   */
  private static final Duration CLOSE_DEADLINE = Duration.ofSeconds(5);

  /** Akka dispatcher (config path) that runs the shards' blocking LMDB work. */
  static final String DISPATCHER = "shoal.lmdb-dispatcher";
  /** Spare room in a restarting shard's stash beyond its fills: syncs and flushes. */
  private static final int STASH_SPARE = 1024;

  private final List<ShardSettings> shards;
  private final OpenShards open;
  private final CacheMetrics metrics;
  private final LmdbAnswerCache.Tuning tuning;
  private final TimerScheduler<Command> timers;
  private final Set<Integer> live = new HashSet<>();
  private final List<ActorRef<Done>> closers = new ArrayList<>();
  private final int[] generation;
  private boolean closing;

  static Behavior<Command> create(
      List<ShardSettings> shards, OpenShards open, CacheMetrics metrics, LmdbAnswerCache.Tuning tuning,
      Duration syncInterval, CompletableFuture<Void> started) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      CacheSupervisor supervisor = new CacheSupervisor(ctx, timers, shards, open, metrics, tuning);
      if (!shards.isEmpty() && shards.get(0).sync() == SyncMode.PERIODIC) {
        timers.startTimerWithFixedDelay(SyncTick.INSTANCE, syncInterval);
      }
      started.complete(null);
      return supervisor;
    }));
  }

  private CacheSupervisor(
      ActorContext<Command> context, TimerScheduler<Command> timers, List<ShardSettings> shards,
      OpenShards open, CacheMetrics metrics, LmdbAnswerCache.Tuning tuning) {
    super(context);
    this.timers = timers;
    this.shards = shards;
    this.open = open;
    this.metrics = metrics;
    this.tuning = tuning;
    this.generation = new int[shards.size()];
    for (ShardSettings s : shards) {
      spawn(s);
    }
  }

  private void spawn(ShardSettings s) {
    int i = s.shard();
    // A fill in a restarting shard's stash is bounded by the fill queue limit, so the stash
    // never drops one (a dropped fill would leave its caller waiting).
    Behavior<CacheShard.Command> shard = Behaviors.supervise(CacheShard.create(s, open, metrics, tuning.events()))
        .onFailure(SupervisorStrategy.restartWithBackoff(tuning.minBackoff(), tuning.maxBackoff(), 0.2)
            .withStashCapacity(tuning.fillQueueLimit() + STASH_SPARE));
    String name = String.format("shard-%02d", i) + (generation[i] == 0 ? "" : "-" + generation[i]);
    ActorRef<CacheShard.Command> ref = getContext().spawn(shard, name, DispatcherSelector.fromConfig(DISPATCHER));
    getContext().watchWith(ref, new ShardStopped(i));
    open.writer(i, ref);
    live.add(i);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessageEquals(SyncTick.INSTANCE, this::onSyncTick)
        .onMessage(Close.class, this::onClose)
        .onMessage(ShardStopped.class, this::onShardStopped)
        .onMessageEquals(CloseDeadline.INSTANCE, this::onCloseDeadline)
        .build();
  }

  private Behavior<Command> onSyncTick() {
    for (int i : live) {
      open.writer(i).tell(CacheShard.Sync.INSTANCE);
    }
    return this;
  }

  private Behavior<Command> onClose(Close close) {
    closers.add(close.replyTo());
    if (!closing) {
      closing = true;
      timers.cancelAll();
      for (int i : live) {
        open.writer(i).tell(CacheShard.Close.INSTANCE);
      }
      timers.startSingleTimer(CloseDeadline.INSTANCE, CLOSE_DEADLINE);
    }
    return closedWhenDone();
  }

  private Behavior<Command> onCloseDeadline() {
    for (int i : live) {
      getContext().getLog().warn("shard {} of cache {} did not close within {}; stopping it",
          i, shards.get(i).cache(), CLOSE_DEADLINE);
      // Stopping runs the shard's PostStop: its environment closes; fills it still held fail.
      getContext().stop(open.writer(i));
    }
    return this;
  }

  private Behavior<Command> onShardStopped(ShardStopped stopped) {
    int i = stopped.shard();
    live.remove(i);
    if (closing) {
      return closedWhenDone();
    }
    // Restarts are unlimited, so this is a shard that could not even be stopped cleanly; its
    // queued fills went with its mailbox, so its count of waiting fills starts again at zero.
    getContext().getLog().error("shard {} of cache {} stopped unexpectedly; starting it again",
        i, shards.get(i).cache());
    open.pendingFills(i).set(0);
    generation[i]++;
    spawn(shards.get(i));
    return this;
  }

  private Behavior<Command> closedWhenDone() {
    if (!live.isEmpty()) {
      return this;
    }
    for (ActorRef<Done> c : closers) {
      c.tell(Done.getInstance());
    }
    return Behaviors.stopped();
  }
}
