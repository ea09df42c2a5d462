package io.shoal.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * How much virtual address space this process has left for LMDB maps, read from Linux's /proc:
 * the user address space (the power of two above the highest mapping, 128 TiB on x86-64), or
 * the address-space limit ({@code ulimit -v}) if lower, minus what is mapped already.
 */
final class AddressSpace {
  /** Where /proc cannot be read (not Linux): no limit known, nothing is refused. */
  static final long UNKNOWN = Long.MAX_VALUE;

  private AddressSpace() {}

  static long left() {
    try {
      long top = userTop(Files.readAllLines(Path.of("/proc/self/maps")));
      long limit = addressLimit(Files.readAllLines(Path.of("/proc/self/limits")));
      long used = vmSize(Files.readAllLines(Path.of("/proc/self/status")));
      return Math.max(0, Math.min(top, limit) - used);
    } catch (IOException | RuntimeException e) {
      return UNKNOWN;
    }
  }

  /** The power of two just above the highest user-space mapping (the kernel's vsyscall page excluded). */
  static long userTop(List<String> maps) {
    long highest = 0;
    for (String line : maps) {
      int dash = line.indexOf('-');
      int space = line.indexOf(' ');
      if (dash < 0 || space < dash) {
        continue;
      }
      long end = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
      if (end > 0) {
        highest = Math.max(highest, end);
      }
    }
    return highest == 0 ? UNKNOWN : Long.highestOneBit(highest - 1) << 1;
  }

  /** "Max address space" of /proc/self/limits, soft value; unlimited is {@link #UNKNOWN}. */
  static long addressLimit(List<String> limits) {
    for (String line : limits) {
      if (line.startsWith("Max address space")) {
        String soft = line.substring("Max address space".length()).trim().split("\\s+")[0];
        return soft.equals("unlimited") ? UNKNOWN : Long.parseLong(soft);
      }
    }
    return UNKNOWN;
  }

  /** VmSize of /proc/self/status, in bytes. */
  static long vmSize(List<String> status) {
    for (String line : status) {
      if (line.startsWith("VmSize:")) {
        return Long.parseLong(line.substring(7).trim().split("\\s+")[0]) * 1024;
      }
    }
    return 0;
  }
}
