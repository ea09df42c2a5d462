package io.shoal.cache.lmdb;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.PostStop;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Histogram;
import kamon.metric.Timer;
import kamon.tag.TagSet;
import org.lmdbjava.Env;

/**
 * One shard of an LMDB answer cache: the only writer of its environment. Fills that wait in its
 * queue ({@link OpenShards#queued}) are group-committed, one write transaction (and, in
 * sync = full, one fsync) for all of them: at once for a fill somebody waits on, at the end of
 * the commit window for write-behind fills. Readers never come here; they read the environment
 * directly.
 *
 * <p>When its environment throws, the shard does not die: it closes the environment (its keys
 * are misses from then on), tells its {@link CacheSupervisor}, and leaves fills in the queue and
 * holds flushes until the supervisor, after a back-off, tells it to {@link Reopen}. It then
 * reopens the environment and works through what waited, in order. Keeping that itself rather
 * than in Akka's restart stash means a failure during the replay cannot lose the rest.
 */
public final class CacheShard extends AbstractBehavior<CacheShard.Command> {

  /** What a cache shard accepts. */
  public interface Command {}

  /**
   * An answer to store under {@code key}, queued for the shard in {@link OpenShards#queued}.
   * {@code committed} completes with true once the transaction holding it committed, false if it
   * was dropped. An {@code awaited} fill has a caller waiting on it (write-through) and comes with
   * a {@link CommitNow}; the others may wait for the commit window.
   */
  public record Fill(CacheKey key, CachedAnswer answer, CompletableFuture<Boolean> committed, boolean awaited) {

    /** A fill with a caller waiting on it. */
    public Fill(CacheKey key, CachedAnswer answer, CompletableFuture<Boolean> committed) {
      this(key, answer, committed, true);
    }
  }

  /** Write-behind fills are queued: commit them at the end of the commit window. */
  public enum FillsQueued implements Command { INSTANCE }

  /** A fill somebody waits for is queued: commit the queue as soon as the mailbox allows. */
  public enum CommitNow implements Command { INSTANCE }

  /** Remove every answer for the wire-form {@code name}; replies with how many went. */
  public record FlushName(byte[] name, int qtype, ActorRef<Integer> replyTo) implements Command {}

  /** Force written pages to disk: the CacheSupervisor's periodic sync. */
  public enum Sync implements Command { INSTANCE }

  /** Commit what is gathered, sync (unless sync = none), close the environment and stop. */
  public enum Close implements Command { INSTANCE }

  /** From the supervisor, after a failure and its back-off: open the environment again. */
  enum Reopen implements Command { INSTANCE }

  /** Sent to self at the end of the commit window. */
  private enum WindowEnd implements Command { INSTANCE }

  /** Tests only: fail the way a broken environment would, to exercise the supervisor's restart. */
  record InjectedFailure(String reason) implements Command {}

  /** Tests only: hold the shard until released, so that fills pile up in its queue. */
  record Hold(CountDownLatch release) implements Command {}

  /** What a shard reports to an observer (tests and studies; the node passes an ignoring ref). */
  public interface Event {}

  /** One write transaction committed {@code fills} answers in {@code nanos} (puts and commit). */
  public record Committed(int shard, int fills, long nanos) implements Event {}

  /** One forced sync of the environment took {@code nanos}. */
  public record Synced(int shard, long nanos) implements Event {}

  /** The shard's environment failed; its keys are misses until it is reopened. */
  public record Failed(int shard, String reason) implements Event {}

  /** The shard's environment is open again and what the shard held meanwhile was replayed. */
  public record Reopened(int shard) implements Event {}

  /** Room-making rounds per fill that does not fit the map: two evictions, then growth. */
  private static final int MAX_MAP_ROUNDS = 6;
  private static final int EVICTION_ROUNDS = 2;

  private final ShardSettings settings;
  private final OpenShards open;
  private final CacheMetrics metrics;
  private final ActorRef<Event> events;
  private final ActorRef<CacheSupervisor.Command> supervisor;
  /** Null while the shard is down. */
  private ShardEnvironment environment;
  /** Flushes (and test failures) that arrived while the shard was down, in order. */
  private List<Command> held = new ArrayList<>();
  private final Histogram batchSize;
  private final Timer commitTime;
  private final Timer syncTime;
  private final Counter mapGrown;
  private List<Fill> batch = new ArrayList<>();
  /** The end of the open commit window, null when none is open. */
  private akka.actor.Cancellable windowEnd;

