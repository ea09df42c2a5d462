package io.shoal.upstream;

import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Upstream queries over UDP, each from a socket of its own on a port the kernel picks at random,
 * all served by one selector thread. A datagram counts as the answer only if it comes from the
 * server's address and port and carries the query's ID and question; anything else is counted
 * (shoal_dropped_total{reason="upstream_mismatch"}) and ignored, and the wait goes on.
 */
public final class UdpExchange implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(UdpExchange.class);

  private final Selector selector;
  private final Thread loop;
  private final ConcurrentLinkedQueue<Pending> incoming = new ConcurrentLinkedQueue<>();
  private final PriorityQueue<Pending> deadlines =
      new PriorityQueue<>((a, b) -> Long.compare(a.deadlineNanos, b.deadlineNanos));
  private final AtomicInteger outstanding = new AtomicInteger();
  private final int maxOutstanding;
  private final ServerMetrics metrics;
  private final ByteBuffer buffer = ByteBuffer.allocateDirect(65535);
  private volatile boolean running = true;

  private static final class Pending {
    final DatagramChannel channel;
    final InetSocketAddress server;
    final int id;
    final CacheKey key;
    final long deadlineNanos;
    final CompletableFuture<byte[]> result = new CompletableFuture<>();

    Pending(DatagramChannel channel, InetSocketAddress server, int id, CacheKey key, long deadlineNanos) {
      this.channel = channel;
      this.server = server;
      this.id = id;
      this.key = key;
      this.deadlineNanos = deadlineNanos;
    }
  }

  public UdpExchange(int maxOutstanding, ServerMetrics metrics) throws IOException {
    this.maxOutstanding = maxOutstanding;
    this.metrics = metrics;
    this.selector = Selector.open();
    this.loop = new Thread(this::run, "shoal-upstream-udp");
    this.loop.setDaemon(true);
    this.loop.start();
  }

  /** Sends {@code query} to {@code server}; completes with the matching response's bytes. */
  public CompletableFuture<byte[]> exchange(
      InetSocketAddress server, byte[] query, int id, CacheKey key, Duration timeout) {
    if (outstanding.incrementAndGet() > maxOutstanding) {
      outstanding.decrementAndGet();
      return CompletableFuture.failedFuture(
          new UpstreamException("overload", maxOutstanding + " upstream queries already outstanding"));
    }
    DatagramChannel ch = null;
    try {
      ch = DatagramChannel.open();
      ch.configureBlocking(false);
      ch.bind(null);
      ch.send(ByteBuffer.wrap(query), server);
    } catch (IOException | RuntimeException e) {
      outstanding.decrementAndGet();
      closeQuietly(ch);
      return CompletableFuture.failedFuture(new UpstreamException("error", "send to " + server + ": " + e.getMessage()));
    }
    Pending p = new Pending(ch, server, id, key, System.nanoTime() + timeout.toNanos());
    incoming.add(p);
    selector.wakeup();
    return p.result;
  }

  private void run() {
    while (running) {
      try {
        Pending p;
        while ((p = incoming.poll()) != null) {
          try {
            p.channel.register(selector, SelectionKey.OP_READ, p);
            deadlines.add(p);
          } catch (IOException e) {
            finish(p, null, new UpstreamException("error", e.getMessage()));
          }
        }
        long waitMs = 1000;
        Pending next = deadlines.peek();
        if (next != null) {
          waitMs = Math.max(1, Math.min(1000, (next.deadlineNanos - System.nanoTime()) / 1_000_000 + 1));
        }
        selector.select(waitMs);
        for (SelectionKey k : selector.selectedKeys()) {
          read((Pending) k.attachment());
        }
        selector.selectedKeys().clear();
        long now = System.nanoTime();
        while ((next = deadlines.peek()) != null && next.deadlineNanos <= now) {
          deadlines.poll();
          if (!next.result.isDone()) {
            finish(next, null, new UpstreamException("timeout", "no answer from " + next.server));
          }
        }
      } catch (IOException | RuntimeException e) {
        log.error("upstream UDP loop: {}", e.toString());
      }
    }
  }

  private void read(Pending p) {
    while (!p.result.isDone()) {
      buffer.clear();
      SocketAddress from;
      try {
        from = p.channel.receive(buffer);
      } catch (IOException e) {
        // e.g. ICMP port unreachable reported on the socket: the server is not there.
        finish(p, null, new UpstreamException("error", p.server + ": " + e.getMessage()));
        return;
      }
      if (from == null) {
        return;
      }
      buffer.flip();
      byte[] bytes = new byte[buffer.remaining()];
      buffer.get(bytes);
      if (!from.equals(p.server) || !ScannedAnswer.answers(bytes, bytes.length, p.id, p.key)) {
        metrics.dropped(ServerMetrics.UPSTREAM_MISMATCH);
        continue;
      }
      finish(p, bytes, null);
    }
  }

  private void finish(Pending p, byte[] answer, Throwable failure) {
    closeQuietly(p.channel);
    outstanding.decrementAndGet();
    if (failure != null) {
      p.result.completeExceptionally(failure);
    } else {
      p.result.complete(answer);
    }
  }

  private static void closeQuietly(DatagramChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // closing a datagram socket cannot lose anything
      }
    }
  }

  /** Queries currently waiting for an answer. */
  public int outstanding() {
    return outstanding.get();
  }

  @Override
  public void close() {
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
    Pending p;
    while ((p = deadlines.poll()) != null) {
      if (!p.result.isDone()) {
        finish(p, null, new UpstreamException("error", "shutting down"));
      }
    }
  }

}
