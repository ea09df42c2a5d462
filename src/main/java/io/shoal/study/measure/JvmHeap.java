package io.shoal.study.measure;

import io.shoal.study.host.JavaLauncher;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A child JVM's heap, through jcmd: a full collection on demand ({@code GC.run}), so what its
 * resident set holds afterwards is live data and the heap the collector kept, not garbage waiting
 * for the next collection; and the heap in use ({@code GC.heap_info}).
 */
public final class JvmHeap {
  /** A full collection of a heap of a few GiB takes seconds; attaching the first time, a few more. */
  private static final Duration LIMIT = Duration.ofSeconds(120);
  /** G1's first line: {@code garbage-first heap   total 262144K, used 12345K [...]}; other collectors alike. */
  private static final Pattern USED = Pattern.compile("heap\\s+total\\s+\\d+K,\\s+used\\s+(\\d+)K");

  private JvmHeap() {}

  /** Runs a full collection in JVM {@code pid} and waits for it; jcmd's output goes to {@code audit}. */
  public static void collect(long pid, StartedProcesses processes, Path audit) throws StudyException {
    jcmd(pid, "GC.run", processes, audit);
  }

  /** The heap JVM {@code pid} has in use, in KiB; jcmd's output goes to {@code audit}. */
  public static long usedKib(long pid, StartedProcesses processes, Path audit) throws StudyException {
    String out = jcmd(pid, "GC.heap_info", processes, audit);
    Long used = usedKibOf(out);
    if (used == null) {
      throw new StudyException("jcmd " + pid + " GC.heap_info printed no 'heap total ...K, used ...K' line (see "
          + audit.getFileName() + ")");
    }
    return used;
  }

  /** The used heap in KiB from GC.heap_info's output; null if it has no such line. */
  public static Long usedKibOf(String heapInfo) {
    Matcher m = USED.matcher(heapInfo);
    return m.find() ? Long.valueOf(m.group(1)) : null;
  }

  private static String jcmd(long pid, String command, StartedProcesses processes, Path audit)
      throws StudyException {
    StartedProcesses.Completed c = processes.run(List.of(JavaLauncher.jcmd(), Long.toString(pid), command), audit,
        LIMIT);
    if (c.exitCode() != 0) {
      throw new StudyException("jcmd " + pid + " " + command + " exited with status " + c.exitCode() + ": "
          + c.output().strip());
    }
    return c.output();
  }
}
