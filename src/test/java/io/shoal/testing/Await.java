package io.shoal.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * Waiting for a condition the way every test here must: poll it, with a deadline. The sleep
 * between polls is the poll interval, never the wait itself; the caller asserts on what it got.
 */
public final class Await {
  /** Time between two polls. */
  private static final long POLL_MS = 50;

  private Await() {}

  /** Something to look at that may throw (a scrape, a log file, a DNS exchange). */
  @FunctionalInterface
  public interface Probe<T> {
    T get() throws Exception;
  }

  /**
   * Polls {@code probe} until {@code ok} holds for its value or {@code timeout} has passed;
   * returns the last value seen (which the caller asserts on, so a timeout fails with it).
   */
  public static <T> T value(Duration timeout, Probe<T> probe, Predicate<? super T> ok) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    T v = probe.get();
    while (!ok.test(v) && System.nanoTime() < deadline) {
      Thread.sleep(POLL_MS);
      v = probe.get();
    }
    return v;
  }

  /** Polls {@code condition} until it holds or {@code timeout} has passed; returns its last value. */
  public static boolean until(Duration timeout, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean held = condition.getAsBoolean();
    while (!held && System.nanoTime() < deadline) {
      Thread.sleep(POLL_MS);
      held = condition.getAsBoolean();
    }
    return held;
  }
}
