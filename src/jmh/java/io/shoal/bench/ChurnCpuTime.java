package io.shoal.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;

/**
 * The whole process's CPU time per query of {@link AnswerCacheBenchmark}{@code .churn_t1} (a
 * look-up, and a write-behind fill when it missed) on one backend: the caller's thread, an LMDB
 * cache's shard actors and commits, the collector and the JIT. Wall-clock throughput of a caller
 * and its shards on a shared host mostly measures the scheduler; the CPU they spend per query
 * does not. Warms up for one round, then prints each round and the median with the range.
 * Run one JVM per backend (a backend's code then has the JIT to itself, as in a node):
 * {@code java -cp target/benchmarks.jar io.shoal.bench.ChurnCpuTime lmdb-periodic [queries per round] [rounds]}
 * with max_entries 8192 (half the keys) and a 100 ms commit window, the node's default.
 */
public class ChurnCpuTime {
  public static void main(String[] args) throws Exception {
    String backend = args[0];
    long n = args.length > 1 ? Long.parseLong(args[1]) : 2_000_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 7;
    OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    AnswerCacheBenchmark.Backend b = new AnswerCacheBenchmark.Backend();
    b.backend = backend;
    b.shards = 16;
    b.hotEntries = 16384;
    b.maxEntries = 8192;
    b.commitWindowMs = 100;
    b.open(null);
    AnswerCacheBenchmark.Caller c = new AnswerCacheBenchmark.Caller();
    c.start(b);
    AnswerCacheBenchmark bench = new AnswerCacheBenchmark();
    double[] nsPerQuery = new double[rounds];
    long hits = 0;
    for (int round = -1; round < rounds; round++) {
      long cpu0 = os.getProcessCpuTime();
      long roundHits = 0;
      for (long i = 0; i < n; i++) {
        if (bench.churn_t1(b, c) != null) {
          roundHits++;
        }
      }
      double ns = (os.getProcessCpuTime() - cpu0) / (double) n;
      if (round >= 0) {
        nsPerQuery[round] = ns;
        hits += roundHits;
      }
      System.out.printf("%s %s: %.0f ns CPU per query, hit rate %.1f%%%n", backend,
          round < 0 ? "warm-up" : "round " + (round + 1), ns, 100.0 * roundHits / n);
    }
    double[] sorted = nsPerQuery.clone();
    Arrays.sort(sorted);
    System.out.printf("RESULT %s median %.0f ns CPU per query (%.0f-%.0f over %d rounds of %d), hit rate %.1f%%%n",
        backend, sorted[rounds / 2], sorted[0], sorted[rounds - 1], rounds, n, 100.0 * hits / (rounds * n));
    b.close();
    System.exit(0);
  }
}
