package io.shoal.cache.lmdb;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.PostStop;
import akka.actor.typed.PreRestart;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.LmdbShardMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * One shard of an LMDB answer cache: the only writer of its environment. Fills that wait in its
 * queue ({@link ShardState#queued}) are group-committed, one write transaction (and, in
 * sync = full, one fsync) for all of them: at once for a fill somebody waits on, at the end of
 * the commit window for write-behind fills. Readers never come here; they read the store directly.
 *
 * <p>When its store throws, the shard closes it (its keys are misses from then on) and fails;
 * its {@link CacheSupervisor} restarts it with back-off, and the new incarnation opens the store
 * again. Fills and flushes wait in the shard's queues meanwhile, so a restart loses none of them;
 * the mailbox carries only wake-ups (Akka stashes those during the back-off, and the new
 * incarnation wakes itself for whatever waits).
 */
public final class CacheShard extends AbstractBehavior<CacheShard.Command> {

  /** What a cache shard accepts. */
  public interface Command {}

  /** Write-behind fills are queued: commit them at the end of the commit window. */
  public enum FillsQueued implements Command { INSTANCE }

  /** A fill somebody waits for is queued: commit the queue as soon as the mailbox allows. */
  public enum CommitNow implements Command { INSTANCE }

  /**
   * Flushes or releases are queued ({@link ShardState#flushes}): run them after committing the
   * fills queued before.
   */
  public enum FlushesQueued implements Command { INSTANCE }

  /**
   * Answers of a load are queued ({@link ShardState#loads}): store them into free room after
   * committing the fills queued before.
   */
  public enum LoadsQueued implements Command { INSTANCE }

  /** Force written pages to disk: the CacheSupervisor's periodic sync. */
  public enum Sync implements Command { INSTANCE }

  /** Commit what is gathered, sync (unless sync = none), close the store and stop. */
  public enum Close implements Command { INSTANCE }

  /** Sent to self at the end of the commit window. */
  private enum WindowEnd implements Command { INSTANCE }

  /** What a shard reports to an observer (tests and studies; the node passes an ignoring ref). */
  public interface Event {}

  /** One write transaction committed {@code fills} answers in {@code nanos} (puts and commit). */
  public record Committed(int shard, int fills, long nanos) implements Event {}

  /** One forced sync of the environment took {@code nanos}. */
  public record Synced(int shard, long nanos) implements Event {}

  /** The shard's store failed; its keys are misses until the shard is restarted. */
  public record Failed(int shard, String reason) implements Event {}

  /** The shard's store is open again after a failure. */
  public record Reopened(int shard) implements Event {}

  /** Opens a shard's store: {@link #FILES} in a node; tests may hand in a store that fails. */
  @FunctionalInterface
  public interface Opener {
    /** The shard's environment on disk, as {@link ShardFiles#open} opens it. */
    Opener FILES = ShardFiles::open;

    ShardStore open(ShardSettings settings, CacheMetrics metrics);
  }

  /** Releases removed in one write transaction at most. */
  private static final int MAX_RELEASES = 1024;

  private final ShardSettings settings;
  private final ShardState state;
  private final CacheMetrics metrics;
  private final LmdbShardMetrics shardMetrics;
  private final ActorRef<Event> events;
  private ShardStore store;
  private final ShardBatch batch;
  /** The end of the open commit window, null when none is open. */
  private akka.actor.Cancellable windowEnd;

  /**
   * The shard's behavior: it opens its store as it starts, and throws (for its supervisor to
   * restart it) when that fails.
   */
  static Behavior<Command> create(
      ShardSettings settings, ShardState state, CacheMetrics metrics, ActorRef<Event> events, Opener opener) {
    return Behaviors.setup(ctx -> new CacheShard(ctx, settings, state, metrics, events, opener));
  }

  private CacheShard(
      ActorContext<Command> context, ShardSettings settings, ShardState state, CacheMetrics metrics,
      ActorRef<Event> events, Opener opener) {
    super(context);
    this.settings = settings;
    this.state = state;
    this.metrics = metrics;
    this.shardMetrics = metrics.lmdbShard(settings.shard());
    this.events = events;
    try {
      this.store = opener.open(settings, metrics);
    } catch (RuntimeException e) {
      failed(e);
      throw e;
    }
    this.batch = new ShardBatch(settings, state, store, metrics, shardMetrics, events);
    state.opened(store);
    metrics.entries(settings.shard(), store.entries());
    if (state.failures.get() > 0) {
      context.getLog().info("LMDB shard {} of cache {} reopened", settings.shard(), settings.cache());
      events.tell(new Reopened(settings.shard()));
    }
    if (!state.queued.isEmpty()) {
      // Fills queued before this shard (or this incarnation of it) was there to be woken.
      context.getSelf().tell(CommitNow.INSTANCE);
    }
    if (!state.flushes.isEmpty()) {
      context.getSelf().tell(FlushesQueued.INSTANCE);
    }
    if (!state.loads.isEmpty()) {
      context.getSelf().tell(LoadsQueued.INSTANCE);
    }
  }

  /**
   * Any handler whose store throws closes the store and fails the shard, for a restart. Handlers
   * return {@code Behaviors.same()}, not {@code this}: under the supervisor's interceptor another
   * behavior object, {@code this} included, is wrapped afresh at every message.
   */
  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessageEquals(FillsQueued.INSTANCE, this::onFillsQueued)
        .onMessageEquals(CommitNow.INSTANCE, () -> guarded(this::onCommitNow))
        .onMessageEquals(WindowEnd.INSTANCE, () -> guarded(this::onCommitNow))
        .onMessageEquals(FlushesQueued.INSTANCE, () -> guarded(this::onFlushesQueued))
        .onMessageEquals(LoadsQueued.INSTANCE, () -> guarded(this::onLoadsQueued))
        .onMessageEquals(Sync.INSTANCE, () -> guarded(this::onSync))
        .onMessageEquals(Close.INSTANCE, this::onClose)
        .onSignal(PreRestart.class, signal -> closed())
        .onSignal(PostStop.class, signal -> stopped())
        .build();
  }

  /** Runs {@code handler}; if the store throws, the shard closes it and fails. */
  private Behavior<Command> guarded(Supplier<Behavior<Command>> handler) {
    try {
      return handler.get();
    } catch (RuntimeException e) {
      failed(e);
      throw e;
    }
  }

  /**
   * Closes the store after a failure, at once, so readers miss instead of reading a store that
   * failed. Fills of the failed transaction were answered (not stored); fills still queued wait
   * in the queue for the next incarnation.
   */
  private void failed(RuntimeException cause) {
    state.failures.incrementAndGet();
    getContext().getLog().error("LMDB shard {} of cache {} failed; its answers are misses until it reopens",
        settings.shard(), settings.cache(), cause);
    closeWindow();
    closeStore();
    events.tell(new Failed(settings.shard(), String.valueOf(cause.getMessage())));
  }

  private Behavior<Command> onFillsQueued() {
    if (settings.commitWindow().isZero()) {
      return guarded(this::onCommitNow);
    }
    if (windowEnd == null) {
      // Nobody waits for these commits: gather fills for the window. Fewer, larger transactions
      // mean fewer fsyncs and fewer copied B+tree pages per fill; readers see the queued
      // answers meanwhile through the shard's overlay.
      windowEnd = getContext().scheduleOnce(settings.commitWindow(), getContext().getSelf(), WindowEnd.INSTANCE);
    }
    return Behaviors.same();
  }

  private Behavior<Command> onCommitNow() {
    closeWindow();
    batch.commitQueued();
    return Behaviors.same();
  }

  /** A flush that throws stays at the head of the queue, to run again after the restart. */
  private Behavior<Command> onFlushesQueued() {
    if (state.flushes.isEmpty()) {
      // A second wake-up for flushes already run (one from the caller, one from the open): it
      // must not end a commit window that fills queued since then have opened.
      return Behaviors.same();
    }
    // Fills queued before a flush belong before it.
    onCommitNow();
    for (ShardState.Removal next = state.flushes.peek(); next != null; next = state.flushes.peek()) {
      if (next instanceof ShardState.Flush flush) {
        int removed = store.removeName(flush.name(), flush.qtype());
        state.flushes.poll();
        batch.entriesChanged();
        flush.removed().complete(removed);
        continue;
      }
      // The releases at the head go in one transaction: warm join queues a batch of them at once.
      List<ShardState.Release> releases = new ArrayList<>();
      for (ShardState.Removal r : state.flushes) {
        if (!(r instanceof ShardState.Release release) || releases.size() == MAX_RELEASES) {
          break;
        }
        releases.add(release);
      }
      boolean[] removed = store.removeStored(releases);
      for (int i = 0; i < releases.size(); i++) {
        state.flushes.poll();
      }
      batch.entriesChanged();
      for (int i = 0; i < releases.size(); i++) {
        releases.get(i).removed().complete(removed[i]);
      }
    }
    return Behaviors.same();
  }

  /** A load that throws stays at the head of the queue, to run again after the restart (its transaction was aborted). */
  private Behavior<Command> onLoadsQueued() {
    if (state.loads.isEmpty()) {
      return Behaviors.same();
    }
    // Fills queued before a load belong before it: a fresh answer from upstream is kept, not the loaded one.
    onCommitNow();
    for (ShardState.Load next = state.loads.peek(); next != null; next = state.loads.peek()) {
      var results = store.loadIntoRoom(next.answers(), next.nowMillis());
      state.loads.poll();
      batch.entriesChanged();
      next.done().complete(results);
    }
    return Behaviors.same();
  }

  private Behavior<Command> onSync() {
    long nanos = store.sync();
    shardMetrics.syncNanos(nanos);
    events.tell(new Synced(settings.shard(), nanos));
    return Behaviors.same();
  }

  private Behavior<Command> onClose() {
    try {
      onCommitNow();
      if (settings.sync() != SyncMode.NONE) {
        onSync();
      }
    } catch (RuntimeException e) {
      getContext().getLog().error("LMDB shard {} of cache {} failed while closing",
          settings.shard(), settings.cache(), e);
    }
    return Behaviors.stopped();
  }

  /** At a restart: the store closes; queued fills wait for the next incarnation. */
  private Behavior<Command> closed() {
    closeWindow();
    closeStore();
    return Behaviors.same();
  }

  /** At stop: every fill and load still queued is answered as not stored, every flush as finding nothing. */
  private Behavior<Command> stopped() {
    if (batch != null) {
      batch.abandonQueued();
    }
    for (ShardState.Removal removal = state.flushes.poll(); removal != null; removal = state.flushes.poll()) {
      removal.removedNothing();
    }
    for (ShardState.Load load = state.loads.poll(); load != null; load = state.loads.poll()) {
      load.storedNothing();
    }
    return closed();
  }

  /** A WindowEnd already in the mailbox then finds an empty queue, or a new one: either is fine. */
  private void closeWindow() {
    if (windowEnd != null) {
      windowEnd.cancel();
      windowEnd = null;
    }
  }

  private void closeStore() {
    if (store == null) {
      return;
    }
    ShardStore closing = store;
    store = null;
    state.closing(closing);
    try {
      closing.close();
    } catch (RuntimeException e) {
      getContext().getLog().warn("closing LMDB shard {} of cache {} failed: {}",
          settings.shard(), settings.cache(), e.toString());
    }
  }
}
