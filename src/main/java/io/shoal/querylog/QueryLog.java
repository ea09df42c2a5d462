package io.shoal.querylog;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorSystem;
import io.shoal.config.QueryLogSettings;
import io.shoal.ingress.Protocol;
import io.shoal.ingress.ReplyPath;
import io.shoal.metrics.QueryLogMetrics;
import io.shoal.upstream.Upstream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import kamon.metric.Counter;

/**
 * The query logs (dnstap and sampled JSON lines): the query path offers events to a bounded
 * queue and goes on; one writer thread drains it. A full queue drops the event and counts it, so a
 * slow collector or disk costs log lines, never a reply's time.
 */
public final class QueryLog {
  /** How long the shutdown waits for the writer to drain before it closes the collector's socket under it. */
  private static final long STOP_WAIT_MS = 3000;

  private final BlockingQueue<QueryEvent> queue;
  private final boolean dnstap;
  private final boolean forwarder;
  private final boolean json;
  private final double sample;
  private final Clock clock;
  private final Counter dnstapDropped;
  private final Counter queriesDropped;
  private final QueryLogWriter writer;

  private QueryLog(QueryLogSettings s, DnstapOutput output, QueryLogMetrics metrics, Clock clock) {
    this.queue = new ArrayBlockingQueue<>(s.queue());
    this.dnstap = output != null;
    this.forwarder = dnstap && s.forwarder();
    this.json = s.queries() && s.sample() > 0;
    this.sample = s.sample();
    this.clock = clock;
    this.dnstapDropped = metrics.dropped(QueryLogMetrics.DNSTAP);
    this.queriesDropped = metrics.dropped(QueryLogMetrics.QUERIES);
    DnstapMessage encoder = new DnstapMessage(bytes(s.identity()), bytes(s.version()));
    this.writer = new QueryLogWriter(queue, output, encoder, metrics);
  }

  /**
   * Starts the writer thread, or returns null when both logs are off. A dnstap file that cannot
   * be opened throws {@link UncheckedIOException}; an absent collector does not (it is retried).
   */
  public static QueryLog start(QueryLogSettings settings, QueryLogMetrics metrics) {
    return start(settings, metrics, Clock.systemUTC());
  }

  static QueryLog start(QueryLogSettings settings, QueryLogMetrics metrics, Clock clock) {
    if (!settings.enabled()) {
      return null;
    }
    DnstapOutput output = null;
    try {
      if (settings.dnstapFile() != null) {
        output = DnstapOutput.file(settings.dnstapFile());
      } else if (settings.dnstapSocket() != null) {
        output = DnstapOutput.socket(settings.dnstapSocket());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + settings.dnstapFile() + ": " + e.getMessage(), e);
    }
    QueryLog log = new QueryLog(settings, output, metrics, clock);
    log.writer.start();
    return log;
  }

  /** Stops the writer (draining the queue, ending the stream) in the node's orderly shutdown, after the last reply. */
  public void stopOnShutdown(ActorSystem<?> system) {
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "close-query-log",
        () -> stop().thenApply(v -> Done.getInstance()));
  }

  /** Drains what is queued, ends the dnstap stream and closes it; completes when the writer has exited. */
  public CompletionStage<Void> stop() {
    return writer.stop(STOP_WAIT_MS, TimeUnit.MILLISECONDS);
  }

  /**
   * Called as a query comes in, before anything else: logs CLIENT_QUERY and returns the path its
   * reply should take, which logs CLIENT_RESPONSE; {@code reply} itself when neither log takes this query.
   */
  public ReplyPath watch(byte[] packet, InetSocketAddress client, Protocol protocol, ReplyPath reply) {
    boolean sampled = json && ThreadLocalRandom.current().nextDouble() < sample;
    if (!dnstap && !sampled) {
      return reply;
    }
    long now = now();
    if (dnstap) {
      offer(new QueryEvent(QueryEvent.Kind.CLIENT_QUERY, protocol, client, packet, now, null, 0, true, false,
          QueryEvent.Cache.NONE));
    }
    return new LoggedReply(this, reply, packet, client, protocol, now, sampled);
  }

  /** {@code upstream} with its exchanges logged as FORWARDER_QUERY/RESPONSE when dnstap's forwarder is on. */
  public Upstream forwarder(Upstream upstream) {
    return forwarder ? new LoggedUpstream(this, upstream) : upstream;
  }

  boolean dnstap() {
    return dnstap;
  }

  /** Wall time in epoch nanoseconds. */
  long now() {
    Instant i = clock.instant();
    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
  }

  /** Never blocks: a full queue drops {@code e}, counted for each log that wanted it. */
  void offer(QueryEvent e) {
    if (!queue.offer(e)) {
      if (e.dnstap()) {
        dnstapDropped.increment();
      }
      if (e.json()) {
        queriesDropped.increment();
      }
    }
  }

  private static byte[] bytes(String s) {
    return s == null || s.isEmpty() ? null : s.getBytes(StandardCharsets.UTF_8);
  }
}
