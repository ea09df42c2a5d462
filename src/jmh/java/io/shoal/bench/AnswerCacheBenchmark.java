package io.shoal.bench;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.ConfigFactory;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.cache.lmdb.LmdbAnswerCache;
import io.shoal.cache.lmdb.SyncMode;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.cache.CacheSettings;
import io.shoal.cache.lmdb.LmdbSettings;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Sets, gets and a 50/50 mix per second on the {@link AnswerCache} backends (memory, and LMDB in
 * each sync mode), beside a plain in-process map as the ceiling, with 1 and with 8 threads.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {
    "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class AnswerCacheBenchmark {
  /** Key space: a power of two so a random int masks onto it. */
  static final int KEYS = 16384;
  /** Far above KEYS, so no fill has to evict: sets and gets measure storage, not policy. */
  static final long MAX_ENTRIES = 1_000_000;
  /**
   * Write-behind fills a thread issues before it waits for them all. Bounded so the work is
   * really done inside the measurement, and small enough that 8 threads together (2,048 fills)
   * never reach a shard's fill queue limit (4,096), which would drop fills instead of storing.
   */
  static final int JOIN_EVERY = 256;
  private static final long MIB = 1L << 20;

  /** One backend per trial, filled with every key before measuring so gets hit and sets replace. */
  @State(Scope.Benchmark)
  public static class Backend {
    /** hashmap: HashMap for 1 thread, ConcurrentHashMap for 8; lmdb-MODE: the LMDB cache in that sync mode. */
    @Param({"hashmap", "memory", "lmdb-full", "lmdb-no_meta", "lmdb-periodic", "lmdb-none"})
    public String backend;

    /** LMDB shards (environments), as {@code lmdb.shard_count}; the shipped default is 16. */
    @Param("16")
    public int shards;

    /**
     * LMDB {@code hot_entries} for the whole cache: 32768 holds every key (each shard's share
     * beyond the keys it owns; gets_t1 then measures hot keys, served from the in-heap overlay);
     * 256 holds few of them (most gets miss the overlay, read LMDB and admit what they read,
     * pushing another key out: the cost of a cold key); 0 turns the overlay off.
     */
    @Param("32768")
    public long hotEntries;

    /**
     * The cache's max_entries: 1000000 holds every key; 8192 (half the keys) makes churn_t1 the
     * cache_churn recipe without the network (about half the look-ups miss, every fill evicts).
     */
    @Param("1000000")
    public long maxEntries;

    /**
     * LMDB {@code commit_window} in milliseconds: 0 commits as soon as a shard is woken (what
     * the awaited sets measure); 100 is the shipped default, under which churn_t1's write-behind
     * fills gather as a node's do.
     */
    @Param("0")
    public int commitWindowMs;

    CacheKey[] keys;
    CachedAnswer answer;
    long now;
    Map<CacheKey, CachedAnswer> map;
    AnswerCache cache;
    final LongAdder dropped = new LongAdder();
    private ActorSystem<Void> system;
    private Path dir;

    @Setup(Level.Trial)
    public void open(BenchmarkParams params) throws Exception {
      now = System.currentTimeMillis();
      answer = realAnswer(now);
      keys = new CacheKey[KEYS];
      for (int i = 0; i < KEYS; i++) {
        keys[i] = CacheKey.of("n" + i + ".example.test.", Type.A, DClass.IN, 0);
      }
      if (backend.equals("hashmap")) {
        // The ceiling: what storing a reference costs with no policy, metrics or persistence.
        map = params.getThreads() == 1 ? new HashMap<>() : new ConcurrentHashMap<>();
      } else if (backend.equals("memory")) {
        cache = new MemoryAnswerCache("bench", maxEntries, WhenFull.EVICT_ONE, new CacheMetrics("bench", "memory"));
      } else if (backend.startsWith("lmdb-")) {
        cache = openLmdb(syncMode(backend.substring("lmdb-".length())));
      } else {
        throw new IllegalArgumentException("unknown backend " + backend);
      }
      // Prefilled in rounds that stay under the shards' fill queue limit, waited for per round: one
      // commit per key would take minutes in sync = full.
      for (int from = 0; from < KEYS; from += JOIN_EVERY) {
        List<CompletableFuture<Boolean>> round = new ArrayList<>(JOIN_EVERY);
        for (int i = from; i < from + JOIN_EVERY; i++) {
          // An answer object per key, as a cache holds: one shared object would sit in the CPU's
          // cache for every hit and flatter the backends that hand back what they were given.
          CachedAnswer own = copyOf(answer);
          if (map != null) {
            map.put(keys[i], own);
          } else {
            round.add(cache.fill(keys[i], own).toCompletableFuture());
          }
        }
        for (CompletableFuture<Boolean> f : round) {
          if (!f.get(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException(backend + ": a prefill was dropped");
          }
        }
      }
      if (map == null && maxEntries >= KEYS && cache.get(keys[KEYS - 1], now) == null) {
        throw new IllegalStateException(backend + ": a prefilled key is a miss");
      }
    }

    private AnswerCache openLmdb(SyncMode sync) throws IOException {
      // ConfigFactory.load() carries shoal.lmdb-dispatcher, which the shards run on.
      system = ActorSystem.create(Behaviors.empty(), "answer-cache-benchmark", ConfigFactory.load());
      dir = Files.createTempDirectory("shoal-jmh-cache-");
      CacheSettings settings = new CacheSettings("bench", CacheSettings.Backend.LMDB, maxEntries,
          WhenFull.EVICT_ONE, Duration.ZERO, Duration.ofDays(1), Duration.ofMinutes(15), Duration.ofSeconds(5),
          new LmdbSettings(dir, shards, sync, Duration.ofSeconds(1), 64 * MIB, Duration.ofMillis(commitWindowMs), hotEntries));
      return LmdbAnswerCache.open(system::systemActorOf, system, settings, new CacheMetrics("bench", "lmdb"),
          LmdbAnswerCache.Tuning.defaults(system));
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
      if (cache != null) {
        cache.close();
      }
      if (system != null) {
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      if (dir != null) {
        try (Stream<Path> files = Files.walk(dir)) {
          for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
            Files.delete(p);
          }
        }
      }
      if (dropped.sum() > 0) {
        // Printed rather than thrown: the trial's figures stand, but overstate stored fills.
        System.out.println("WARNING: " + backend + " dropped " + dropped.sum() + " fills");
      }
    }
  }

  /** One benchmark thread's key stream and its write-behind fills not yet waited for. */
  @State(Scope.Thread)
  public static class Caller {
    private Backend backend;
    private int x;
    /** Fills made by churn_t1, so each new answer expires after those before it. */
    long fills;
    @SuppressWarnings("unchecked")
    private final CompletionStage<Boolean>[] pending = new CompletionStage[JOIN_EVERY];
    private int pendingCount;

    @Setup(Level.Trial)
    public void start(Backend backend) {
      this.backend = backend;
      x = ThreadLocalRandom.current().nextInt() | 1;
    }

    /** xorshift32: a few cycles per key, so the generator does not weigh on the cache's figures. */
    int next() {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x;
    }

    void fillBehind(CacheKey key) {
      pending[pendingCount++] = backend.cache.fill(key, backend.answer);
      if (pendingCount == JOIN_EVERY) {
        settle();
      }
    }

    private void settle() {
      for (int i = 0; i < pendingCount; i++) {
        if (!pending[i].toCompletableFuture().join()) {
          backend.dropped.increment();
        }
        pending[i] = null;
      }
      pendingCount = 0;
    }

    @TearDown(Level.Iteration)
    public void settleIteration() {
      settle();
    }
  }

  /** A copy of {@code a} in objects of its own. */
  static CachedAnswer copyOf(CachedAnswer a) {
    java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(a.encodedSize());
    a.encode(buf);
    buf.flip();
    return CachedAnswer.decode(buf);
  }

  private static SyncMode syncMode(String configName) {
    for (SyncMode m : SyncMode.values()) {
      if (m.configName().equals(configName)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown sync mode " + configName);
  }

  /** An upstream A answer as a resolver gets it (one A record, EDNS OPT), made what shoal caches. */
  static CachedAnswer realAnswer(long now) throws Exception {
    Name qname = Name.fromString("n0.example.test.");
    Message m = response(qname);
    m.addRecord(new ARecord(qname, DClass.IN, 3600, InetAddress.getByName("192.0.2.1")), Section.ANSWER);
    m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
    ScannedAnswer scan = ScannedAnswer.fromUpstream(m.toWire());
    return CachedAnswer.of(scan, now, now + scan.minTtl() * 1000);
  }

  /** An upstream's response to the A question for {@code qname}: QR, RD and RA set, no records yet. */
  static Message response(Name qname) {
    Message m = new Message(0x1234);
    m.getHeader().setFlag(Flags.QR);
    m.getHeader().setFlag(Flags.RD);
    m.getHeader().setFlag(Flags.RA);
    m.addRecord(Record.newRecord(qname, Type.A, DClass.IN), Section.QUESTION);
    return m;
  }

  private static void set(Backend b, Caller c, CacheKey key) {
    if (b.map != null) {
      b.map.put(key, b.answer);
    } else {
      c.fillBehind(key);
    }
  }

  // Method names end in _t1 / _t8: the thread count, fixed by @Threads so one run covers both.

  /** Fills without waiting for each, waiting for every JOIN_EVERY of them (the node's write-behind). */
  @Benchmark
  @Threads(1)
  public void setsWriteBehind_t1(Backend b, Caller c) {
    set(b, c, b.keys[c.next() & (KEYS - 1)]);
  }

  @Benchmark
  @Threads(8)
  public void setsWriteBehind_t8(Backend b, Caller c) {
    set(b, c, b.keys[c.next() & (KEYS - 1)]);
  }

  /** Each fill waits for its commit (ingress.fill = write-through). */
  @Benchmark
  @Threads(1)
  public boolean setsWriteThrough_t1(Backend b, Caller c) {
    return setThrough(b, b.keys[c.next() & (KEYS - 1)]);
  }

  @Benchmark
  @Threads(8)
  public boolean setsWriteThrough_t8(Backend b, Caller c) {
    return setThrough(b, b.keys[c.next() & (KEYS - 1)]);
  }

  private static boolean setThrough(Backend b, CacheKey key) {
    if (b.map != null) {
      return b.map.put(key, b.answer) != null;
    }
    return b.cache.fill(key, b.answer).toCompletableFuture().join();
  }

  /**
   * A look-up, and a write-behind fill of a new answer (expiring after every answer before it, as
   * upstream answers of one TTL do) when it missed. With {@code maxEntries} 8192, half the keys:
   * about half the look-ups miss and each fill evicts the answer that expires first. An LMDB
   * shard commits on its own thread; pinned to one core with its shards, the figure is the whole
   * cost of a query's cache work.
   */
  @Benchmark
  @Threads(1)
  public CachedAnswer churn_t1(Backend b, Caller c) {
    CacheKey key = b.keys[c.next() & (KEYS - 1)];
    CachedAnswer held = get(b, key);
    if (held == null) {
      CachedAnswer a = b.answer;
      CachedAnswer fresh = new CachedAnswer(a.wire(), a.ttlOffsets(), a.optStart(), a.optEnd(), b.now,
          b.now + 3_600_000L + c.fills++);
      if (b.map != null) {
        // The ceiling holds every key: after the first miss of each, every look-up hits.
        b.map.put(key, fresh);
      } else {
        b.cache.fillBehind(key, fresh);
      }
    }
    return held;
  }

  /** Lookups of keys that are all present: the hit path. */
  @Benchmark
  @Threads(1)
  public CachedAnswer gets_t1(Backend b, Caller c) {
    return get(b, b.keys[c.next() & (KEYS - 1)]);
  }

  @Benchmark
  @Threads(8)
  public CachedAnswer gets_t8(Backend b, Caller c) {
    return get(b, b.keys[c.next() & (KEYS - 1)]);
  }

  private static CachedAnswer get(Backend b, CacheKey key) {
    return b.map != null ? b.map.get(key) : b.cache.get(key, b.now);
  }

  /** Half gets, half write-behind sets, on random keys. */
  @Benchmark
  @Threads(1)
  public CachedAnswer mix_t1(Backend b, Caller c) {
    return mix(b, c);
  }

  @Benchmark
  @Threads(8)
  public CachedAnswer mix_t8(Backend b, Caller c) {
    return mix(b, c);
  }

  private static CachedAnswer mix(Backend b, Caller c) {
    int r = c.next();
    CacheKey key = b.keys[r & (KEYS - 1)];
    // The top bit is independent enough of the low key bits for a 50/50 split.
    if (r < 0) {
      set(b, c, key);
      return null;
    }
    return get(b, key);
  }
}
