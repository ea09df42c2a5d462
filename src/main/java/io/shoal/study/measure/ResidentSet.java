package io.shoal.study.measure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process's resident set: {@code VmRSS} in /proc/PID/status, the memory the kernel holds for it
 * (what an operator's memory limit counts), whatever its allocator or heap thinks is in use.
 */
public final class ResidentSet {
  private ResidentSet() {}

  /** VmRSS of process {@code pid} in KiB; -1 if the process is gone. */
  public static long kib(long pid) {
    return kib(Path.of("/proc", Long.toString(pid)));
  }

  /** VmRSS in KiB from a /proc/PID directory; -1 if the process is gone. */
  public static long kib(Path procPid) {
    try {
      return ofStatus(Files.readString(procPid.resolve("status")));
    } catch (IOException e) {
      return -1;
    }
  }

  /** VmRSS in KiB from the text of a /proc/PID/status file; -1 if it has none (a kernel thread, a zombie). */
  public static long ofStatus(String status) {
    for (String line : status.split("\n")) {
      if (line.startsWith("VmRSS:")) {
        try {
          return Long.parseLong(line.substring("VmRSS:".length()).replace("kB", "").strip());
        } catch (NumberFormatException e) {
          return -1;
        }
      }
    }
    return -1;
  }
}
