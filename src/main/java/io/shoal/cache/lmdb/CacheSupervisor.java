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
 * Spawns and watches the shards of one LMDB cache, sends every shard a Sync each sync_interval
 * in periodic mode, and closes them all on request. A shard whose store throws is restarted by
 * Akka's {@link SupervisorStrategy#restartWithBackoff} (its store reopened, the other shards
 * untouched): the back-off doubles with each failure in a row from the minimum to the maximum,
 * with 20% jitter, and starts again from the minimum once the shard has stayed up for the maximum.
 */
public final class CacheSupervisor extends AbstractBehavior<CacheSupervisor.Command> {

  /** What the supervisor of an LMDB cache accepts. */
  public interface Command {}

  /** Close every shard (commit, sync, close its store); reply once all have stopped. */
  public record Close(ActorRef<Done> replyTo) implements Command {}

  /** The periodic-sync timer fired. */
  private enum SyncTick implements Command { INSTANCE }

  /** A shard actor stopped: at close, as expected; otherwise it died of an Error and is spawned anew. */
  private record ShardStopped(int shard) implements Command {}

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
  /**
   * Messages a shard keeps during its back-off (flushes, syncs, wake-ups; fills wait in its
   * queue, not here). Beyond it they go to dead letters: a flush then times out for its caller.
   */
  private static final int RESTART_STASH = 10_000;

  private final List<ShardSettings> settings;
  private final ShardState[] shards;
  private final CacheMetrics metrics;
  private final LmdbAnswerCache.Tuning tuning;
  private final TimerScheduler<Command> timers;
  private final Set<Integer> live = new HashSet<>();
  private final List<ActorRef<Done>> closers = new ArrayList<>();
  private final int[] generation;
  private boolean closing;

  static Behavior<Command> create(
      List<ShardSettings> settings, ShardState[] shards, CacheMetrics metrics, LmdbAnswerCache.Tuning tuning,
      Duration syncInterval, CompletableFuture<Void> started) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      CacheSupervisor supervisor = new CacheSupervisor(ctx, timers, settings, shards, metrics, tuning);
      if (!settings.isEmpty() && settings.get(0).sync() == SyncMode.PERIODIC) {
        timers.startTimerWithFixedDelay(SyncTick.INSTANCE, syncInterval);
      }
      started.complete(null);
      return supervisor;
    }));
  }

  private CacheSupervisor(
      ActorContext<Command> context, TimerScheduler<Command> timers, List<ShardSettings> settings,
      ShardState[] shards, CacheMetrics metrics, LmdbAnswerCache.Tuning tuning) {
    super(context);
    this.timers = timers;
    this.settings = settings;
    this.shards = shards;
    this.metrics = metrics;
    this.tuning = tuning;
    this.generation = new int[shards.length];
    for (ShardSettings s : settings) {
      spawn(s);
    }
  }

  private void spawn(ShardSettings s) {
    int i = s.shard();
    Behavior<CacheShard.Command> shard = Behaviors.supervise(
            CacheShard.create(s, shards[i], metrics, tuning.events(), tuning.opener()))
        .onFailure(RuntimeException.class,
            SupervisorStrategy.restartWithBackoff(tuning.minBackoff(), tuning.maxBackoff(), JITTER)
                .withResetBackoffAfter(tuning.maxBackoff())
                .withStashCapacity(RESTART_STASH));
    String name = String.format("shard-%02d", i) + (generation[i] == 0 ? "" : "-" + generation[i]);
    ActorRef<CacheShard.Command> ref = getContext().spawn(shard, name, DispatcherSelector.fromConfig(DISPATCHER));
    getContext().watchWith(ref, new ShardStopped(i));
    shards[i].writer = ref;
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
      shards[i].writer.tell(CacheShard.Sync.INSTANCE);
    }
    return Behaviors.same();
  }

  private Behavior<Command> onClose(Close close) {
    closers.add(close.replyTo());
    if (!closing) {
      closing = true;
      timers.cancelAll();
      for (int i : live) {
        shards[i].writer.tell(CacheShard.Close.INSTANCE);
      }
      timers.startSingleTimer(CloseDeadline.INSTANCE, CLOSE_DEADLINE);
    }
    return closedWhenDone();
  }

  private Behavior<Command> onCloseDeadline() {
    for (int i : live) {
      getContext().getLog().warn("shard {} of cache {} did not close within {}; stopping it",
          i, settings.get(i).cache(), CLOSE_DEADLINE);
      // Stopping runs the shard's PostStop: its store closes; fills it still held fail.
      getContext().stop(shards[i].writer);
    }
    return Behaviors.same();
  }

  private Behavior<Command> onShardStopped(ShardStopped stopped) {
    int i = stopped.shard();
    live.remove(i);
    if (closing) {
      return closedWhenDone();
    }
    // Akka restarts a shard that throws an exception, so this one died of an Error; the fills
    // of its transaction went with it, so only the fills still queued count as waiting.
    getContext().getLog().error("shard {} of cache {} stopped unexpectedly; starting it again",
        i, settings.get(i).cache());
    shards[i].resetPending(shards[i].queued.size());
    generation[i]++;
    spawn(settings.get(i));
    return Behaviors.same();
  }

  private Behavior<Command> closedWhenDone() {
    if (!live.isEmpty()) {
      return Behaviors.same();
    }
    for (ActorRef<Done> c : closers) {
      c.tell(Done.getInstance());
    }
    return Behaviors.stopped();
  }
}