  /**
   * The shard's behavior. It opens its environment as it starts; if that fails it starts down and
   * {@code supervisor} hears of it, as of any later failure.
   */
  static Behavior<Command> create(
      ShardSettings settings, OpenShards open, CacheMetrics metrics, ActorRef<Event> events,
      ActorRef<CacheSupervisor.Command> supervisor) {
    return Behaviors.setup(ctx -> {
      CacheShard shard = new CacheShard(ctx, settings, open, metrics, events, supervisor);
      try {
        shard.openEnvironment();
        return shard;
      } catch (RuntimeException e) {
        return shard.failed(e);
      }
    });
  }

  private CacheShard(
      ActorContext<Command> context, ShardSettings settings, OpenShards open, CacheMetrics metrics,
      ActorRef<Event> events, ActorRef<CacheSupervisor.Command> supervisor) {
    super(context);
    this.settings = settings;
    this.open = open;
    this.metrics = metrics;
    this.events = events;
    this.supervisor = supervisor;
    TagSet tags = TagSet.of("cache", settings.cache()).withTag("shard", String.valueOf(settings.shard()));
    this.batchSize = Kamon.histogram("shoal.lmdb.commit.batch.size", "Fills committed per LMDB write transaction")
        .withTags(tags);
    var durations = Kamon.timer("shoal.lmdb.sync", "LMDB commit and forced-sync durations");
    this.commitTime = durations.withTags(tags.withTag("kind", "commit"));
    this.syncTime = durations.withTags(tags.withTag("kind", "sync"));
    this.mapGrown = Kamon.counter("shoal.lmdb.map.grown", "LMDB maps grown because eviction could not make room")
        .withTags(tags);
  }

  private void openEnvironment() {
    environment = ShardEnvironment.open(settings, metrics);
    open.opened(settings.shard(), environment);
    metrics.entries(settings.shard(), environment.entries());
    if (!open.queued(settings.shard()).isEmpty()) {
      // Fills queued before this shard (or this incarnation of it) was there to be woken.
      getContext().getSelf().tell(CommitNow.INSTANCE);
    }
  }

