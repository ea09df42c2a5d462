package io.shoal.study.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs one process under a CPU quota of its own, as a Kubernetes CPU limit bounds a pod: a share
 * of one CPU per CFS period, enforced by the kernel. Where the cgroup v1 cpu controller is mounted
 * at {@code /sys/fs/cgroup/cpu} (and the study may write there), each process gets a group of its
 * own with {@code cpu.cfs_quota_us}; the command is wrapped so that the process writes its own PID
 * into the group and then execs, so start-up and the JIT run under the quota too, and the PID the
 * study tracks stays that of the server. Elsewhere (cgroup v2) {@code systemd-run --scope -p
 * CPUQuota=} does the same through systemd. Neither: {@link #check} says so before anything starts.
 *
 * <p>A quota can also be made <em>deferred</em> ({@link #deferred}): the process starts in its group
 * with no limit but the weight, and the quota applies from {@link #enforce} on. That is how a
 * study warms a node up before measuring it (a JVM held to a quarter of a CPU is still compiling
 * minutes after its start, and its compiler's CPU is then charged to the queries measured); the
 * JVM is told the processor count the quota gives it ({@link #jvmOptions}), so it sizes its
 * collector and thread pools as it would under the quota from the start.
 *
 * <p>The groups this class made are removed when their process has exited ({@link #remove}), and
 * from a shutdown hook when the study is interrupted: a group can only be removed once empty, so
 * the hook waits (bounded) for the processes, which the study's own hook stops meanwhile.
 */
public final class CpuQuota {
  /** The cgroup v1 cpu controller's mount point. */
  static final Path V1_ROOT = Path.of("/sys/fs/cgroup/cpu");
  /** The CFS period a quota is a share of unless told otherwise: the kernel's default, and Kubernetes's. */
  public static final Duration DEFAULT_PERIOD = Duration.ofMillis(100);
  /** The kernel's bounds for a CFS period, and its smallest quota within one. */
  static final long MIN_PERIOD_US = 1_000;
  static final long MAX_PERIOD_US = 1_000_000;
  static final long MIN_QUOTA_US = 1_000;
  /**
   * The weight of the study's groups against the host's other tasks (1024 each): ten tasks' worth.
   * A quota caps a group; it does not reserve anything, and on a busy host a group of default
   * weight gets a task's share of the cores, possibly less than its quota. The weight stands in for
   * what a pod's request does on its machine: the group gets its quota whenever it wants it.
   */
  static final long SHARES = 10240;
    /** How long removing a group waits for its processes to leave it. */
  private static final Duration REMOVE_LIMIT = Duration.ofSeconds(20);
  private static final Set<Path> MADE = ConcurrentHashMap.newKeySet();
  private static final Thread HOOK = new Thread(CpuQuota::removeAll, "study-cgroup-cleanup");
  private static boolean hooked;

  /** How a process is put under its quota. */
  public enum Mechanism { CGROUP_V1, SYSTEMD_RUN }

  private final double cpus;
  /** The CFS period in microseconds: the process may run cpus x period in each one. */
  private final long periodMicros;
  private final Mechanism mechanism;
  private final Path group;
  private final String systemdRun;
  /** The systemd scope's unit name, so a deferred quota can be set on it later; null with cgroup v1. */
  private final String unit;
  private volatile boolean enforced;

  private CpuQuota(double cpus, long periodMicros, Mechanism mechanism, Path group, String systemdRun, String unit,
      boolean enforced) {
    this.cpus = cpus;
    this.periodMicros = periodMicros;
    this.mechanism = mechanism;
    this.group = group;
    this.systemdRun = systemdRun;
    this.unit = unit;
    this.enforced = enforced;
  }

  /**
   * Which mechanism this host offers, or a clear failure saying why none is usable. Called before a
   * quota-bound study starts anything.
   */
  public static Mechanism check() throws StudyException {
    if (Files.isWritable(V1_ROOT.resolve("cgroup.procs")) && Files.exists(V1_ROOT.resolve("cpu.cfs_quota_us"))) {
      return Mechanism.CGROUP_V1;
    }
    String systemdRun = onPath("systemd-run");
    if (systemdRun != null && Files.exists(Path.of("/sys/fs/cgroup/cgroup.controllers"))) {
      return Mechanism.SYSTEMD_RUN;
    }
    throw new StudyException("recipe.cpu_quota needs a CPU quota per process: neither a writable cgroup v1 cpu "
        + "controller at " + V1_ROOT + " (run the study as root) nor systemd-run on a cgroup v2 host was found");
  }

  /**
   * Makes the quota of {@code cpus} CPUs in each CFS {@code period} for one process called {@code
   * name} (letters, digits, '-', '.', '_'); with cgroup v1 the group exists from here on and is
   * removed by {@link #remove}.
   */
  public static CpuQuota make(String name, double cpus, Duration period) throws StudyException {
    return group(name, cpus, checkedPeriod(cpus, period), false);
  }

  /**
   * A quota of {@code cpus} CPUs per {@code period} for one process called {@code name} that does
   * not limit it yet: the process runs with the group's weight only until {@link #enforce}.
   */
  public static CpuQuota deferred(String name, double cpus, Duration period) throws StudyException {
    return group(name, cpus, checkedPeriod(cpus, period), true);
  }

  /**
   * The period in microseconds, if the kernel takes it with this quota: a period from 1 ms to 1 s,
   * and at least 1 ms of CPU in it (so 0.25 CPU needs a period of 4 ms or more).
   */
  public static long checkedPeriod(double cpus, Duration period) {
    if (!(cpus > 0) || cpus > 64) {
      throw new IllegalArgumentException("a CPU quota from 0 (exclusive) to 64 CPUs, is " + cpus);
    }
    long us = period.toNanos() / 1_000;
    if (us < MIN_PERIOD_US || us > MAX_PERIOD_US) {
      throw new IllegalArgumentException("a CFS period from 1 ms to 1 s, is " + period.toMillis() + " ms");
    }
    if (Math.round(cpus * us) < MIN_QUOTA_US) {
      throw new IllegalArgumentException("a quota of " + cpus + " CPU in a " + us + " us period is "
          + Math.round(cpus * us) + " us, under the kernel's smallest quota of 1 ms: take a period of at least "
          + (long) Math.ceil(MIN_QUOTA_US / cpus) + " us");
    }
    return us;
  }

  /**
   * A group without a quota but with the same weight, for the load generators: on a busy host they
   * must not be what runs out. With systemd-run, a scope of the same weight ({@code CPUWeight}).
   */
  public static CpuQuota weightOnly(String name) throws StudyException {
    return group(name, 0, DEFAULT_PERIOD.toNanos() / 1_000, false);
  }

  private static CpuQuota group(String name, double cpus, long periodMicros, boolean deferred) throws StudyException {
    Mechanism m = check();
    String groupName = "shoal-study-" + ProcessHandle.current().pid() + "-" + name.replaceAll("[^A-Za-z0-9._-]", "-");
    if (m == Mechanism.SYSTEMD_RUN) {
      return new CpuQuota(cpus, periodMicros, m, null, onPath("systemd-run"), groupName + ".scope", !deferred);
    }
    Path group = V1_ROOT.resolve(groupName);
    try {
      registerHook();
      Files.createDirectory(group);
      MADE.add(group);
      write(group.resolve("cpu.shares"), Long.toString(SHARES));
      write(group.resolve("cpu.cfs_period_us"), Long.toString(periodMicros));
      // -1: no quota (a weight-only group)
      write(group.resolve("cpu.cfs_quota_us"), cpus > 0 && !deferred ? quotaMicros(cpus, periodMicros) : "-1");
    } catch (IOException e) {
      throw new StudyException("cannot make the cgroup " + group + " for a CPU quota of " + cpus + ": "
          + e.getMessage(), e);
    }
    return new CpuQuota(cpus, periodMicros, m, group, null, null, !deferred);
  }

  private static String quotaMicros(double cpus, long periodMicros) {
    return Long.toString(Math.round(cpus * periodMicros));
  }

  /** The systemd properties that set this quota on a scope: its share and its period. */
  private List<String> systemdQuota() {
    return List.of("CPUQuota=" + Math.round(cpus * 100) + "%", "CPUQuotaPeriodSec=" + periodMicros + "us");
  }

  /** A CFS period as the studies say it: "100 ms", "4 ms", "2.5 ms". */
  public static String periodText(Duration period) {
    long us = period.toNanos() / 1_000;
    return us % 1_000 == 0 ? us / 1_000 + " ms" : String.format(Locale.ROOT, "%.1f ms", us / 1_000.0);
  }

  /**
   * Options for the JVM started under this quota: a deferred quota's JVM is told the processors the
   * quota will give it (the JDK reads the quota at start, and there is none yet); none otherwise.
   */
  public List<String> jvmOptions() {
    return enforced || cpus <= 0 ? List.of() : List.of("-XX:ActiveProcessorCount=" + (int) Math.ceil(cpus));
  }

  /** True once the quota limits the process (from its start unless {@link #deferred}). */
  public boolean enforced() {
    return enforced;
  }

  /** Applies a deferred quota now; nothing when it already applies. */
  public void enforce() throws StudyException {
    if (enforced || cpus <= 0) {
      return;
    }
    try {
      if (mechanism == Mechanism.CGROUP_V1) {
        write(group.resolve("cpu.cfs_quota_us"), quotaMicros(cpus, periodMicros));
      } else {
        List<String> cmd = new ArrayList<>(List.of("systemctl", "set-property", "--runtime", unit));
        cmd.addAll(systemdQuota());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
          throw new StudyException("cannot set the CPU quota of " + unit + ": systemctl set-property said: " + said);
        }
      }
    } catch (IOException e) {
      throw new StudyException("cannot set the CPU quota of " + (group != null ? group : unit) + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted while setting the CPU quota of " + unit, e);
    }
    enforced = true;
  }

  /** {@code command} wrapped so that it runs under this quota from its first instruction, with the same PID. */
  public List<String> wrap(List<String> command) {
    List<String> cmd = new ArrayList<>();
    if (mechanism == Mechanism.SYSTEMD_RUN) {
      // --scope runs the command in systemd-run's own process: the PID is the server's
      cmd.addAll(List.of(systemdRun, "--scope", "--quiet", "--collect", "--unit=" + unit,
          "-p", "CPUWeight=" + SHARES * 100 / 1024));
      if (cpus > 0 && enforced) {
        for (String property : systemdQuota()) {
          cmd.addAll(List.of("-p", property));
        }
      }
      cmd.add("--");
    } else {
      cmd.addAll(List.of("/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"",
          group.resolve("cgroup.procs").toString()));
    }
    cmd.addAll(command);
    return cmd;
  }


  /**
   * The group's {@code cpu.stat} (nr_periods, nr_throttled, throttled_time), or null with
   * systemd-run, whose scope the study does not read.
   */
  public String stat() throws IOException {
    if (group == null) {
      return null;
    }
    return Files.readString(group.resolve("cpu.stat"), StandardCharsets.UTF_8);
  }

  /** Removes the group once its process has exited (waits, bounded, for it to be empty); idempotent. */
  public void remove() {
    if (group != null) {
      removeGroup(group);
    }
  }

  private static synchronized void registerHook() {
    if (!hooked) {
      Runtime.getRuntime().addShutdownHook(HOOK);
      hooked = true;
    }
  }

  private static void removeAll() {
    for (Path g : List.copyOf(MADE)) {
      removeGroup(g);
    }
  }

  private static void removeGroup(Path group) {
    long deadline = System.nanoTime() + REMOVE_LIMIT.toNanos();
    while (true) {
      try {
        // rmdir: a cgroup directory goes with its control files, once no process is left in it
        Files.delete(group);
        MADE.remove(group);
        return;
      } catch (NoSuchFileException gone) {
        MADE.remove(group);
        return;
      } catch (IOException busy) {
        if (System.nanoTime() > deadline) {
          System.err.println("study: cannot remove " + group + " (" + busy.getMessage() + "); remove it with rmdir "
              + "once its processes have exited");
          return;
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  private static void write(Path file, String value) throws IOException {
    Files.writeString(file, value, StandardCharsets.US_ASCII);
  }

  private static String onPath(String binary) {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(java.io.File.pathSeparator)) {
      Path p = Path.of(dir, binary);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return null;
  }
}
