package io.shoal.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * CPU time per DNSSEC signature check of {@link SignatureCheckBenchmark}{@code .check}, per
 * algorithm and provider: after a warm-up, {@code rounds} rounds of checks on one thread, each
 * timed with the thread's CPU clock (native code on the thread included, so Conscrypt's BoringSSL
 * counts), and the median and range of the rounds as checks per CPU-second: per core, the unit
 * of {@code openssl speed}. Where other work shares the machine, wall-clock throughput mostly
 * measures the scheduler; CPU time per check does not.
 * Run: {@code java -cp target/benchmarks.jar io.shoal.bench.SignatureCpuTime
 * rsasha256,ecdsap256,ecdsap384,ed25519 dnsjava,jdk,conscrypt [rounds] [cpu_ms_per_round]}.
 */
public class SignatureCpuTime {
  public static void main(String[] args) throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 7;
    long roundNanos = (args.length > 3 ? Long.parseLong(args[3]) : 500) * 1_000_000L;
    for (String algorithm : args[0].split(",")) {
      for (String provider : args[1].split(",")) {
        SignatureCheckBenchmark b = new SignatureCheckBenchmark();
        b.algorithm = algorithm;
        b.provider = provider;
        try {
          b.setUp();
        } catch (IllegalStateException e) {
          System.out.printf("RESULT %s %s: not measured (%s)%n", algorithm, provider, e.getMessage());
          continue;
        }
        // Warm-up: as long as the rounds together, so the JIT has compiled the path.
        long warm = mx.getCurrentThreadCpuTime();
        long n = 0;
        while (mx.getCurrentThreadCpuTime() - warm < roundNanos * 2) {
          b.check();
          n++;
        }
        // Each round makes as many checks as the warm-up made in a round's time.
        long perRound = Math.max(10, n / 2);
        double[] rates = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          long cpu0 = mx.getCurrentThreadCpuTime();
          for (long i = 0; i < perRound; i++) {
            b.check();
          }
          long cpu = mx.getCurrentThreadCpuTime() - cpu0;
          rates[r] = perRound * 1e9 / cpu;
          System.out.printf("%s %s round %d: %d checks in %.1f ms CPU = %.0f checks/s%n", algorithm, provider, r,
              perRound, cpu / 1e6, rates[r]);
        }
        Arrays.sort(rates);
        double median = rates[rounds / 2];
        System.out.printf("RESULT %s %s median %.0f checks per CPU-second (%.1f us per check), range %.0f-%.0f, %d rounds%n",
            algorithm, provider, median, 1e6 / median, rates[0], rates[rounds - 1], rounds);
      }
    }
    System.exit(0);
  }
}
