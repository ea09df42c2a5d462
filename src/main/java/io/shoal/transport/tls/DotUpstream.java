package io.shoal.transport.tls;

import akka.Done;
import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import akka.japi.Pair;
import akka.stream.BoundedSourceQueue;
import akka.stream.QueueOfferResult;
import akka.stream.TLSClosing;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Framing;
import akka.stream.javadsl.Keep;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import akka.stream.javadsl.Tcp;
import akka.util.ByteString;
import io.shoal.config.DotServerSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.upstream.UpstreamException;
import io.shoal.upstream.UpstreamGroup;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import java.io.IOException;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One DoT upstream server (RFC 7858): one TLS connection on Akka Streams Tcp, kept open and reused,
 * queries pipelined on it in 2-byte framing and answers matched by ID and question, so one slow
 * answer holds up no other. The certificate is checked against the configured CA file or the JVM's
 * trust store, for the entry's name (SNI and the HTTPS hostname rules), and against the SPKI pins
 * when there are any. A connection the server closes is opened again by the next query; one that
 * never got through its handshake is tried again only after a back-off that doubles up to {@link
 * #MAX_BACKOFF_NANOS}, queries in between failing at once with the same reason.
 */
final class DotUpstream {
  private static final Logger log = LoggerFactory.getLogger(DotUpstream.class);
  static final long FIRST_BACKOFF_NANOS = 250_000_000L;
  static final long MAX_BACKOFF_NANOS = 10_000_000_000L;
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  /** Queries waiting to be written on one connection; more fail as overload. */
  private static final int QUEUE = 1024;
  /** Outcome of an attempt whose server's certificate was refused (shoal_upstream_seconds). */
  static final String TLS_VERIFY = "tls_verify";
  /** Outcome of an attempt whose TLS handshake failed otherwise (no common version, not TLS at all). */
  static final String TLS_HANDSHAKE = "tls_handshake";

  private final ActorSystem<?> system;
  private final DotServerSettings server;
  private final String label;
  private final ServerMetrics metrics;
  private final IntSupplier ids;
  private final SSLContext context;
  private final String contextFailure;
  // Guarded by this.
  private Connection current;
  private long retryAt;
  private long backoff;
  private UpstreamException lastFailure;
  private String lastLogged;
  private boolean closed;

  DotUpstream(
      ActorSystem<?> system, DotServerSettings server, ServerMetrics metrics, IntSupplier ids, TlsImplementation tls) {
    this.system = system;
    this.server = server;
    this.label = label(server);
    this.metrics = metrics;
    this.ids = ids;
    SSLContext c = null;
    String failure = null;
    try {
      c = DotTrust.context(server, tls.conscrypt());
    } catch (IOException | GeneralSecurityException e) {
      failure = "cannot use " + (server.caFile() == null ? "the JVM trust store" : server.caFile()) + ": " + e;
      log.error("DoT upstream {}: {}", label, failure);
    }
    this.context = c;
    this.contextFailure = failure;
  }

  /** The upstream label, as {@code UpstreamGroup} writes it: {@code tls://ADDRESS:PORT}. */
  static String label(DotServerSettings s) {
    return "tls://" + UpstreamGroup.label(s.address());
  }

  CompletableFuture<byte[]> exchange(byte[] query, int id, CacheKey key, long deadlineNanos) {
    return exchange(query, id, key, deadlineNanos, false);
  }

  /** @param again the query was sent on a connection that closed before its answer came */
  private CompletableFuture<byte[]> exchange(byte[] query, int id, CacheKey key, long deadlineNanos, boolean again) {
    if (context == null) {
      return CompletableFuture.failedFuture(new UpstreamException("error", label + ": " + contextFailure));
    }
    Connection c;
    synchronized (this) {
      if (closed) {
        return CompletableFuture.failedFuture(new UpstreamException("error", "shutting down"));
      }
      if (current == null || current.ended) {
        if (lastFailure != null && System.nanoTime() - retryAt < 0) {
          return CompletableFuture.failedFuture(lastFailure);
        }
        current = new Connection();
      }
      c = current;
    }
    return c.send(query, id, key, deadlineNanos, again);
  }

  void close() {
    Connection c;
    synchronized (this) {
      closed = true;
      c = current;
    }
    if (c != null && !c.ended) {
      try {
        c.queue.complete();
      } catch (IllegalStateException alreadyOver) {
        // the stream ended by itself meanwhile
      }
    }
  }

  /** The SPKI pin check, after the handshake verified the chain and the name. */
  private Optional<Throwable> verify(Connection c, SSLSession session) {
    Optional<Throwable> refused = DotTrust.pinRefusal(server, session);
    if (refused.isPresent()) {
      return refused;
    }
    c.verified = true;
    synchronized (this) {
      backoff = 0;
      lastFailure = null;
      if (lastLogged != null) {
        log.info("DoT upstream {} ({}) verified again", label, server.name());
        lastLogged = null;
      }
    }
    return Optional.empty();
  }

  /** One TLS connection and the queries in flight on it. */
  private final class Connection {
    private final ConcurrentHashMap<Integer, Pending> pending = new ConcurrentHashMap<>();
    private final BoundedSourceQueue<ByteString> queue;
    /** Completes when the TCP connection is up, before the TLS handshake on it. */
    private final CompletableFuture<Tcp.OutgoingConnection> tcp;
    private volatile boolean ended;
    private volatile UpstreamException endedWith;
    private volatile boolean verified;

    Connection() {
      Flow<ByteString, ByteString, CompletionStage<Tcp.OutgoingConnection>> tls = Tcp.get(system)
          .outgoingConnectionWithTls(server.address(), () -> DotTrust.engine(context, server), Optional.empty(),
              List.of(),
              Optional.of(CONNECT_TIMEOUT), Optional.empty(), session -> verify(this, session),
              TLSClosing.eagerClose());
      Pair<Pair<BoundedSourceQueue<ByteString>, CompletionStage<Tcp.OutgoingConnection>>, CompletionStage<Done>> m =
          Source.<ByteString>queue(QUEUE)
              .viaMat(tls, Keep.both())
              .via(Framing.lengthField(2, 0, 65537, ByteOrder.BIG_ENDIAN))
              .toMat(Sink.foreach(this::onFrame), Keep.both())
              .run(system);
      this.queue = m.first().first();
      this.tcp = m.first().second().toCompletableFuture();
      m.second().whenComplete((done, failure) -> onEnd(failure));
    }

    CompletableFuture<byte[]> send(byte[] query, int id, CacheKey key, long deadlineNanos, boolean again) {
      Pending p = new Pending(key, new CompletableFuture<>(), query, deadlineNanos, again);
      byte[] wire = query;
      // Another query on this connection has the ID: this one takes a fresh one.
      while (pending.putIfAbsent(id, p) != null) {
        id = ids.getAsInt() & 0xFFFF;
        wire = query.clone();
        wire[0] = (byte) (id >> 8);
        wire[1] = (byte) id;
      }
      int sent = id;
      if (ended) {
        pending.remove(sent, p);
        UpstreamException e = endedWith;
        return CompletableFuture.failedFuture(e != null ? e : new UpstreamException("error", label + ": connection closed"));
      }
      Cancellable timer = system.scheduler().scheduleOnce(
          Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime())),
          () -> fail(sent, p, new UpstreamException("timeout", "no answer from " + label)),
          system.executionContext());
      p.result.whenComplete((a, f) -> timer.cancel());
      byte[] length = {(byte) (wire.length >> 8), (byte) wire.length};
      QueueOfferResult offered = queue.offer(ByteString.fromArray(length).concat(ByteString.fromArray(wire)));
      if (offered == QueueOfferResult.dropped()) {
        fail(sent, p, new UpstreamException(UpstreamException.OVERLOAD, QUEUE + " queries already waiting for " + label));
      } else if (offered != QueueOfferResult.enqueued()) {
        // The stream is closing and has not told onEnd yet: no query goes on this connection again.
        ended = true;
        if (!again && pending.remove(sent, p)) {
          sendAgain(p);
        } else {
          fail(sent, p, new UpstreamException("error", label + ": connection closed"));
        }
      }
      return p.result;
    }

    /**
     * Sends {@code p} once more, on a new connection, completing its result with that attempt's;
     * with the ID its bytes carry ({@code id} may be one this connection gave it instead).
     */
    private void sendAgain(Pending p) {
      int original = ((p.wire[0] & 0xFF) << 8) | (p.wire[1] & 0xFF);
      exchange(p.wire, original, p.key, p.deadlineNanos, true).whenComplete((answer, f) -> {
        if (f != null) {
          p.result.completeExceptionally(f);
        } else {
          p.result.complete(answer);
        }
      });
    }

    private void fail(int id, Pending p, UpstreamException e) {
      if (pending.remove(id, p)) {
        p.result.completeExceptionally(e);
      }
    }

    private void onFrame(ByteString frame) {
      byte[] answer = frame.drop(2).toArray();
      int id = answer.length < 2 ? -1 : ((answer[0] & 0xFF) << 8) | (answer[1] & 0xFF);
      Pending p = pending.get(id);
      if (p == null || !ScannedAnswer.answers(answer, answer.length, id, p.key)) {
        // A late answer (its query timed out), or one that is not for the question asked.
        metrics.dropped(ServerMetrics.UPSTREAM_MISMATCH);
        return;
      }
      if (pending.remove(id, p)) {
        p.result.complete(answer);
      }
    }

    private void onEnd(Throwable failure) {
      String reason = failure == null || verified ? null : DotTrust.reason(failure);
      // Connected, then closed or reset before the handshake ended: not a TLS server (plain DNS on
      // this port answers a ClientHello by waiting for its "length" and closing), so a handshake
      // failure, not a dropped connection.
      boolean cutInHandshake = reason == null && !verified && tcp.isDone() && !tcp.isCompletedExceptionally();
      if (cutInHandshake) {
        reason = "handshake";
      }
      UpstreamException e;
      if (reason != null) {
        String detail = cutInHandshake
            ? "the server closed the connection before the handshake ended (not a TLS server? plain DNS on this port?)"
                + (failure == null ? "" : " " + DotTrust.innermost(failure))
            : DotTrust.innermost(failure);
        e = new UpstreamException(reason.equals("handshake") ? TLS_HANDSHAKE : TLS_VERIFY,
            label + " (" + server.name() + ") refused: " + DotTrust.describe(reason) + " (" + reason + "): " + detail);
        metrics.upstreamTlsFailure(label, reason);
      } else if (failure != null) {
        e = new UpstreamException("error", label + ": " + DotTrust.innermost(failure));
      } else {
        e = new UpstreamException("error", label + ": connection closed");
      }
      endedWith = e;
      ended = true;
      synchronized (DotUpstream.this) {
        if (!verified) {
          // Never got through: wait before the next try, so a broken server is not hammered.
          backoff = backoff == 0 ? FIRST_BACKOFF_NANOS : Math.min(MAX_BACKOFF_NANOS, backoff * 2);
          retryAt = System.nanoTime() + backoff;
          lastFailure = e;
          if (!e.getMessage().equals(lastLogged) && !closed) {
            lastLogged = e.getMessage();
            log.warn("DoT upstream {}", e.getMessage());
          }
        }
      }
      for (Integer id : pending.keySet()) {
        Pending p = pending.get(id);
        if (p == null) {
          continue;
        }
        if (verified && !p.again && System.nanoTime() - p.deadlineNanos < 0) {
          // A server may close an idle connection just as a query goes out on it (RFC 7858
          // section 3.4): such a query is sent once more, on a new connection.
          if (pending.remove(id, p)) {
            sendAgain(p);
          }
        } else {
          fail(id, p, e);
        }
      }
    }
  }

  /** A query in flight: what its answer must match, and what it takes to send it again (as it came). */
  private record Pending(
      CacheKey key, CompletableFuture<byte[]> result, byte[] wire, long deadlineNanos, boolean again) {}
}
