package io.shoal.study.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A process started through a quota's wrapper runs in its own cgroup, with its PID, and the group goes after it. */
class CpuQuotaTest {

  @Test
  void aWrappedProcessStartsInsideItsGroupUnderTheQuotaAndTheGroupIsRemovedAfterIt() throws Exception {
    assumeTrue(Files.isWritable(CpuQuota.V1_ROOT.resolve("cgroup.procs")),
        "a writable cgroup v1 cpu controller (root on a cgroup v1 host)");
    CpuQuota quota = CpuQuota.make("cpu-quota-test-" + System.nanoTime(), 0.2, java.time.Duration.ofMillis(10));
    Path group = null;
    try {
      // the process prints its own PID and its cgroups: the wrapper must exec, not fork
      Process p = new ProcessBuilder(quota.wrap(List.of("/bin/sh", "-c", "echo $$; cat /proc/self/cgroup")))
          .redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(30, TimeUnit.SECONDS));
      assertEquals(0, p.exitValue(), out);
      List<String> lines = out.lines().toList();
      assertEquals(Long.toString(p.pid()), lines.get(0), "the PID the study tracks is the server's: " + out);
      String cpuLine = lines.stream().filter(l -> l.matches("\\d+:([^:]*,)?cpu(,[^:]*)?:.*")).findFirst().orElseThrow();
      String name = cpuLine.substring(cpuLine.lastIndexOf('/') + 1);
      assertTrue(name.startsWith("shoal-study-" + ProcessHandle.current().pid() + "-cpu-quota-test-"), cpuLine);
      group = CpuQuota.V1_ROOT.resolve(name);
      assertEquals("2000", Files.readString(group.resolve("cpu.cfs_quota_us")).strip());
      assertEquals("10000", Files.readString(group.resolve("cpu.cfs_period_us")).strip());
      assertTrue(quota.stat().contains("nr_throttled"), quota.stat());
    } finally {
      quota.remove();
    }
    assertFalse(Files.exists(group), group + " is removed once its process has exited");
  }

  @Test
  void aDeferredQuotaLimitsItsProcessOnlyOnceEnforced() throws Exception {
    assumeTrue(Files.isWritable(CpuQuota.V1_ROOT.resolve("cgroup.procs")),
        "a writable cgroup v1 cpu controller (root on a cgroup v1 host)");
    CpuQuota quota = CpuQuota.deferred("cpu-quota-deferred-test-" + System.nanoTime(), 0.3, CpuQuota.DEFAULT_PERIOD);
    Process p = null;
    try {
      // the JVM reads the quota at its start, when there is none yet: it is told the processor count
      assertEquals(List.of("-XX:ActiveProcessorCount=1"), quota.jvmOptions());
      assertFalse(quota.enforced());
      p = new ProcessBuilder(quota.wrap(List.of("/bin/sh", "-c", "cat /proc/self/cgroup; exec sleep 30")))
          .redirectErrorStream(true).start();
      String cpuLine = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
          .lines().filter(l -> l.matches("\\d+:([^:]*,)?cpu(,[^:]*)?:.*")).findFirst().orElseThrow();
      Path group = CpuQuota.V1_ROOT.resolve(cpuLine.substring(cpuLine.lastIndexOf('/') + 1));
      assertEquals("-1", Files.readString(group.resolve("cpu.cfs_quota_us")).strip(), "no limit before enforce");
      quota.enforce();
      assertEquals("30000", Files.readString(group.resolve("cpu.cfs_quota_us")).strip());
      assertTrue(quota.enforced());
      assertEquals(List.of(), quota.jvmOptions(), "a JVM started under an enforced quota reads it itself");
    } finally {
      if (p != null) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      quota.remove();
    }
  }

  @Test
  void aQuotaIsAPositiveShareOfACpu() {
    assertThrows(IllegalArgumentException.class, () -> CpuQuota.make("x", 0, CpuQuota.DEFAULT_PERIOD));
    assertThrows(IllegalArgumentException.class, () -> CpuQuota.make("x", 65, CpuQuota.DEFAULT_PERIOD));
  }

  @Test
  void theStudiesNameAPeriodInMilliseconds() {
    assertEquals("100 ms", CpuQuota.periodText(java.time.Duration.ofMillis(100)));
    assertEquals("4 ms", CpuQuota.periodText(java.time.Duration.ofMillis(4)));
    assertEquals("2.5 ms", CpuQuota.periodText(java.time.Duration.ofNanos(2_500_000)));
  }

  @Test
  void aPeriodIsOneTheKernelTakesWithItsQuota() {
    assertEquals(4_000, CpuQuota.checkedPeriod(0.25, java.time.Duration.ofMillis(4)));
    assertEquals(100_000, CpuQuota.checkedPeriod(0.25, CpuQuota.DEFAULT_PERIOD));
    // under 1 ms, over 1 s, and 0.25 CPU of a 2 ms period (0.5 ms: under the smallest quota)
    assertThrows(IllegalArgumentException.class, () -> CpuQuota.checkedPeriod(1, java.time.Duration.ofNanos(999_000)));
    assertThrows(IllegalArgumentException.class, () -> CpuQuota.checkedPeriod(1, java.time.Duration.ofMillis(1_001)));
    IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
        () -> CpuQuota.checkedPeriod(0.25, java.time.Duration.ofMillis(2)));
    assertTrue(small.getMessage().contains("at least 4000 us"), small.getMessage());
  }
}
