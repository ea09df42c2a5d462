package io.shoal.cache.lmdb;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
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
 * Spawns and watches the shards of one LMDB cache, restarts a failed shard with back-off (its
 * environment reopened, the other shards untouched), sends every shard a Sync each sync_interval
 * in periodic mode, and closes them all on request.
 *
 * <p>A shard whose environment throws reports {@link ShardFailed} and waits, holding its fills;
 * the supervisor tells it to reopen after a back-off that doubles with each failure in a row (up
 * to the maximum, with 20% jitter) and starts again from the minimum once the shard has stayed
 * up for the maximum back-off.
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

  /** From a shard: its environment failed and is closed. */
  record ShardFailed(int shard, String reason) implements Command {}

  /** From a shard: its environment is open again. */
  record ShardReopened(int shard) implements Command {}

  /** A failed shard's back-off is over. */
  private record ReopenDue(int shard) implements Command {}

  /** A shard that has not stopped this long after Close is stopped from outside. */
  private enum CloseDeadline implements Command { INSTANCE }

  /**
   * How long Close waits for shards to commit and stop by themselves. A shard far behind on a
   * disk that barely answers would otherwise hold the node's shutdown until the caller's ask
   * timed out; stopped from outside, it ends after the message it is in.
   */
  private static final Duration CLOSE_DEADLINE = Duration.ofSeconds(5);

  /** Akka dispatcher (config path) that runs the shards' blocking LMDB work. */
  static final String DISPATCHER = "shoal.lmdb-dispatcher";
  private static final double JITTER = 0.2;

  private final List<ShardSettings> shards;
  private final OpenShards open;
  private final CacheMetrics metrics;
  private final LmdbAnswerCache.Tuning tuning;
  private final TimerScheduler<Command> timers;
  private final Set<Integer> live = new HashSet<>();
  private final List<ActorRef<Done>> closers = new ArrayList<>();
  private final int[] generation;
  /** Failures in a row per shard, and since when each shard is up (nanoTime; DOWN while down). */
  private final int[] failures;
  private final long[] upSince;
  private static final long DOWN = Long.MIN_VALUE;
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
    this.failures = new int[shards.size()];
    this.upSince = new long[shards.size()];
    for (ShardSettings s : shards) {
      spawn(s);
    }
  }

  private void spawn(ShardSettings s) {
    int i = s.shard();
    Behavior<CacheShard.Command> shard = CacheShard.create(s, open, metrics, tuning.events(), getContext().getSelf());
    String name = String.format("shard-%02d", i) + (generation[i] == 0 ? "" : "-" + generation[i]);
    ActorRef<CacheShard.Command> ref = getContext().spawn(shard, name, DispatcherSelector.fromConfig(DISPATCHER));
    getContext().watchWith(ref, new ShardStopped(i));
    open.writer(i, ref);
    live.add(i);
    upSince[i] = System.nanoTime();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessageEquals(SyncTick.INSTANCE, this::onSyncTick)
        .onMessage(Close.class, this::onClose)
        .onMessage(ShardStopped.class, this::onShardStopped)
        .onMessageEquals(CloseDeadline.INSTANCE, this::onCloseDeadline)
        .onMessage(ShardFailed.class, this::onShardFailed)
        .onMessage(ReopenDue.class, this::onReopenDue)
        .onMessage(ShardReopened.class, this::onShardReopened)
        .build();
  }

  private Behavior<Command> onShardFailed(ShardFailed failed) {
    int i = failed.shard();
    if (upSince[i] != DOWN && System.nanoTime() - upSince[i] > tuning.maxBackoff().toNanos()) {
      // It had been up long enough: this failure starts a new series.
      failures[i] = 0;
    }
    upSince[i] = DOWN;
    Duration delay = backoff(failures[i]++);
    getContext().getLog().warn("LMDB shard {} of cache {} failed ({}); reopening it in {} ms",
        i, shards.get(i).cache(), failed.reason(), delay.toMillis());
    if (!closing) {
      timers.startSingleTimer("reopen-" + i, new ReopenDue(i), delay);
    }
    return this;
  }

  /** The back-off after {@code previous} failures in a row: doubling from the minimum, capped, jittered. */
  private Duration backoff(int previous) {
    double base = Math.min(tuning.maxBackoff().toNanos(),
        tuning.minBackoff().toNanos() * Math.pow(2, Math.min(previous, 30)));
    double jittered = base * (1 + JITTER * java.util.concurrent.ThreadLocalRandom.current().nextDouble());
    return Duration.ofNanos((long) jittered);
  }

  private Behavior<Command> onReopenDue(ReopenDue due) {
    if (live.contains(due.shard())) {
      open.writer(due.shard()).tell(CacheShard.Reopen.INSTANCE);
    }
    return this;
  }

  private Behavior<Command> onShardReopened(ShardReopened reopened) {
    upSince[reopened.shard()] = System.nanoTime();
    return this;
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
    // Shards handle their own failures, so this is one that died of an Error; fills it held in
    // a transaction went with it, so only the fills still queued count as waiting. The new
    // shard commits them.
    getContext().getLog().error("shard {} of cache {} stopped unexpectedly; starting it again",
        i, shards.get(i).cache());
    open.pendingFills(i).set(open.queued(i).size());
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