  /** While the environment is open. Any handler that throws takes the shard down instead. */
  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessageEquals(FillsQueued.INSTANCE, this::onFillsQueued)
        .onMessageEquals(CommitNow.INSTANCE, () -> guarded(null, this::onCommitNow))
        .onMessageEquals(WindowEnd.INSTANCE, () -> guarded(null, this::onCommitNow))
        .onMessage(FlushName.class, flush -> guarded(flush, () -> onFlushName(flush)))
        .onMessageEquals(Sync.INSTANCE, () -> guarded(null, this::onSync))
        .onMessageEquals(Close.INSTANCE, this::onClose)
        .onMessageEquals(Reopen.INSTANCE, () -> this)
        .onMessage(InjectedFailure.class, failure -> guarded(null, () -> onInjectedFailure(failure)))
        .onMessage(Hold.class, this::onHold)
        .onSignal(PostStop.class, signal -> shutDown())
        .build();
  }

  /**
   * While the environment is closed after a failure: fills stay in the queue and flushes are
   * held, until Reopen.
   */
  private Behavior<Command> down() {
    return Behaviors.receive(Command.class)
        .onMessage(FlushName.class, this::hold)
        .onMessage(InjectedFailure.class, this::hold)
        .onMessageEquals(FillsQueued.INSTANCE, () -> Behaviors.same())
        .onMessageEquals(CommitNow.INSTANCE, () -> Behaviors.same())
        .onMessageEquals(WindowEnd.INSTANCE, () -> Behaviors.same())
        .onMessageEquals(Sync.INSTANCE, () -> Behaviors.same())
        .onMessageEquals(Reopen.INSTANCE, this::onReopen)
        .onMessageEquals(Close.INSTANCE, this::onCloseWhileDown)
        .onMessage(Hold.class, h -> {
          onHold(h);
          return Behaviors.same();
        })
        .onSignal(PostStop.class, signal -> shutDown())
        .build();
  }

  /**
   * Runs {@code handler}; if the environment throws, the shard goes down. {@code retry} (a flush
   * that failed half-way) is held, to run again once the shard is back.
   */
  private Behavior<Command> guarded(Command retry, java.util.function.Supplier<Behavior<Command>> handler) {
    try {
      return handler.get();
    } catch (RuntimeException e) {
      if (retry != null) {
        held.add(0, retry);
      }
      return failed(e);
    }
  }

  /**
   * Closes the environment after a failure. Fills of the failed transaction were answered (not
   * stored); fills still queued wait in the queue for the reopened environment.
   */
  private Behavior<Command> failed(RuntimeException cause) {
    getContext().getLog().error("LMDB shard {} of cache {} failed; its answers are misses until it reopens",
        settings.shard(), settings.cache(), cause);
    settle(batch, false);
    batch = new ArrayList<>();
    closeWindow();
    closeEnvironment();
    String reason = String.valueOf(cause.getMessage());
    events.tell(new Failed(settings.shard(), reason));
    supervisor.tell(new CacheSupervisor.ShardFailed(settings.shard(), reason));
    return down();
  }

  private Behavior<Command> hold(Command command) {
    held.add(command);
    return Behaviors.same();
  }

  /**
   * Opens the environment again and replays what was held, in arrival order. A failure on the
   * way holds the rest again and waits for the next Reopen.
   */
  private Behavior<Command> onReopen() {
    try {
      openEnvironment();
    } catch (RuntimeException e) {
      return failed(e);
    }
    List<Command> replay = held;
    held = new ArrayList<>();
    for (int i = 0; i < replay.size(); i++) {
      Command c = replay.get(i);
      try {
        if (c instanceof FlushName flush) {
          onFlushName(flush);
        } else if (c instanceof InjectedFailure failure) {
          onInjectedFailure(failure);
        }
      } catch (RuntimeException e) {
        if (c instanceof FlushName) {
          held.add(c);
        }
        held.addAll(replay.subList(i + 1, replay.size()));
        return failed(e);
      }
    }
    try {
      commitQueued();
    } catch (RuntimeException e) {
      return failed(e);
    }
    getContext().getLog().info("LMDB shard {} of cache {} reopened", settings.shard(), settings.cache());
    events.tell(new Reopened(settings.shard()));
    supervisor.tell(new CacheSupervisor.ShardReopened(settings.shard()));
    return this;
  }

  /** Closing while down: what was held is answered (fills not stored, flushes found nothing). */
  private Behavior<Command> onCloseWhileDown() {
    return Behaviors.stopped();
  }

  private Behavior<Command> onFillsQueued() {
    if (settings.commitWindow().isZero()) {
      return guarded(null, this::onCommitNow);
    }
    if (windowEnd == null) {
      // Nobody waits for these commits: gather fills for the window. Fewer, larger transactions
      // mean fewer fsyncs and fewer copied B+tree pages per fill; readers see the queued
      // answers meanwhile through the cache's overlay.
      windowEnd = getContext().scheduleOnce(settings.commitWindow(), getContext().getSelf(), WindowEnd.INSTANCE);
    }
    return this;
  }

  private Behavior<Command> onCommitNow() {
    commitQueued();
    return this;
  }

  /**
   * Takes every queued fill into one batch and commits it. The wake-up flag is cleared before
   * the queue is drained, so a fill queued after the drain wakes the shard again.
   */
  private void commitQueued() {
    closeWindow();
    open.woken(settings.shard()).set(false);
    takeQueued();
    commitBatch();
  }

  /**
   * Commits the gathered fills. A full map splits the batch (smaller transactions can reuse the
   * pages their predecessors freed), then, for a single fill, evicts to free pages and at last
   * grows the map; a fill that still does not fit is dropped. No fill ever fails a query.
   */
  private void commitBatch() {
    if (batch.isEmpty()) {
      return;
    }
    List<Fill> fills = batch;
    batch = new ArrayList<>();
    int from = 0;
    int chunk = fills.size();
    int mapRounds = 0;
    try {
      while (from < fills.size()) {
        List<Fill> part = fills.subList(from, Math.min(fills.size(), from + chunk));
        long start = System.nanoTime();
        try {
          long commitNanos = environment.store(part, System.currentTimeMillis());
          long nanos = System.nanoTime() - start;
          committed(part, nanos, commitNanos);
          from += part.size();
          mapRounds = 0;
        } catch (Env.MapFullException e) {
          if (part.size() > 1) {
            chunk = Math.max(1, part.size() / 2);
          } else if (mapRounds < MAX_MAP_ROUNDS) {
            makeRoom(++mapRounds);
          } else {
            getContext().getLog().warn(
                "answer of {} bytes does not fit shard {} of cache {} even after eviction and growth; dropped",
                part.get(0).answer().encodedSize(), settings.shard(), settings.cache());
            settle(part, false);
            from += 1;
            mapRounds = 0;
          }
        }
      }
    } catch (RuntimeException e) {
      // An unexpected LMDB failure: answer the waiting fills, then let the supervisor restart us.
      settle(fills.subList(from, fills.size()), false);
      throw e;
    }
  }

  private void committed(List<Fill> part, long nanos, long commitNanos) {
    int n = part.size();
    batchSize.record(n);
    commitTime.record(commitNanos);
    // shoal_cache_fill_seconds here is the amortised cost of one answer: the whole transaction
    // (puts, evictions, commit and its fsync) divided by the answers it carried. A write-through
    // caller also waits for the fills queued ahead of it, which this does not show.
    long perFill = nanos / n;
    for (int i = 0; i < n; i++) {
      metrics.fillNanos(perFill);
    }
    // Counts first: whoever the settled fill wakes may look at size() at once.
    entriesChanged();
    events.tell(new Committed(settings.shard(), n, nanos));
    settle(part, true);
  }

  private void makeRoom(int round) {
    long held = environment.entries();
    if (round <= EVICTION_ROUNDS && held > 0) {
      try {
        environment.evictForSpace(Math.max(1, held / 8), System.currentTimeMillis());
        entriesChanged();
        return;
      } catch (Env.MapFullException e) {
        // Even deleting needs fresh pages (copy-on-write): only growth helps now.
      }
    }
    long before = environment.mapSize();
    environment.growMap(before * 2);
    mapGrown.increment();
    getContext().getLog().warn("LMDB map of shard {} of cache {} full; grew it from {} to {} bytes",
        settings.shard(), settings.cache(), before, before * 2);
  }

  private void settle(List<Fill> fills, boolean stored) {
    // No longer waiting first: whoever a completed fill wakes must not see it still displacing
    // a committed answer (ShardEnvironment.Horizon).
    open.pendingFills(settings.shard()).addAndGet(-fills.size());
    for (Fill f : fills) {
      f.committed().complete(stored);
    }
  }

  private void entriesChanged() {
    long n = environment.entries();
    open.entries(settings.shard(), n);
    metrics.entries(settings.shard(), n);
  }

  private Behavior<Command> onFlushName(FlushName flush) {
    // Fills queued before the flush belong before it.
    commitQueued();
    int removed = 0;
    for (int round = 1; ; round++) {
      try {
        removed = environment.removeName(flush.name(), flush.qtype());
        break;
      } catch (Env.MapFullException e) {
        if (round > MAX_MAP_ROUNDS) {
          throw e;
        }
        makeRoom(EVICTION_ROUNDS + 1);
      }
    }
    entriesChanged();
    flush.replyTo().tell(removed);
    return this;
  }

  private Behavior<Command> onSync() {
    long start = System.nanoTime();
    environment.sync();
    long nanos = System.nanoTime() - start;
    syncTime.record(nanos);
    events.tell(new Synced(settings.shard(), nanos));
    return this;
  }

  private Behavior<Command> onClose() {
    try {
      commitQueued();
      if (settings.sync() != SyncMode.NONE) {
        onSync();
      }
    } catch (RuntimeException e) {
      getContext().getLog().error("LMDB shard {} of cache {} failed while closing",
          settings.shard(), settings.cache(), e);
    }
    return Behaviors.stopped();
  }

  private Behavior<Command> onInjectedFailure(InjectedFailure failure) {
    throw new IllegalStateException(failure.reason());
  }

  private Behavior<Command> onHold(Hold hold) throws InterruptedException {
    hold.release().await(30, TimeUnit.SECONDS);
    return this;
  }

  /** At stop: answer every fill and flush still waiting, unpublish and close the environment. */
  private Behavior<Command> shutDown() {
    takeQueued();
    settle(batch, false);
    batch = new ArrayList<>();
    for (Command c : held) {
      if (c instanceof FlushName flush) {
        flush.replyTo().tell(0);
      }
    }
    held = new ArrayList<>();
    closeEnvironment();
    return Behaviors.same();
  }

  /** Moves every fill waiting in the shard's queue into the batch. */
  private void takeQueued() {
    Queue<Fill> queue = open.queued(settings.shard());
    for (Fill f = queue.poll(); f != null; f = queue.poll()) {
      batch.add(f);
    }
  }

  /** A WindowEnd already in the mailbox then finds an empty queue, or a new one: either is fine. */
  private void closeWindow() {
    if (windowEnd != null) {
      windowEnd.cancel();
      windowEnd = null;
    }
  }

  private void closeEnvironment() {
    if (environment == null) {
      return;
    }
    ShardEnvironment closing = environment;
    environment = null;
    open.closing(settings.shard(), closing);
    try {
      closing.close();
    } catch (RuntimeException e) {
      getContext().getLog().warn("closing LMDB shard {} of cache {} failed: {}",
          settings.shard(), settings.cache(), e.toString());
    }
  }
}
