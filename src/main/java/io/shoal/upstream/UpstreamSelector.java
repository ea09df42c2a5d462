package io.shoal.upstream;

import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every upstream socket of the node, UDP and TCP alike, on one selector thread: one I/O model for
 * both. A response counts only if it carries the query's ID and question (and, for UDP, comes
 * from the server: the sockets are connected to it, so the kernel drops datagrams from anywhere
 * else); anything else is counted (shoal_dropped_total{reason="upstream_mismatch"}) and the wait
 * goes on until the deadline.
 *
 * <p>UDP sockets rotate ({@link UpstreamSockets}): each carries one query at a time, and at most
 * {@link #UDP_USES} queries in {@link #UDP_AGE_NANOS}. TCP exchanges (answers that came back
 * truncated) use a socket each.
 *
 * <p>The caller sends the UDP datagram on its own thread (no hand-off before the query leaves);
 * the selector thread ({@link ExchangeLoop}) waits for the answer, runs TCP's
 * connect/write/read, and ends the exchange at its deadline. Open sockets are capped (sized from
 * the file limit by the caller), so a miss flood cannot take the descriptors that clients and the
 * caches need.
 */
public final class UpstreamSelector implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(UpstreamSelector.class);
  private static final FailureLog capReached = new FailureLog(log, 10);
  /** Queries one UDP socket carries, one after another, before it is closed. */
  static final int UDP_USES = 16;
  /** How long a UDP socket may live, so a port is never in use for long. */
  static final long UDP_AGE_NANOS = 5_000_000_000L;

  private final UpstreamSockets sockets;
  private final ExchangeLoop loop;
  private final SecureRandom random = new SecureRandom();
  /**
   * Query IDs (and the letter-case bits of lookups from the listeners) drawn from {@link #random} a
   * buffer at a time: one call per ID cost 0.8 µs of an owner lookup in a profile (the platform's
   * generator reads the kernel's and mixes per call).
   */
  private final byte[] ids = new byte[4096];
  private int nextId = ids.length;
  /** Queries in flight that {@link #fromListener} sent, by ID; made on first use (cluster mode). */
  private volatile AtomicReferenceArray<ListenerExchange> listenerIds;

  /**
   * @param maxOpen upstream sockets open at once; beyond it an exchange fails at once ("overload")
   */
  public UpstreamSelector(int maxOpen, ServerMetrics metrics) throws IOException {
    this.sockets = new UpstreamSockets(maxOpen, UDP_USES, UDP_AGE_NANOS);
    this.loop = new ExchangeLoop(sockets, metrics);
  }

  /** The cap on open upstream sockets. */
  public int maxOpen() {
    return sockets.maxOpen();
  }

  /**
   * A fresh random 16-bit query ID for one exchange: with the random source port, what an
   * off-path attacker must guess to slip in a forged answer.
   */
  public int newQueryId() {
    return (int) draw(2);
  }

  /** The next {@code n} (1 to 8) bytes of {@link #random} as a number, taken from {@link #ids}. */
  private long draw(int n) {
    synchronized (ids) {
      if (nextId + n > ids.length) {
        random.nextBytes(ids);
        nextId = 0;
      }
      long value = 0;
      for (int i = 0; i < n; i++) {
        value = value << 8 | ids[nextId++] & 0xff;
      }
      return value;
    }
  }

  /**
   * Sends {@code query} from {@code via}, one of the node's listening UDP sockets, to {@code
   * server}, with a fresh ID and the question name's letter case randomised; completes with the
   * reply, which the listeners' threads hand to {@link #listenerReply}, or fails at the deadline.
   * Null when it was not sent: {@code via} cannot reach the server, or no ID was free.
   *
   * <p>An owner lookup sent this way costs the asking node no thread of its own: the reply is read
   * by a listener's thread with the clients' queries, where through {@link #udp} it woke this
   * selector's thread to read it and hand it on (at most a few in a batch below saturation).
   *
   * @param packet the query with a given ID, its question name lower-cased
   */
  public CompletableFuture<byte[]> fromListener(
      DatagramSender via, InetSocketAddress server, DnsQuery query, IntFunction<byte[]> packet, long deadlineNanos) {
    if (!loop.running() || server.isUnresolved()) {
      return null;
    }
    AtomicReferenceArray<ListenerExchange> byId = listenerIds();
    for (int attempt = 0; attempt < 4; attempt++) {
      int id = newQueryId();
      if (byId.get(id) != null) {
        continue;
      }
      byte[] q = packet.apply(id);
      byte[] question = query.randomiseCase(q, draw(8));
      ListenerExchange x = new ListenerExchange(server, id, query.key(), deadlineNanos, question, byId);
      if (!byId.compareAndSet(id, null, x)) {
        continue;
      }
      if (!via.sendDatagram(q, server)) {
        byId.compareAndSet(id, x, null);
        return null;
      }
      loop.enqueue(x, false); // nothing to register: only its deadline is kept
      return x.result;
    }
    return null;
  }

  /**
   * A response read by a listening socket, from {@code from}: true if it is the reply to a query
   * sent by {@link #fromListener}, which it then completes; false for anything else (no such
   * query in flight, another sender, another question or letter case), which the caller handles as
   * any response that reaches a listener.
   */
  public boolean listenerReply(byte[] reply, InetSocketAddress from) {
    AtomicReferenceArray<ListenerExchange> byId = listenerIds;
    if (byId == null || reply.length < 2) {
      return false;
    }
    ListenerExchange x = byId.get((reply[0] & 0xff) << 8 | reply[1] & 0xff);
    if (x == null || !x.repliedBy(reply, from) || !x.claim()) {
      return false;
    }
    x.result.complete(reply);
    return true;
  }

  private AtomicReferenceArray<ListenerExchange> listenerIds() {
    AtomicReferenceArray<ListenerExchange> byId = listenerIds;
    if (byId == null) {
      synchronized (this) {
        byId = listenerIds;
        if (byId == null) {
          listenerIds = byId = new AtomicReferenceArray<>(1 << 16);
        }
      }
    }
    return byId;
  }

  /** Sends {@code query}'s question over UDP now with a fresh ID (see {@link #udp(InetSocketAddress, byte[], int, CacheKey, long)}). */
  public CompletableFuture<byte[]> udp(InetSocketAddress server, DnsQuery query, long deadlineNanos) {
    int id = newQueryId();
    return udp(server, query.upstreamQuery(id), id, query.key(), deadlineNanos);
  }

  /** Sends {@code query} over UDP now; completes with the matching response, or fails at the deadline. */
  public CompletableFuture<byte[]> udp(
      InetSocketAddress server, byte[] query, int id, CacheKey key, long deadlineNanos) {
    UpstreamSockets.Udp socket = sockets.idle(server);
    boolean fresh = socket == null;
    if (fresh) {
      if (!sockets.admit()) {
        return overload();
      }
      try {
        socket = UpstreamSockets.connectedTo(server);
      } catch (IOException | RuntimeException e) {
        sockets.notOpened();
        return CompletableFuture.failedFuture(new UpstreamException("error", "socket for " + server + ": " + e));
      }
    }
    UdpExchange x = new UdpExchange(socket, server, id, key, deadlineNanos);
    socket.uses++;
    socket.query = x;
    try {
      socket.channel.write(ByteBuffer.wrap(query));
    } catch (IOException | RuntimeException e) {
      socket.query = null;
      sockets.retire(socket);
      return CompletableFuture.failedFuture(new UpstreamException("error", "send to " + server + ": " + e));
    }
    loop.enqueue(x, fresh);
    return x.result;
  }

  /** Asks over TCP; completes with the matching response, or fails at the deadline. */
  public CompletableFuture<byte[]> tcp(
      InetSocketAddress server, byte[] query, int id, CacheKey key, long deadlineNanos) {
    if (!sockets.admit()) {
      return overload();
    }
    TcpExchange x = new TcpExchange(server, query, id, key, deadlineNanos);
    SocketChannel ch = null;
    try {
      ch = SocketChannel.open(UpstreamSockets.familyOf(server));
      ch.configureBlocking(false);
      x.connected = ch.connect(server);
    } catch (IOException | RuntimeException e) {
      sockets.closed(ch);
      return CompletableFuture.failedFuture(new UpstreamException("error", "TCP to " + server + ": " + e));
    }
    x.channel = ch;
    loop.submit(x);
    return x.result;
  }

  private CompletableFuture<byte[]> overload() {
    UpstreamException e = new UpstreamException(UpstreamException.OVERLOAD, sockets.maxOpen() + " upstream sockets already open");
    capReached.warn("upstream socket cap reached (shoal_upstream_seconds{outcome=\"overload\"})", e);
    return CompletableFuture.failedFuture(e);
  }

  /** True once {@link #close} was called. */
  public boolean closed() {
    return !loop.running();
  }

  /** Upstream sockets open now. */
  public int open() {
    return sockets.open();
  }

  @Override
  public void close() {
    loop.close();
  }
}
