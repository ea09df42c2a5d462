package io.shoal.logging;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs a recurring failure at most once per interval with a count of the ones suppressed, so a
 * flood of bad packets cannot flood the log.
 */
public final class FailureLog {
  private final Logger log;
  private final long intervalNanos;
  private final AtomicLong nextAt = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong suppressed = new AtomicLong();

  public FailureLog(Logger log, long intervalSeconds) {
    this.log = log;
    this.intervalNanos = intervalSeconds * 1_000_000_000L;
  }

  public void warn(String what, Throwable cause) {
    warn(what + ": " + cause);
  }

  /** As {@link #warn(String, Throwable)}, for a failure that {@code what} says all of. */
  public void warn(String what) {
    long now = System.nanoTime();
    long next = nextAt.get();
    if ((next == Long.MIN_VALUE || now - next >= 0) && nextAt.compareAndSet(next, now + intervalNanos)) {
      long n = suppressed.getAndSet(0);
      log.warn("{}{}", what, n > 0 ? " (" + n + " more since the last report)" : "");
    } else {
      suppressed.incrementAndGet();
    }
  }
}
