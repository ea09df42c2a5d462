package io.shoal.upstream;

import io.shoal.metrics.ServerMetrics;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The selector thread of {@link UpstreamSelector}: it registers the exchanges handed to it, reads
 * UDP answers, runs TCP's connect/write/read, and ends each exchange with its answer, its failure,
 * or at its deadline. A response counts only if it carries the query's ID and question; anything
 * else is counted (shoal_dropped_total{reason="upstream_mismatch"}) and the wait goes on.
 */
final class ExchangeLoop {
  /** The selector's logger: these lines are the upstream selector's. */
  private static final Logger log = LoggerFactory.getLogger(UpstreamSelector.class);

  private final Selector selector;
  private final Thread loop;
  private final ConcurrentLinkedQueue<Exchange> incoming = new ConcurrentLinkedQueue<>();
  private final PriorityQueue<Exchange> deadlines =
      new PriorityQueue<>((a, b) -> Long.compare(a.deadlineNanos, b.deadlineNanos));
  private final UpstreamSockets sockets;
  private final ServerMetrics metrics;
  private final ByteBuffer udpBuffer = ByteBuffer.allocateDirect(65535);
  /** When the selector thread will next look at its deadlines on its own (System.nanoTime). */
  private volatile long selectorWakesAt = Long.MIN_VALUE;
  private volatile boolean running = true;
  private long lastSweep = System.nanoTime();

  /** Opens the selector and starts its thread, which ends exchanges through {@code sockets}. */
  ExchangeLoop(UpstreamSockets sockets, ServerMetrics metrics) throws IOException {
    this.sockets = sockets;
    this.metrics = metrics;
    this.selector = Selector.open();
    this.loop = new Thread(this::run, "shoal-upstream");
    this.loop.setDaemon(true);
    this.loop.start();
  }

  /** False once {@link #close} was called. */
  boolean running() {
    return running;
  }

  /**
   * Hands {@code x} to the selector thread, waking it only when it has to act before it would wake
   * on its own: to {@code register} a socket it has not seen, or for a deadline before its next
   * wake-up. Otherwise it takes {@code x} from {@link #incoming} when it next looks at its deadlines.
   */
  void enqueue(Exchange x, boolean register) {
    long wakesAt = selectorWakesAt;
    if (register || (wakesAt != Long.MIN_VALUE && x.deadlineNanos - wakesAt < 0)) {
      submit(x);
    } else {
      incoming.add(x);
    }
  }

  void submit(Exchange x) {
    incoming.add(x);
    selector.wakeup();
  }

  private void run() {
    while (running) {
      try {
        Exchange x;
        while ((x = incoming.poll()) != null) {
          try {
            if (x instanceof UdpExchange u) {
              if (u.socket.key == null) {
                u.socket.key = u.channel.register(selector, SelectionKey.OP_READ, u.socket);
              }
            } else if (x instanceof ListenerExchange) {
              // Its reply is read by a listener: only its deadline is kept here.
            } else {
              x.channel.register(selector, x.firstInterest(), x);
            }
            deadlines.add(x);
          } catch (IOException | RuntimeException e) {
            finish(x, null, new UpstreamException("error", x.server + ": " + e));
          }
        }
        long waitMs = 1000;
        Exchange next = deadlines.peek();
        if (next != null) {
          waitMs = Math.max(1, Math.min(1000, (next.deadlineNanos - System.nanoTime()) / 1_000_000 + 1));
        }
        selectorWakesAt = System.nanoTime() + waitMs * 1_000_000;
        if (incoming.isEmpty()) {
          selector.select(waitMs);
        } else {
          selector.selectNow();
        }
        selectorWakesAt = Long.MIN_VALUE;
        for (SelectionKey k : selector.selectedKeys()) {
          if (k.attachment() instanceof UpstreamSockets.Udp u) {
            readUdp(u);
          } else {
            stepTcp((TcpExchange) k.attachment(), k);
          }
        }
        selector.selectedKeys().clear();
        long now = System.nanoTime();
        if (now - lastSweep > 1_000_000_000L) {
          lastSweep = now;
          sockets.sweep(now);
        }
        while ((next = deadlines.peek()) != null && (next.result.isDone() || next.deadlineNanos - now <= 0)) {
          deadlines.poll();
          if (!next.result.isDone()) {
            finish(next, null, new UpstreamException("timeout", "no answer from " + next.server));
          }
        }
      } catch (IOException | RuntimeException e) {
        log.error("upstream selector: {}", e.toString());
      }
    }
  }

  private void readUdp(UpstreamSockets.Udp socket) {
    while (true) {
      udpBuffer.clear();
      int n;
      try {
        n = socket.channel.read(udpBuffer);
      } catch (IOException e) {
        // e.g. ICMP port unreachable reported on the connected socket: the server is not there.
        UdpExchange x = socket.query;
        if (x != null) {
          finish(x, null, new UpstreamException("error", x.server + ": " + e));
        }
        return;
      }
      if (n <= 0) {
        return;
      }
      // Read only now: the socket may have gone back idle and carried the caller's next query
      // (set before it was sent) since this loop began, and this datagram may be its answer.
      UdpExchange x = socket.query;
      if (x == null || x.result.isDone()) {
        // A datagram for no query in flight on this socket (a late or duplicate answer).
        metrics.dropped(ServerMetrics.UPSTREAM_MISMATCH);
        continue;
      }
      byte[] bytes = new byte[n];
      udpBuffer.flip().get(bytes);
      if (!x.answeredBy(bytes, n)) {
        metrics.dropped(ServerMetrics.UPSTREAM_MISMATCH);
        continue;
      }
      finish(x, bytes, null);
      // A socket carries one query at a time, so its answer was the last datagram to wait for:
      // another read would only come back empty (a system call per answer) or, from a socket
      // that has just carried its last query and been closed, throw ClosedChannelException,
      // stack trace and all (a profile of a churn cluster node found both on this thread). A
      // datagram already queued for the socket's next query stays readable and is picked up on
      // the next select, which reports a socket for as long as it has data.
      return;
    }
  }

  private void stepTcp(TcpExchange x, SelectionKey k) {
    try {
      while (!x.result.isDone()) {
        byte[] message = x.step(k);
        if (message == null) {
          return;
        }
        if (x.answeredBy(message, message.length)) {
          finish(x, message, null);
        } else {
          metrics.dropped(ServerMetrics.UPSTREAM_MISMATCH);
        }
      }
    } catch (IOException | RuntimeException e) {
      finish(x, null, new UpstreamException("error", "TCP to " + x.server + ": " + e.getMessage()));
    }
  }

  private void finish(Exchange x, byte[] answer, Throwable failure) {
    if (x.result.isDone()) {
      return;
    }
    // After a timeout or an error a socket is not trusted with another query.
    x.end(sockets, failure == null && running);
    if (failure != null) {
      x.result.completeExceptionally(failure);
    } else {
      x.result.complete(answer);
    }
  }

  /** Stops the thread, fails what is in flight ("shutting down"), and closes the idle sockets. */
  void close() {
    running = false;
    selector.wakeup();
    try {
      loop.join(2000);
      selector.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException ignored) {
      // the selector is going away with the process
    }
    Exchange x;
    while ((x = incoming.poll()) != null) {
      finish(x, null, new UpstreamException("error", "shutting down"));
    }
    while ((x = deadlines.poll()) != null) {
      finish(x, null, new UpstreamException("error", "shutting down"));
    }
    sockets.retireIdle();
  }
}
