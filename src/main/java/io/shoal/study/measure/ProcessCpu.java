package io.shoal.study.measure;

import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * CPU time of the processes that serve a member, read from {@code /proc/PID/stat}: user plus
 * system time (fields 14 and 15), in clock ticks, summed over the processes. Read just before and
 * just after the measured dnsperf run, the difference over the queries completed is the member's
 * CPU per answered query, which is steadier than QPS on a shared host.
 */
public final class ProcessCpu {
  /** utime and stime are fields 14 and 15 of the line, counting the pid as field 1. */
  private static final int UTIME_FIELD = 14;
  /** Fields from the state (field 3) on are separated by single spaces after the name's ")". */
  private static final int FIRST_FIELD_AFTER_NAME = 3;
  private static final Duration GETCONF_LIMIT = Duration.ofSeconds(10);

  /**
   * One reading of a member's processes.
   *
   * @param ticks utime + stime summed over the processes, in clock ticks
   * @param compilerTicks the part of {@code ticks} spent by JIT compiler threads (HotSpot's "C1
   *     CompilerThread" and "C2 CompilerThread"), summed over the threads alive at the reading
   */
  public record Sample(long ticks, long compilerTicks) {}

  /** HotSpot's compiler threads, as the kernel keeps their names (15 characters). */
  private static boolean compilerThread(String comm) {
    return comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre");
  }

  /**
   * utime + stime of {@code pid}'s JIT compiler threads, from /proc/PID/task/TID/stat; their lines
   * go to {@code text}. A thread that ended between the listing and the read is skipped (HotSpot
   * starts and stops compiler threads as the queue grows and shrinks, so a sum over time can
   * only undercount).
   */
  private static long compilerTicks(long pid, StringBuilder text) throws IOException {
    long ticks = 0;
    Path tasks = Path.of("/proc", Long.toString(pid), "task");
    try (var threads = Files.list(tasks)) {
      for (Path t : threads.toList()) {
        try {
          String comm = Files.readString(t.resolve("comm"), StandardCharsets.UTF_8).strip();
          if (compilerThread(comm)) {
            String line = Files.readString(t.resolve("stat"), StandardCharsets.UTF_8).strip();
            ticks += ticksOf(line);
            text.append(pid).append(" thread ").append(t.getFileName()).append(": ").append(line).append('\n');
          }
        } catch (NoSuchFileException e) {
          // the thread ended meanwhile
        }
      }
    } catch (NoSuchFileException e) {
      return 0;
    }
    return ticks;
  }

  private ProcessCpu() {}

  /**
   * utime + stime of one {@code /proc/PID/stat} line, in clock ticks. The process name (field 2)
   * is in parentheses and may itself hold spaces and parentheses, so fields are counted from the
   * last ")" of the line.
   */
  public static long ticksOf(String statLine) {
    int nameEnd = statLine.lastIndexOf(')');
    if (nameEnd < 0) {
      throw new IllegalArgumentException("not a /proc/PID/stat line (no process name): " + statLine);
    }
    String[] fields = statLine.substring(nameEnd + 1).strip().split(" ");
    int utime = UTIME_FIELD - FIRST_FIELD_AFTER_NAME;
    if (fields.length <= utime + 1) {
      throw new IllegalArgumentException("a /proc/PID/stat line with " + (fields.length + 2)
          + " fields, fewer than " + (UTIME_FIELD + 1) + ": " + statLine);
    }
    try {
      return Long.parseLong(fields[utime]) + Long.parseLong(fields[utime + 1]);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("fields 14 and 15 of a /proc/PID/stat line are not numbers: " + statLine, e);
    }
  }

  /**
   * CPU time, in clock ticks, of this process's children that have exited and been waited for
   * (cutime + cstime, fields 16 and 17 of /proc/self/stat). Read before and after a run of
   * processes the study starts and waits for (dnsperf), the difference is their CPU time, which
   * cannot be read from /proc/PID once they are gone. The line goes to {@code audit}.
   */
  public static long reapedChildrenTicks(Path audit) throws IOException {
    String line = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.UTF_8).strip();
    Files.writeString(audit, "self: " + line + "\n", StandardCharsets.UTF_8);
    return childrenTicksOf(line);
  }

  /** cutime + cstime of one /proc/PID/stat line, in clock ticks. */
  public static long childrenTicksOf(String statLine) {
    int nameEnd = statLine.lastIndexOf(')');
    if (nameEnd < 0) {
      throw new IllegalArgumentException("not a /proc/PID/stat line (no process name): " + statLine);
    }
    String[] fields = statLine.substring(nameEnd + 1).strip().split(" ");
    int cutime = UTIME_FIELD + 2 - FIRST_FIELD_AFTER_NAME;
    if (fields.length <= cutime + 1) {
      throw new IllegalArgumentException("a /proc/PID/stat line with too few fields: " + statLine);
    }
    return Long.parseLong(fields[cutime]) + Long.parseLong(fields[cutime + 1]);
  }

  /** Reads the processes' CPU time now; the raw lines ("pid: stat line") go to {@code audit}. */
  public static Sample sample(List<Long> pids, Path audit) throws StudyException, IOException {
    if (pids.isEmpty()) {
      throw new StudyException("no process to read CPU time from (not started?)");
    }
    long ticks = 0;
    long compiler = 0;
    StringBuilder text = new StringBuilder();
    for (long pid : pids) {
      String line;
      try {
        line = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8).strip();
      } catch (NoSuchFileException e) {
        throw new StudyException("process " + pid + " is gone: its CPU time cannot be read from /proc/" + pid
            + "/stat", e);
      }
      ticks += ticksOf(line);
      text.append(pid).append(": ").append(line).append('\n');
      compiler += compilerTicks(pid, text);
    }
    Files.writeString(audit, text.toString(), StandardCharsets.UTF_8);
    return new Sample(ticks, compiler);
  }

  /** CPU seconds between two samples of the same processes. */
  public static double secondsBetween(Sample before, Sample after, long ticksPerSecond) {
    return (double) (after.ticks() - before.ticks()) / ticksPerSecond;
  }

  /**
   * CPU seconds of the JIT compiler threads between two samples, never below 0 (a compiler thread
   * that ended meanwhile takes its ticks out of the second sum).
   */
  public static double compilerSecondsBetween(Sample before, Sample after, long ticksPerSecond) {
    return Math.max(0, (double) (after.compilerTicks() - before.compilerTicks()) / ticksPerSecond);
  }

  /** CPU microseconds per answered query; null when nothing completed or no CPU time was read. */
  public static Double microsPerQuery(Double cpuSeconds, long completed) {
    if (cpuSeconds == null || completed <= 0) {
      return null;
    }
    return cpuSeconds * 1_000_000.0 / completed;
  }

  /** The kernel's clock ticks per second ({@code getconf CLK_TCK}); the output goes to {@code audit}. */
  public static long ticksPerSecond(StartedProcesses processes, Path audit) throws StudyException {
    StartedProcesses.Completed c = processes.run(List.of("getconf", "CLK_TCK"), audit, GETCONF_LIMIT);
    try {
      long ticks = Long.parseLong(c.output().strip());
      if (c.exitCode() == 0 && ticks > 0) {
        return ticks;
      }
    } catch (NumberFormatException e) {
      // reported below with the output
    }
    throw new StudyException("getconf CLK_TCK did not print a tick rate (status " + c.exitCode() + "): "
        + c.output().strip());
  }
}
