package io.shoal.querylog;

import io.shoal.metrics.QueryLogMetrics;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import kamon.metric.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one thread that takes events off the queue and writes them: dnstap frames and JSON lines. */
final class QueryLogWriter implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(QueryLogWriter.class);
  /** Operators route this logger (logback) to a file of its own; see docs/operating.md. */
  private static final Logger queries = LoggerFactory.getLogger("shoal.queries");
  private static final int BATCH = 1024;
  /** How long an idle writer waits before it flushes, or (re)connects to an absent collector. */
  private static final long IDLE_MS = 100;

  private final BlockingQueue<QueryEvent> queue;
  private final DnstapOutput output;
  private final DnstapMessage encoder;
  private final Counter dnstapWritten;
  private final Counter dnstapDropped;
  private final Counter queriesWritten;
  private final Thread thread;
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();
  private volatile boolean running = true;

  /** @param output null when dnstap is off (JSON lines only) */
  QueryLogWriter(BlockingQueue<QueryEvent> queue, DnstapOutput output, DnstapMessage encoder, QueryLogMetrics metrics) {
    this.queue = queue;
    this.output = output;
    this.encoder = encoder;
    this.dnstapWritten = metrics.written(QueryLogMetrics.DNSTAP);
    this.dnstapDropped = metrics.dropped(QueryLogMetrics.DNSTAP);
    this.queriesWritten = metrics.written(QueryLogMetrics.QUERIES);
    this.thread = new Thread(this, "shoal-querylog");
    // Never keeps the JVM up: the orderly shutdown stops it, a crash loses what was queued.
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /**
   * Lets the writer drain and end; if it has not after {@code wait} (a collector that stopped
   * reading), closes the output under it, so the shutdown does not hang on a log.
   */
  CompletionStage<Void> stop(long wait, TimeUnit unit) {
    running = false;
    if (output != null) {
      CompletableFuture.delayedExecutor(wait, unit).execute(() -> {
        if (!stopped.isDone()) {
          log.warn("query log writer did not drain in time; closing the dnstap output");
          output.abort();
        }
      });
    }
    return stopped;
  }

  @Override
  public void run() {
    List<QueryEvent> batch = new ArrayList<>(BATCH);
    try {
      while (true) {
        QueryEvent first = queue.poll(IDLE_MS, TimeUnit.MILLISECONDS);
        if (first == null) {
          if (!running) {
            break;
          }
          if (output != null && output.ready()) {
            output.flush();
          }
          continue;
        }
        batch.add(first);
        queue.drainTo(batch, BATCH - 1);
        for (QueryEvent e : batch) {
          write(e);
        }
        batch.clear();
        if (output != null && queue.isEmpty()) {
          output.flush();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.error("query log writer failed; query logging stops", e);
    } finally {
      if (output != null) {
        output.finish();
      }
      stopped.complete(null);
    }
  }

  private void write(QueryEvent e) {
    if (e.dnstap()) {
      if (output.ready()) {
        try {
          output.write(encoder.encode(e));
          dnstapWritten.increment();
        } catch (IOException x) {
          output.broken(x);
          dnstapDropped.increment();
        }
      } else {
        dnstapDropped.increment();
      }
    }
    if (e.json()) {
      queries.info(QueryLine.format(e));
      queriesWritten.increment();
    }
  }
}
