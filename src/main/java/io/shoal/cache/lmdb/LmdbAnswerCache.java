package io.shoal.cache.lmdb;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.AskPattern;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.CacheSettings;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The LMDB backend of the answer cache: {@code shard_count} environments under {@code path}, each
 * written only by its {@link CacheShard} and read directly by any thread. A key belongs to the
 * shard given by {@link #shardOf}. Fills are asynchronous; the returned stage completes when the
 * shard committed the fill's transaction, or with false when the fill was dropped because the
 * shard's fill queue was full.
 */
public final class LmdbAnswerCache implements AnswerCache {
  private static final Logger log = LoggerFactory.getLogger(LmdbAnswerCache.class);

  private static final Duration FLUSH_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

  /**
   * Knobs that are not operator settings: fixed in a node, changed by tests, which may also
   * hand the shards a store of their own through {@code opener}.
   */
  public record Tuning(int fillQueueLimit, Duration minBackoff, Duration maxBackoff, ActorRef<CacheShard.Event> events,
      CacheShard.Opener opener) {

    public Tuning(int fillQueueLimit, Duration minBackoff, Duration maxBackoff, ActorRef<CacheShard.Event> events) {
      this(fillQueueLimit, minBackoff, maxBackoff, events, CacheShard.Opener.FILES);
    }

    /** 4096 waiting fills per shard; restarts after 200ms, backing off to 10s; no observer. */
    public static Tuning defaults(ActorSystem<?> system) {
      return new Tuning(4096, Duration.ofMillis(200), Duration.ofSeconds(10), system.ignoreRef());
    }
  }

  /** Spawns the cache's supervisor: the guardian's ActorContext in a node, an ActorTestKit in tests. */
  @FunctionalInterface
  public interface Spawner {
    ActorRef<CacheSupervisor.Command> spawn(Behavior<CacheSupervisor.Command> behavior, String name, Props props);
  }

  private final String name;
  private final int shardCount;
  private final ShardState[] shards;
  private final HotIndex hot;
  private final CompletableFuture<Void> started;
  private final ActorRef<CacheSupervisor.Command> supervisor;
  private final ActorSystem<?> system;
  private final Tuning tuning;
  private final CacheMetrics metrics;
  private final FailureLog readFailures = new FailureLog(log, 10);
  private final AtomicBoolean closed = new AtomicBoolean();
  private final CacheLock lock;
  private final CacheTransfer transfer;

  private LmdbAnswerCache(
      String name, ShardState[] shards, HotIndex hot, CompletableFuture<Void> started,
      ActorRef<CacheSupervisor.Command> supervisor, ActorSystem<?> system, Tuning tuning, CacheLock lock,
      CacheMetrics metrics) {
    this.name = name;
    this.hot = hot;
    this.shardCount = shards.length;
    this.shards = shards;
    this.started = started;
    this.supervisor = supervisor;
    this.system = system;
    this.tuning = tuning;
    this.lock = lock;
    this.metrics = metrics;
    this.transfer = new CacheTransfer(name, shards, started, closed, tuning.maxBackoff(), FLUSH_TIMEOUT, CLOSE_TIMEOUT);
  }

  /**
   * Opens the cache in a node: its supervisor is a child of {@code guardian}, its shards open
   * their stores through {@code stores}.
   */
  public static LmdbAnswerCache open(
      ActorContext<?> guardian, CacheSettings settings, CacheMetrics metrics, CacheShard.Opener stores) {
    Tuning defaults = Tuning.defaults(guardian.getSystem());
    return open(guardian::spawn, guardian.getSystem(), settings, metrics,
        new Tuning(defaults.fillQueueLimit(), defaults.minBackoff(), defaults.maxBackoff(), defaults.events(), stores));
  }

  /**
   * Opens (creating if needed) the cache directory and its shards. The directories are prepared
   * and locked here, so a path that cannot be used fails at once with {@link UncheckedIOException},
   * and one that another process uses with {@link CacheInUseException}; the environments open in
   * the shard actors, and until a shard is open its keys are misses.
   */
  public static LmdbAnswerCache open(
      Spawner spawner, ActorSystem<?> system, CacheSettings settings, CacheMetrics metrics, Tuning tuning) {
    LmdbSettings lmdb = settings.lmdb();
    int n = lmdb.shardCount();
    CacheLock lock = ShardFiles.prepareDirectory(lmdb.path(), n);
    try {
      return open(spawner, system, settings, metrics, tuning, lock);
    } catch (RuntimeException e) {
      lock.close();
      throw e;
    }
  }

  private static LmdbAnswerCache open(
      Spawner spawner, ActorSystem<?> system, CacheSettings settings, CacheMetrics metrics, Tuning tuning,
      CacheLock lock) {
    LmdbSettings lmdb = settings.lmdb();
    int n = lmdb.shardCount();
    long capacity = (settings.maxEntries() + n - 1) / n;
    long hot = (lmdb.hotEntries() + n - 1) / n;
    HotIndex hotIndex = new HotIndex(hot * n);
    List<ShardSettings> shards = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      shards.add(new ShardSettings(settings.name(), i, shardDirectory(lmdb.path(), i), lmdb.sync(),
          lmdb.mapSize(), settings.whenFull(), capacity, lmdb.commitWindow(), hot, hotIndex));
    }
    ShardState[] states = new ShardState[n];
    for (int i = 0; i < n; i++) {
      states[i] = new ShardState(i, capacity, hotIndex.pendingFills);
    }
    CompletableFuture<Void> started = new CompletableFuture<>();
    ActorRef<CacheSupervisor.Command> supervisor = spawner.spawn(
        CacheSupervisor.create(List.copyOf(shards), states, metrics, tuning, lmdb.syncInterval(), started),
        "lmdb-cache-" + URLEncoder.encode(settings.name(), StandardCharsets.UTF_8),
        // Off the default dispatcher: close() blocks on the supervisor's answer.
        DispatcherSelector.fromConfig(CacheSupervisor.DISPATCHER));
    return new LmdbAnswerCache(settings.name(), states, hotIndex, started, supervisor, system, tuning, lock, metrics);
  }

  /** The shard that owns {@code key} among {@code shardCount}: see {@link AnswerCodec#shardOf}. */
  public static int shardOf(CacheKey key, int shardCount) {
    return AnswerCodec.shardOf(key, shardCount);
  }

  static Path shardDirectory(Path path, int shard) {
    return AnswerCodec.shardDirectory(path, shard);
  }

  @Override
  public String name() {
    return name;
  }


  @Override
  public CachedAnswer get(CacheKey key, long nowMillis) {
    CachedAnswer held = hot.get(key, nowMillis);
    if (held != null) {
      return held;
    }
    int shard = shardOf(key, shardCount);
    try {
      // While the shard is opening, restarting or closed: a miss, never an error.
      return shards[shard].lookup(key, nowMillis);
    } catch (RuntimeException e) {
      readFailures.warn("read from shard " + shard + " of LMDB cache " + name + " failed; answered as a miss", e);
      return null;
    }
  }

  @Override
  public CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer) {
    return fill(key, answer, true);
  }

  @Override
  public void fillBehind(CacheKey key, CachedAnswer answer) {
    fill(key, answer, false);
  }

  private CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer, boolean awaited) {
    if (closed.get()) {
      return CompletableFuture.completedFuture(Boolean.FALSE);
    }
    ShardState shard = shards[shardOf(key, shardCount)];
    Fill fill = shard.offer(key, answer, awaited, tuning.fillQueueLimit());
    if (fill == null) {
      // The shard is behind (a slow disk): dropping a fill costs a later miss, queueing without
      // bound would cost the node its memory.
      metrics.fillDropped();
      return CompletableFuture.completedFuture(Boolean.FALSE);
    }
    ActorRef<CacheShard.Command> writer = shard.writer;
    if (writer == null) {
      started.thenRun(() -> shard.writer.tell(CacheShard.CommitNow.INSTANCE));
    } else if (awaited) {
      writer.tell(CacheShard.CommitNow.INSTANCE);
    } else if (shard.woken.compareAndSet(false, true)) {
      // The first write-behind fill since the shard's last commit: it starts the commit window.
      writer.tell(CacheShard.FillsQueued.INSTANCE);
    }
    // Null for a write-behind fill, whose caller does not wait.
    return fill.committed();
  }

  @Override
  public CompletionStage<Integer> flushName(String flushed, int qtype) {
    byte[] nameWire;
    try {
      nameWire = AnswerCodec.nameWire(flushed);
    } catch (IllegalArgumentException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletionStage<Integer> total = started.thenApply(v -> 0);
    for (ShardState shard : shards) {
      CompletionStage<Integer> removed = started.thenCompose(v -> {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        shard.flushes.add(new ShardState.Flush(nameWire, qtype, done));
        shard.writer.tell(CacheShard.FlushesQueued.INSTANCE);
        return done.orTimeout(FLUSH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      });
      total = total.thenCombine(removed, Integer::sum);
    }
    return total;
  }

  /**
   * Queued for the key's shard with the flushes, after the fills queued before it (so an answer
   * fetched afresh meanwhile is committed first, and stays); releases queued together go in one
   * transaction.
   */
  @Override
  public CompletionStage<Boolean> removeIfStoredBy(CacheKey key, long storedAtMillis) {
    if (closed.get()) {
      return CompletableFuture.completedFuture(Boolean.FALSE);
    }
    ShardState shard = shards[shardOf(key, shardCount)];
    return started.thenCompose(v -> {
      CompletableFuture<Boolean> done = new CompletableFuture<>();
      shard.flushes.add(new ShardState.Release(key, storedAtMillis, done));
      shard.writer.tell(CacheShard.FlushesQueued.INSTANCE);
      return done.orTimeout(FLUSH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    });
  }

  /** See {@link CacheTransfer#loadIntoRoom}. */
  @Override
  public CompletionStage<Loaded[]> loadIntoRoom(List<Keyed> answers, long nowMillis) {
    return transfer.loadIntoRoom(answers, nowMillis);
  }

  /** See {@link CacheTransfer#entries}. */
  @Override
  public void entries(BiConsumer<CacheKey, CachedAnswer> sink) {
    transfer.entries(sink);
  }

  @Override
  public long size() {
    long sum = 0;
    for (ShardState s : shards) {
      sum += s.entries;
    }
    return sum;
  }

  /** Stops the shards: each commits what it holds, syncs (unless sync = none) and closes. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      AskPattern.<CacheSupervisor.Command, Done>ask(
              supervisor, CacheSupervisor.Close::new, CLOSE_TIMEOUT, system.scheduler())
          .toCompletableFuture()
          .get(CLOSE_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      log.warn("interrupted while closing LMDB cache {}", name);
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      // The actor system may be gone already; its shards then closed their environments as they stopped.
      log.warn("LMDB cache {} did not confirm its close: {}", name, e.toString());
    } finally {
      lock.close();
    }
  }
}
