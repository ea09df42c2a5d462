package io.shoal.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.lmdbjava.ByteBufferProxy;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.Txn;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Plain lmdbjava, no shoal code: loads N values of 6 KiB under sorted 4-byte keys into a fresh
 * environment, 1,000 puts per write transaction, and reports items/s and bytes/s. Compares a
 * map sized up front with one grown on demand, and fsync per commit with MDB_NOSYNC.
 */
// Throughput of whole loads, each into a fresh environment set up (and deleted) outside the timed
// call: unlike SingleShotTime, this mode reports the items and bytes counters as rates. A 1M load
// outlasts an iteration, so it is then one load per iteration, i.e. a single shot.
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 3)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {
    "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
@State(Scope.Benchmark)
public class LmdbBatchWriteBenchmark {
  static final int VALUE_SIZE = 6 * 1024;
  static final int PUTS_PER_TXN = 1_000;
  /** Sized up front: 64 GiB of address space; the file still grows only with what is written. */
  static final long PREALLOCATED_MAP = 64L << 30;
  /** Grown on demand from LMDB's own default map size, doubling at each MDB_MAP_FULL. */
  static final long INITIAL_MAP = 1L << 20;

  /** Entries per load. */
  @Param({"5000", "10000", "100000", "1000000"})
  public int entries;

  /** preallocated: map sized up front; grown: start at 1 MiB, double and retry on MDB_MAP_FULL. */
  @Param({"preallocated", "grown"})
  public String map;

  /** durable: LMDB's default (fsync at every commit); nosync: MDB_NOSYNC (the OS writes back when it likes). */
  @Param({"durable", "nosync"})
  public String sync;

  private Path dir;
  private Env<ByteBuffer> env;
  private Dbi<ByteBuffer> db;
  private final ByteBuffer key = ByteBuffer.allocateDirect(Integer.BYTES);
  private ByteBuffer value;

  /** What the loads wrote; JMH divides by their time, so these are reported as items/s and bytes/s. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Written {
    public long items;
    public long bytes;

    // JMH resets aux counters before each iteration.
  }

  @Setup(Level.Trial)
  public void values() {
    value = ByteBuffer.allocateDirect(VALUE_SIZE);
    byte[] bytes = new byte[VALUE_SIZE];
    // Random bytes: nothing below LMDB compresses, but an all-zero page could still flatter a disk.
    new Random(42).nextBytes(bytes);
    value.put(bytes).flip();
  }

  /** A fresh, empty environment per load, so every load measures the same thing. */
  @Setup(Level.Invocation)
  public void openEnvironment() throws IOException {
    dir = Files.createTempDirectory("shoal-jmh-lmdb-");
    EnvFlags[] flags = sync.equals("nosync") ? new EnvFlags[] {EnvFlags.MDB_NOSYNC} : new EnvFlags[0];
    env = Env.create(ByteBufferProxy.PROXY_OPTIMAL)
        .setMapSize(map.equals("preallocated") ? PREALLOCATED_MAP : INITIAL_MAP)
        .setMaxDbs(1)
        .open(dir.toFile(), flags);
    db = env.openDbi("values", DbiFlags.MDB_CREATE);
  }

  @TearDown(Level.Invocation)
  public void deleteEnvironment() throws IOException {
    env.close();
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }

  @Benchmark
  public void load(Written written) {
    for (int from = 0; from < entries; from += PUTS_PER_TXN) {
      int to = Math.min(entries, from + PUTS_PER_TXN);
      while (true) {
        try {
          writeBatch(from, to);
          break;
        } catch (Env.MapFullException e) {
          // The transaction was aborted by the try-with-resources; no transaction is open now,
          // which LMDB requires for a resize. The retry redoes the whole batch of puts.
          env.setMapSize(env.info().mapSize * 2);
        }
      }
      written.items += to - from;
      written.bytes += (long) (to - from) * VALUE_SIZE;
    }
  }

  private void writeBatch(int from, int to) {
    try (Txn<ByteBuffer> txn = env.txnWrite()) {
      for (int i = from; i < to; i++) {
        key.clear();
        // Big-endian, so ascending ints are ascending keys in LMDB's byte-wise order.
        key.putInt(i).flip();
        // put reads the value's position and limit without moving them: one buffer serves every put.
        db.put(txn, key, value);
      }
      txn.commit();
    }
  }
}
