package io.shoal.bench;

import io.shoal.metrics.PolicyMetrics;
import io.shoal.policy.PolicySettings;
import io.shoal.policy.ResponsePolicy;
import io.shoal.study.scenario.PolicyList;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What a big domain list costs to hold: generates a list of N names (default 1,000,000) in a
 * temporary file, loads it as {@code shoal.policy.domain_lists} does three times, and prints the
 * load time and the heap it keeps per name (used heap after a GC, before and after the load).
 * Run: {@code java -cp target/benchmarks.jar io.shoal.bench.DomainListFootprint [N]}.
 */
public final class DomainListFootprint {
  private DomainListFootprint() {}

  /**
   * Writes {@code count} distinct names shaped like a blocklist's (tracker-ish hosts under a few
   * million-ish domains): the list the policy_list study generates, seed 20.
   */
  static Path generate(int count, Path dir) throws IOException {
    Path file = dir.resolve("list-" + count + ".txt");
    PolicyList.write(file, count, 20);
    return file;
  }

  static ResponsePolicy load(Path list) {
    return ResponsePolicy.load(new PolicySettings(List.of(), PolicySettings.domainLists(List.of(list + " nxdomain"))),
        new PolicyMetrics());
  }

  private static long usedAfterGc() throws InterruptedException {
    Runtime rt = Runtime.getRuntime();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
      used = Math.min(used, rt.totalMemory() - rt.freeMemory());
    }
    return used;
  }

  public static void main(String[] args) throws Exception {
    int count = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    Path dir = Files.createTempDirectory("shoal-list");
    Path file = generate(count, dir);
    System.out.printf("list: %,d names, %,d bytes on disk (%s)%n", count, Files.size(file), file);
    ResponsePolicy keep = null;
    for (int run = 1; run <= 3; run++) {
      keep = null;
      long before = usedAfterGc();
      java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
      long cpu0 = threads.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      keep = load(file);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      long cpuMs = (threads.getCurrentThreadCpuTime() - cpu0) / 1_000_000;
      long after = usedAfterGc();
      System.out.printf("load %d: %,d ms wall, %,d ms CPU of the loading thread; heap kept %,d bytes = %.1f bytes/name (index alone %.1f bytes/name)%n",
          run, ms, cpuMs, after - before, (after - before) / (double) count,
          keep.current().indexBytes() / (double) count);
    }
    System.out.println("names held: " + keep.current().names());
    Files.delete(file);
    Files.delete(dir);
    keep = null;
    lookups(0);
    lookups(count);
  }

  /**
   * CPU time per look-up of {@link PolicyLookupBenchmark}'s operations, best of five rounds timed
   * with the thread's CPU clock: on a shared machine wall-clock time mostly measures the scheduler.
   */
  private static void lookups(int names) throws Exception {
    PolicyLookupBenchmark b = new PolicyLookupBenchmark();
    b.names = names;
    b.setUp();
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    int n = 2_000_000;
    long sink = 0;
    String[] ops = {"miss", "touchVaried", "missVaried", "hit"};
    for (String op : ops) {
      double best = Double.MAX_VALUE;
      for (int round = 0; round < 7; round++) {
        long cpu0 = mx.getCurrentThreadCpuTime();
        for (int i = 0; i < n; i++) {
          if (op.equals("touchVaried")) {
            sink += b.touchVaried();
            continue;
          }
          byte[] r = op.equals("miss") ? b.miss() : op.equals("hit") ? b.hit() : b.missVaried();
          sink += r == null ? 1 : r.length;
        }
        double ns = (mx.getCurrentThreadCpuTime() - cpu0) / (double) n;
        if (round >= 2) { // the first two warm the JIT
          best = Math.min(best, ns);
        }
      }
      System.out.printf("RESULT names=%d %s: best %.1f ns CPU per look-up%n", names, op, best);
    }
    System.out.println("(sink " + sink + ")");
  }
}
