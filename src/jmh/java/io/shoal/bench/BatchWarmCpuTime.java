package io.shoal.bench;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.TtlRules;
import io.shoal.cache.WhenFull;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * CPU time per hit of what a UDP reader does with a batch of queries once read, in a memory cache
 * of N answers: each query parsed, looked up and its reply rendered, with and without first
 * warming the cache for the whole batch from the raw packets (CacheKey.hashOfQuery, then
 * AnswerCache.warm, as the reader does). Queries are drawn at random from the N names, 16 to a
 * batch (listen.udp_batch's default), each copied into a buffer of its batch first as the reader
 * copies it out of the datagram batch. The median of five rounds of 2,000,000 queries per size and
 * mode, with their range, timed with the thread's CPU clock; the modes alternate per round.
 * Run: {@code java -cp target/benchmarks.jar io.shoal.bench.BatchWarmCpuTime 4096 100000 1000000}.
 */
public final class BatchWarmCpuTime {
  private static final int BATCH = 16;
  private static final int QUERIES = 2_000_000;
  private static final int ROUNDS = 5;

  private BatchWarmCpuTime() {}

  public static void main(String[] args) throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    TtlRules rules = new TtlRules(0, 86_400, 900, 5);
    long now = System.currentTimeMillis();
    int[] sizes = args.length == 0 ? new int[] {4096, 100_000, 1_000_000} : Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
    for (int n : sizes) {
      MemoryAnswerCache cache = new MemoryAnswerCache("warm", n, WhenFull.EVICT_ONE, new CacheMetrics("warm", "memory"));
      byte[][] packets = new byte[n][];
      for (int i = 0; i < n; i++) {
        Message q = Message.newQuery(Record.newRecord(Name.fromString("n" + i + ".bench.test."), Type.A, DClass.IN));
        q.getHeader().setID(i & 0xFFFF);
        packets[i] = q.toWire();
        CachedAnswer a = AnswerCacheFootprint.answer(i, now, rules);
        cache.fill(DnsQuery.parse(packets[i]).key(), a);
      }
      System.gc();
      Batches batches = new Batches(cache, packets, now);
      double[][] perHit = new double[2][ROUNDS];
      for (int round = -2; round < ROUNDS; round++) {
        for (int warm = 0; warm < 2; warm++) {
          long cpu0 = mx.getCurrentThreadCpuTime();
          batches.run(QUERIES, warm == 1);
          if (round >= 0) {
            perHit[warm][round] = (mx.getCurrentThreadCpuTime() - cpu0) / (double) QUERIES;
          }
        }
      }
      for (int warm = 0; warm < 2; warm++) {
        double[] r = perHit[warm];
        Arrays.sort(r);
        System.out.printf("RESULT %,d answers, %s: %.0f ns CPU per hit (%.0f-%.0f over %d rounds)%n", n,
            warm == 1 ? "batch warmed" : "not warmed", r[ROUNDS / 2], r[0], r[ROUNDS - 1], ROUNDS);
      }
      System.out.println("(checksum " + batches.sink + ")");
      cache.close();
    }
    System.exit(0);
  }

  /** The reader's work on batches of random queries; {@link #sink} keeps every read alive. */
  private static final class Batches {
    final MemoryAnswerCache cache;
    final byte[][] packets;
    final long now;
    final SplittableRandom random = new SplittableRandom(16);
    final byte[][] copied = new byte[BATCH][];
    final int[] hashes = new int[BATCH];
    final byte[] reply = new byte[65535 + 64];
    long sink;

    Batches(MemoryAnswerCache cache, byte[][] packets, long now) {
      this.cache = cache;
      this.packets = packets;
      this.now = now;
    }

    void run(int queries, boolean warm) throws Exception {
      for (int done = 0; done < queries; done += BATCH) {
        for (int i = 0; i < BATCH; i++) {
          byte[] p = packets[random.nextInt(packets.length)];
          copied[i] = Arrays.copyOf(p, p.length);
        }
        if (warm) {
          for (int i = 0; i < BATCH; i++) {
            hashes[i] = CacheKey.hashOfQuery(copied[i]);
          }
          for (int i = 0; i < BATCH; i++) {
            sink += cache.warm(hashes[i]);
          }
        }
        for (int i = 0; i < BATCH; i++) {
          DnsQuery q = DnsQuery.parse(copied[i]);
          CachedAnswer hit = cache.get(q.key(), now);
          sink += hit.renderInto(q, now, 1232, reply);
        }
      }
    }
  }
}
