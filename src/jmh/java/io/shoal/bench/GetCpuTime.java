package io.shoal.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * CPU time per hit of {@link AnswerCacheBenchmark}{@code .gets_t1}, per backend: the median of
 * five rounds of N gets on one thread (with their range), timed with the thread's CPU clock. Where other work shares the
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
      b.maxEntries = AnswerCacheBenchmark.MAX_ENTRIES;
      b.open(null);
      AnswerCacheBenchmark.Caller c = new AnswerCacheBenchmark.Caller();
      c.start(b);
      AnswerCacheBenchmark bench = new AnswerCacheBenchmark();
      long hits = 0;
      for (long i = 0; i < n; i++) {
        if (bench.gets_t1(b, c) != null) hits++;
      }
      double[] perGet = new double[5];
      for (int round = 0; round < perGet.length; round++) {
        long cpu0 = mx.getCurrentThreadCpuTime();
        for (long i = 0; i < n; i++) {
          if (bench.gets_t1(b, c) != null) hits++;
        }
        perGet[round] = (mx.getCurrentThreadCpuTime() - cpu0) / (double) n;
        System.out.printf("%s round %d: %.1f ns CPU per get%n", backend, round, perGet[round]);
      }
      Arrays.sort(perGet);
      double median = perGet[perGet.length / 2];
      System.out.printf("RESULT %s median %.1f ns CPU per get (%.1f-%.1f over 5 rounds) = %.2fM gets/s per core (hits %d of %d)%n",
          backend, median, perGet[0], perGet[perGet.length - 1], 1000 / median, hits, 6 * n);
      b.close();
    }
    System.exit(0);
  }
}
