package io.shoal.transport;

import com.sun.management.UnixOperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/** The process's open-file limit, from which descriptor budgets (TCP connections) are sized. */
public final class OpenFiles {
  /** What we assume where the JVM cannot tell (not a Unix): the usual soft limit. */
  private static final long UNKNOWN_LIMIT = 1024;

  private OpenFiles() {}

  /** The soft limit on open descriptors (ulimit -n). */
  public static long limit() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof UnixOperatingSystemMXBean unix) {
      return unix.getMaxFileDescriptorCount();
    }
    return UNKNOWN_LIMIT;
  }
}
