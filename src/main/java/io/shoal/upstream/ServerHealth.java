package io.shoal.upstream;

import io.shoal.metrics.ServerMetrics;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether one upstream server of a group is worth asking, checked the way CoreDNS's forward
 * plugin does it. After {@code maxFails} timeouts or errors in a row the server is probed with a
 * question any DNS server answers ({@code . NS}; any reply, even REFUSED, means it is alive). A
 * probe that fails marks it down: misses go to the other servers at once, or fail fast, instead
 * of each waiting a full timeout. It is probed again after a back-off that doubles up to a cap,
 * and marked up by the first probe or query it answers. A name that times out (a broken domain
 * behind a recursive upstream) does not take a healthy server down: the probe is answered.
 */
final class ServerHealth {
  private static final Logger log = LoggerFactory.getLogger(ServerHealth.class);

  private final String label;
  private final int maxFails;
  private final long backoffNanos;
  private final long maxBackoffNanos;
  private final ServerMetrics metrics;
  private final Supplier<CompletableFuture<byte[]>> probe;
  private final BooleanSupplier closed;
  /** Read without the lock on every query: the healthy path takes no lock. */
  private volatile boolean down;
  /** Written under the lock; read without it so an answer from a healthy server takes no lock. */
  private volatile int failsInARow;
  // Guarded by this.
  private boolean probing;
  private long backoff;

  /**
   * @param probe sends the probe question to the server; completes with its reply or fails
   * @param closed true once the sockets are closed: probing stops
   */
  ServerHealth(String label, int maxFails, Duration backoff, Duration maxBackoff, ServerMetrics metrics,
      Supplier<CompletableFuture<byte[]>> probe, BooleanSupplier closed) {
    this.label = label;
    this.maxFails = maxFails;
    this.backoffNanos = backoff.toNanos();
    this.maxBackoffNanos = maxBackoff.toNanos();
    this.metrics = metrics;
    this.probe = probe;
    this.closed = closed;
    metrics.upstreamUp(label, true);
  }

  /** Whether the server is marked down now. */
  boolean down() {
    return down;
  }

  /** The server answered a query (whatever the rcode). */
  void answered() {
    if (failsInARow == 0 && !down) {
      return;
    }
    synchronized (this) {
      failsInARow = 0;
      markUp();
    }
  }

  /** A query to the server timed out or failed. */
  void failed() {
    if (maxFails == 0) {
      return;
    }
    synchronized (this) {
      if (down || probing || ++failsInARow < maxFails) {
        return;
      }
      probing = true;
    }
    sendProbe();
  }

  private void sendProbe() {
    probe.get().whenComplete((reply, failure) -> {
      long next;
      synchronized (this) {
        if (failure == null) {
          probing = false;
          failsInARow = 0;
          markUp();
          return;
        }
        if (closed.getAsBoolean()) {
          probing = false;
          return;
        }
        if (!down) {
          down = true;
          backoff = backoffNanos;
          metrics.upstreamUp(label, false);
          log.warn("upstream {} marked down: {} timeouts or errors in a row and no answer to a probe; "
              + "probing again every {} ms at first, up to {} ms", label, failsInARow, backoff / 1_000_000,
              maxBackoffNanos / 1_000_000);
        } else {
          backoff = Math.min(maxBackoffNanos, backoff * 2);
        }
        next = backoff;
      }
      CompletableFuture.delayedExecutor(next, TimeUnit.NANOSECONDS).execute(this::sendProbe);
    });
  }

  private void markUp() {
    if (down) {
      down = false;
      metrics.upstreamUp(label, true);
      log.info("upstream {} answers again; marked up", label);
    }
  }
}
