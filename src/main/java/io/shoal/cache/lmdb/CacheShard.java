package io.shoal.cache.lmdb;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.PostStop;
import akka.actor.typed.PreRestart;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.ArrayList;
import java.util.List;
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
 * mailbox are group-committed, one write transaction (and, in sync = full, one fsync) for all of
 * them. Readers never come here; they read the environment directly.
 */
public final class CacheShard extends AbstractBehavior<CacheShard.Command> {

  /** What a cache shard accepts. */
  public interface Command {}

  /**
   * Store {@code answer} under {@code key}. {@code committed} completes with true once the
   * transaction holding it committed, false if it was dropped. A future rather than a
   * {@code replyTo}: fills come from AnswerCache callers that are not actors, and an ask per fill
   * would spawn a temporary actor on the hot path.
   */
  public record Fill(CacheKey key, CachedAnswer answer, CompletableFuture<Boolean> committed) implements Command {}

  /** Remove every answer for the wire-form {@code name}; replies with how many went. */
  public record FlushName(byte[] name, int qtype, ActorRef<Integer> replyTo) implements Command {}

  /** Force written pages to disk: the CacheSupervisor's periodic sync. */
  public enum Sync implements Command { INSTANCE }

  /** Commit what is gathered, sync (unless sync = none), close the environment and stop. */
  public enum Close implements Command { INSTANCE }

  /** Sent to self by the first Fill of a batch: every Fill queued before it joins that batch. */
  private enum FlushBatch implements Command { INSTANCE }

  /** Tests only: fail the way a broken environment would, to exercise the supervisor's restart. */
  record InjectedFailure(String reason) implements Command {}

  /** Tests only: hold the shard until released, so that fills pile up in its mailbox. */
  record Hold(CountDownLatch release) implements Command {}

  /** What a shard reports to an observer (tests and studies; the node passes an ignoring ref). */
  public interface Event {}

  /** One write transaction committed {@code fills} answers in {@code nanos} (puts and commit). */
  public record Committed(int shard, int fills, long nanos) implements Event {}

  /** One forced sync of the environment took {@code nanos}. */
  public record Synced(int shard, long nanos) implements Event {}

  /** Room-making rounds per fill that does not fit the map: two evictions, then growth. */
  private static final int MAX_MAP_ROUNDS = 6;
  private static final int EVICTION_ROUNDS = 2;

  private final ShardSettings settings;
  private final OpenShards open;
  private final CacheMetrics metrics;
  private final ActorRef<Event> events;
  private final ShardEnvironment environment;
  private final Histogram batchSize;
  private final Timer commitTime;
  private final Timer syncTime;
  private final Counter mapGrown;
  private List<Fill> batch = new ArrayList<>();
  private boolean flushScheduled;

  /** The shard's behavior; opening its environment happens here, so a restart reopens it. */
  static Behavior<Command> create(
      ShardSettings settings, OpenShards open, CacheMetrics metrics, ActorRef<Event> events) {
    return Behaviors.setup(ctx -> new CacheShard(ctx, settings, open, metrics, events));
  }

  private CacheShard(
      ActorContext<Command> context, ShardSettings settings, OpenShards open, CacheMetrics metrics,
      ActorRef<Event> events) {
    super(context);
    this.settings = settings;
    this.open = open;
    this.metrics = metrics;
    this.events = events;
    TagSet tags = TagSet.of("cache", settings.cache()).withTag("shard", String.valueOf(settings.shard()));
    this.batchSize = Kamon.histogram("shoal.lmdb.commit.batch.size", "Fills committed per LMDB write transaction")
        .withTags(tags);
    var durations = Kamon.timer("shoal.lmdb.sync", "LMDB commit and forced-sync durations");
    this.commitTime = durations.withTags(tags.withTag("kind", "commit"));
    this.syncTime = durations.withTags(tags.withTag("kind", "sync"));
    this.mapGrown = Kamon.counter("shoal.lmdb.map.grown", "LMDB maps grown because eviction could not make room")
        .withTags(tags);
    this.environment = ShardEnvironment.open(settings, metrics);
    open.opened(settings.shard(), environment);
    metrics.entries(settings.shard(), environment.entries());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Fill.class, this::onFill)
        .onMessageEquals(FlushBatch.INSTANCE, this::onFlushBatch)
        .onMessage(FlushName.class, this::onFlushName)
        .onMessageEquals(Sync.INSTANCE, this::onSync)
        .onMessageEquals(Close.INSTANCE, this::onClose)
        .onMessage(InjectedFailure.class, this::onInjectedFailure)
        .onMessage(Hold.class, this::onHold)
        .onSignal(PreRestart.class, signal -> shutDown())
        .onSignal(PostStop.class, signal -> shutDown())
        .build();
  }

  private Behavior<Command> onFill(Fill fill) {
    batch.add(fill);
    if (!flushScheduled) {
      flushScheduled = true;
      if (settings.commitWindow().isZero()) {
        // Commit once the fills already in the mailbox have joined the batch.
        getContext().getSelf().tell(FlushBatch.INSTANCE);
      } else {
        // Wait for more fills: fewer, larger transactions copy fewer B+tree pages per fill
        // (and sync fewer times). Readers see the batch meanwhile through the cache's overlay.
        getContext().scheduleOnce(settings.commitWindow(), getContext().getSelf(), FlushBatch.INSTANCE);
      }
    }
    return this;
  }

  private Behavior<Command> onFlushBatch() {
    flushScheduled = false;
    commitBatch();
    return this;
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
    for (Fill f : fills) {
      f.committed().complete(stored);
    }
    open.pendingFills(settings.shard()).addAndGet(-fills.size());
  }

  private void entriesChanged() {
    long n = environment.entries();
    open.entries(settings.shard(), n);
    metrics.entries(settings.shard(), n);
  }

  private Behavior<Command> onFlushName(FlushName flush) {
    // Fills queued before the flush belong before it.
    commitBatch();
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
    commitBatch();
    if (settings.sync() != SyncMode.NONE) {
      onSync();
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

  /** Before a restart or at stop: answer gathered fills, unpublish and close the environment. */
  private Behavior<Command> shutDown() {
    settle(batch, false);
    batch = new ArrayList<>();
    open.closing(settings.shard(), environment);
    environment.close();
    return this;
  }
}
