package io.shoal.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CPU time per hit of {@link AnswerCacheBenchmark}{@code .gets_t1}, per backend: the best of five
 * rounds of N gets on one thread, timed with the thread's CPU clock. Where other work shares the
 * machine, wall-clock throughput mostly measures the scheduler; CPU time per get does not.
 * Run: {@code java -cp target/benchmarks.jar io.shoal.bench.GetCpuTime memory,lmdb-none 1000000 [hot_entries]}
 * (hot_entries as the benchmark's parameter, 16384 when not given).
 */
public class GetCpuTime {
  public static void main(String[] args) throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long n = Long.parseLong(args[1]);
    for (String backend : args[0].split(",")) {
      AnswerCacheBenchmark.Backend b = new AnswerCacheBenchmark.Backend();
      b.backend = backend;
      b.shards = 16;
      b.hotEntries = args.length > 2 ? Long.parseLong(args[2]) : 16384;
      b.open(null);
      AnswerCacheBenchmark.Caller c = new AnswerCacheBenchmark.Caller();
      c.start(b);
      AnswerCacheBenchmark bench = new AnswerCacheBenchmark();
      long hits = 0;
      for (long i = 0; i < n; i++) {
        if (bench.gets_t1(b, c) != null) hits++;
      }
      double best = Double.MAX_VALUE;
      for (int round = 0; round < 5; round++) {
        long cpu0 = mx.getCurrentThreadCpuTime();
        for (long i = 0; i < n; i++) {
          if (bench.gets_t1(b, c) != null) hits++;
        }
        double ns = (mx.getCurrentThreadCpuTime() - cpu0) / (double) n;
        best = Math.min(best, ns);
        System.out.printf("%s round %d: %.1f ns CPU per get%n", backend, round, ns);
      }
      System.out.printf("RESULT %s best %.1f ns CPU per get = %.2fM gets/s per core (hits %d of %d)%n",
          backend, best, 1000 / best, hits, 6 * n);
      b.close();
    }
    System.exit(0);
  }
}
