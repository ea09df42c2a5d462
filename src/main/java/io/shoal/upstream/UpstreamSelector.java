package io.shoal.upstream;

import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ScannedAnswer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every upstream socket of the node, UDP and TCP alike, on one selector thread: one I/O model for
 * both. A response counts only if it carries the query's ID and question (and, for UDP, comes
 * from the server: the sockets are connected to it, so the kernel drops datagrams from anywhere
 * else); anything else is counted (shoal_dropped_total{reason="upstream_mismatch"}) and the wait
 * goes on until the deadline.
 *
 * <p>UDP sockets rotate: each is bound to a port the kernel picks at random, connected to one
 * server, carries one query at a time, and is closed after {@link #UDP_USES} queries or
 * {@link #UDP_AGE_NANOS} (or at once after a timeout or an error), whichever comes first. A fresh
 * socket per query cost about a third of the CPU of a miss (socket, bind, connect, two
 * getsockname, epoll add and delete, close: docs/performance.md); rotation keeps that to a
 * sixteenth while every query still leaves from a random port that only its server can reach.
 * TCP exchanges (answers that came back truncated) use a socket each.
 *
 * <p>The caller sends the UDP datagram on its own thread (no hand-off before the query leaves);
 * the selector thread waits for the answer, runs TCP's connect/write/read, and ends the exchange
 * at its deadline. Open sockets are capped (sized from the file limit by the caller), so a miss
 * flood cannot take the descriptors that clients and the caches need.
 */
public final class UpstreamSelector implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(UpstreamSelector.class);
  private static final FailureLog capReached = new FailureLog(log, 10);
  /** Queries one UDP socket carries, one after another, before it is closed. */
  static final int UDP_USES = 16;
  /** How long a UDP socket may live, so a port is never in use for long. */
  static final long UDP_AGE_NANOS = 5_000_000_000L;

  private final Selector selector;
  private final Thread loop;
  private final ConcurrentLinkedQueue<Exchange> incoming = new ConcurrentLinkedQueue<>();
  private final PriorityQueue<Exchange> deadlines =
      new PriorityQueue<>((a, b) -> Long.compare(a.deadlineNanos, b.deadlineNanos));
  private final AtomicInteger open = new AtomicInteger();
  private final int maxOpen;
  private final ServerMetrics metrics;
  private final ByteBuffer udpBuffer = ByteBuffer.allocateDirect(65535);
  private final SecureRandom random = new SecureRandom();
  private final ConcurrentHashMap<InetSocketAddress, ConcurrentLinkedDeque<UdpSocket>> idle = new ConcurrentHashMap<>();
  /** When the selector thread will next look at its deadlines on its own (System.nanoTime). */
  private volatile long selectorWakesAt = Long.MIN_VALUE;
  private volatile boolean running = true;
  private long lastSweep = System.nanoTime();

  /** A UDP socket connected to one server, and the query it carries now (null while idle). */
  private static final class UdpSocket {
    final DatagramChannel channel;
    final long bornNanos = System.nanoTime();
    volatile UdpQuery query;
    SelectionKey key;
    int uses;

    UdpSocket(DatagramChannel channel) {
      this.channel = channel;
    }
  }

  /** One query in flight: its socket, what must match, when it gives up, and its result. */
  private abstract static class Exchange {
    final InetSocketAddress server;
    final int id;
    final CacheKey key;
    final long deadlineNanos;
    final CompletableFuture<byte[]> result = new CompletableFuture<>();
    SelectableChannel channel;

    Exchange(InetSocketAddress server, int id, CacheKey key, long deadlineNanos) {
      this.server = server;
      this.id = id;
      this.key = key;
      this.deadlineNanos = deadlineNanos;
    }

    abstract int firstInterest();
  }

  private static final class UdpQuery extends Exchange {
    final UdpSocket socket;

    UdpQuery(UdpSocket socket, InetSocketAddress server, int id, CacheKey key, long deadlineNanos) {
      super(server, id, key, deadlineNanos);
      this.socket = socket;
      this.channel = socket.channel;
    }

    @Override
    int firstInterest() {
      return SelectionKey.OP_READ;
    }
  }

  /** RFC 7766 framing: the query goes out with its 2-byte length; answers are read the same way. */
  private static final class TcpQuery extends Exchange {
    final ByteBuffer out;
    final ByteBuffer length = ByteBuffer.allocate(2);
    ByteBuffer body;
    boolean connected;

    TcpQuery(InetSocketAddress server, byte[] query, int id, CacheKey key, long deadlineNanos) {
      super(server, id, key, deadlineNanos);
      out = ByteBuffer.allocate(query.length + 2);
      out.putShort((short) query.length).put(query).flip();
    }

    @Override
    int firstInterest() {
      return connected ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT;
    }
  }

  /**
   * @param maxOpen upstream sockets open at once; beyond it an exchange fails at once ("overload")
   */
  public UpstreamSelector(int maxOpen, ServerMetrics metrics) throws IOException {
    this.maxOpen = maxOpen;
    this.metrics = metrics;
    this.selector = Selector.open();
    this.loop = new Thread(this::run, "shoal-upstream");
    this.loop.setDaemon(true);
    this.loop.start();
  }

  /** The cap on open upstream sockets. */
  public int maxOpen() {
    return maxOpen;
  }

  /**
   * A fresh random 16-bit query ID for one exchange: with the random source port, what an
   * off-path attacker must guess to slip in a forged answer.
   */
  public int newQueryId() {
    synchronized (random) {
      return random.nextInt(65536);
    }
  }

  /** Sends {@code query}'s question over UDP now with a fresh ID (see {@link #udp(InetSocketAddress, byte[], int, CacheKey, long)}). */
  public CompletableFuture<byte[]> udp(InetSocketAddress server, DnsQuery query, long deadlineNanos) {
    int id = newQueryId();
    return udp(server, query.upstreamQuery(id), id, query.key(), deadlineNanos);
  }

  /** Sends {@code query} over UDP now; completes with the matching response, or fails at the deadline. */
  public CompletableFuture<byte[]> udp(
      InetSocketAddress server, byte[] query, int id, CacheKey key, long deadlineNanos) {
    UdpSocket socket = idleSocket(server);
    boolean fresh = socket == null;
    if (fresh) {
      if (!admit()) {
        return overload();
      }
      try {
        socket = new UdpSocket(openConnected(server));
      } catch (IOException | RuntimeException e) {
        open.decrementAndGet();
        return CompletableFuture.failedFuture(new UpstreamException("error", "socket for " + server + ": " + e));
      }
    }
    UdpQuery x = new UdpQuery(socket, server, id, key, deadlineNanos);
    socket.uses++;
    socket.query = x;
    try {
      socket.channel.write(ByteBuffer.wrap(query));
    } catch (IOException | RuntimeException e) {
      socket.query = null;
      retire(socket);
      return CompletableFuture.failedFuture(new UpstreamException("error", "send to " + server + ": " + e));
    }
    long wakesAt = selectorWakesAt;
    if (fresh || (wakesAt != Long.MIN_VALUE && deadlineNanos - wakesAt < 0)) {
      submit(x);
    } else {
      // Registered already and the selector wakes before this deadline: no wake-up call needed.
      incoming.add(x);
    }
    return x.result;
  }

  private static DatagramChannel openConnected(InetSocketAddress server) throws IOException {
    DatagramChannel ch = DatagramChannel.open(familyOf(server));
    try {
      ch.configureBlocking(false);
      ch.connect(server);
      return ch;
    } catch (IOException | RuntimeException e) {
      closeQuietly(ch);
      throw e;
    }
  }

  /** An idle socket connected to {@code server} that may carry another query, or null. */
  private UdpSocket idleSocket(InetSocketAddress server) {
    ConcurrentLinkedDeque<UdpSocket> sockets = idle.get(server);
    if (sockets == null) {
      return null;
    }
    UdpSocket s;
    while ((s = sockets.pollFirst()) != null) {
      if (System.nanoTime() - s.bornNanos < UDP_AGE_NANOS) {
        return s;
      }
      retire(s);
    }
    return null;
  }

  /** After a clean answer the socket goes back for another query, unless it has served its turn. */
  private void release(UdpQuery x) {
    UdpSocket s = x.socket;
    s.query = null;
    if (running && s.uses < UDP_USES && System.nanoTime() - s.bornNanos < UDP_AGE_NANOS) {
      idle.computeIfAbsent(x.server, k -> new ConcurrentLinkedDeque<>()).offerFirst(s);
    } else {
      retire(s);
    }
  }

  private void retire(UdpSocket s) {
    closeQuietly(s.channel);
    open.decrementAndGet();
  }

  /** Asks over TCP; completes with the matching response, or fails at the deadline. */
  public CompletableFuture<byte[]> tcp(
      InetSocketAddress server, byte[] query, int id, CacheKey key, long deadlineNanos) {
    if (!admit()) {
      return overload();
    }
    TcpQuery x = new TcpQuery(server, query, id, key, deadlineNanos);
    SocketChannel ch = null;
    try {
      ch = SocketChannel.open(familyOf(server));
      ch.configureBlocking(false);
      x.connected = ch.connect(server);
    } catch (IOException | RuntimeException e) {
      open.decrementAndGet();
      closeQuietly(ch);
      return CompletableFuture.failedFuture(new UpstreamException("error", "TCP to " + server + ": " + e));
    }
    x.channel = ch;
    submit(x);
    return x.result;
  }

  private boolean admit() {
    if (open.incrementAndGet() > maxOpen) {
      open.decrementAndGet();
      return false;
    }
    return true;
  }

  private CompletableFuture<byte[]> overload() {
    UpstreamException e = new UpstreamException(UpstreamException.OVERLOAD, maxOpen + " upstream sockets already open");
    capReached.warn("upstream socket cap reached (shoal_upstream_seconds{outcome=\"overload\"})", e);
    return CompletableFuture.failedFuture(e);
  }

  private void submit(Exchange x) {
    incoming.add(x);
    selector.wakeup();
  }

  private void run() {
    while (running) {
      try {
        Exchange x;
        while ((x = incoming.poll()) != null) {
          try {
            if (x instanceof UdpQuery u) {
              if (u.socket.key == null) {
                u.socket.key = u.channel.register(selector, SelectionKey.OP_READ, u.socket);
              }
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
          if (k.attachment() instanceof UdpSocket u) {
            readUdp(u);
          } else {
            stepTcp((TcpQuery) k.attachment(), k);
          }
        }
        selector.selectedKeys().clear();
        long now = System.nanoTime();
        if (now - lastSweep > 1_000_000_000L) {
          lastSweep = now;
          sweepIdle(now);
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

  /** Closes idle sockets that outlived {@link #UDP_AGE_NANOS}, so no port stays open for long. */
  private void sweepIdle(long now) {
    for (ConcurrentLinkedDeque<UdpSocket> sockets : idle.values()) {
      for (UdpSocket s : sockets) {
        if (now - s.bornNanos >= UDP_AGE_NANOS && sockets.removeFirstOccurrence(s)) {
          retire(s);
        }
      }
    }
  }

  private void readUdp(UdpSocket socket) {
    while (true) {
      udpBuffer.clear();
      int n;
      try {
        n = socket.channel.read(udpBuffer);
      } catch (IOException e) {
        // e.g. ICMP port unreachable reported on the connected socket: the server is not there.
        UdpQuery x = socket.query;
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
      UdpQuery x = socket.query;
      if (x == null || x.result.isDone()) {
        // A datagram for no query in flight on this socket (a late or duplicate answer).
        metrics.dropped(ServerMetrics.UPSTREAM_MISMATCH);
        continue;
      }
      byte[] bytes = new byte[n];
      udpBuffer.flip().get(bytes);
      if (!ScannedAnswer.answers(bytes, n, x.id, x.key)) {
        metrics.dropped(ServerMetrics.UPSTREAM_MISMATCH);
        continue;
      }
      finish(x, bytes, null);
    }
  }

  private void stepTcp(TcpQuery x, SelectionKey k) {
    SocketChannel ch = (SocketChannel) x.channel;
    try {
      if (!x.connected) {
        if (!ch.finishConnect()) {
          return;
        }
        x.connected = true;
        k.interestOps(SelectionKey.OP_WRITE);
      }
      if (x.out.hasRemaining()) {
        ch.write(x.out);
        if (x.out.hasRemaining()) {
          return;
        }
        k.interestOps(SelectionKey.OP_READ);
        return;
      }
      while (!x.result.isDone()) {
        if (x.body == null) {
          if (ch.read(x.length) < 0) {
            throw new IOException("closed the connection mid-answer");
          }
          if (x.length.hasRemaining()) {
            return;
          }
          x.body = ByteBuffer.allocate(x.length.flip().getShort() & 0xFFFF);
        }
        if (ch.read(x.body) < 0) {
          throw new IOException("closed the connection mid-answer");
        }
        if (x.body.hasRemaining()) {
          return;
        }
        byte[] bytes = x.body.array();
        x.body = null;
        x.length.clear();
        if (ScannedAnswer.answers(bytes, bytes.length, x.id, x.key)) {
          finish(x, bytes, null);
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
    if (x instanceof UdpQuery u) {
      if (failure == null) {
        release(u);
      } else {
        // After a timeout or an error the socket is not trusted with another query.
        u.socket.query = null;
        retire(u.socket);
      }
    } else {
      closeQuietly(x.channel);
      open.decrementAndGet();
    }
    if (failure != null) {
      x.result.completeExceptionally(failure);
    } else {
      x.result.complete(answer);
    }
  }

  private static StandardProtocolFamily familyOf(InetSocketAddress server) {
    return server.getAddress() instanceof java.net.Inet6Address ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET;
  }

  private static void closeQuietly(java.nio.channels.Channel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // closing an upstream socket cannot lose anything
      }
    }
  }

  /** True once {@link #close} was called. */
  public boolean closed() {
    return !running;
  }

  /** Upstream sockets open now. */
  public int open() {
    return open.get();
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
    Exchange x;
    while ((x = incoming.poll()) != null) {
      finish(x, null, new UpstreamException("error", "shutting down"));
    }
    while ((x = deadlines.poll()) != null) {
      finish(x, null, new UpstreamException("error", "shutting down"));
    }
    for (ConcurrentLinkedDeque<UdpSocket> sockets : idle.values()) {
      UdpSocket s;
      while ((s = sockets.pollFirst()) != null) {
        retire(s);
      }
    }
  }
}
