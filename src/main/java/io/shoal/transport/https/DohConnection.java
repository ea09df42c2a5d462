package io.shoal.transport.https;

import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.ListenerSocket;
import io.shoal.transport.TcpTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One DoH connection of a {@link TcpTransport}, touched by its selector thread only: TLS as DoT has
 * it (or clear text), then HTTP/2 when ALPN chose "h2" or the client opens with HTTP/2's preface,
 * else HTTP/1.1. It meets the stream listeners' deadlines: the handshake's, a first request's, and
 * the idle one (no request in flight and none for tcp_idle_timeout), each counted once. What it
 * holds is bounded: its read buffer is made when the first bytes arrive and grows to at most
 * {@link #MAX_IN}; past {@link #MAX_IN_FLIGHT} requests in flight or {@link #MAX_OUT} bytes the
 * client has not taken, it stops reading until the client catches up.
 */
final class DohConnection extends ListenerSocket {
  /** Requests of one connection in flight at once (HTTP/2's advertised concurrent streams). */
  static final int MAX_IN_FLIGHT = 100;
  /** Bytes waiting for the client to take them, past which the connection stops reading. */
  private static final int MAX_OUT = 256 * 1024;
  private static final int FIRST_IN = 1024;
  /** The read buffer's largest size: an HTTP/2 frame (16 KiB + 9) or an HTTP/1.1 head (16 KiB) fits. */
  static final int MAX_IN = 32 * 1024;
  private static final int TAKES_PER_EVENT = 64;
  private static final byte[] H2_START = "PRI ".getBytes(StandardCharsets.US_ASCII);

  private final DohExchange exchange;
  private ByteBuffer in;
  private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
  private int outBytes;
  private HttpSession session;
  private int inFlight;
  private int requests;
  private long lastMessage;
  private long lastActive;
  private long lastWrite;
  private boolean stopped;

  DohConnection(TcpTransport listener, DohExchange exchange, SocketChannel channel, InetSocketAddress client, long now) {
    super(listener, channel, client, now);
    this.exchange = exchange;
    this.lastMessage = now;
    this.lastActive = now;
    this.lastWrite = now;
  }

  @Override
  protected void handshook() {
    lastMessage = System.nanoTime();
  }

  @Override
  public boolean asked() {
    return requests > 0;
  }

  @Override
  public boolean idle() {
    return !closed && inFlight == 0 && out.isEmpty() && (session == null || !session.busy())
        && (tls == null || !tls.pendingOutput());
  }

  @Override
  public long lastActive() {
    return lastActive;
  }

  @Override
  protected void read() throws IOException {
    if (in == null) {
      in = ByteBuffer.allocate(FIRST_IN);
    }
    int n = tls == null ? channel.read(in) : tls.read(in);
    if (n < 0) {
      eof = true;
    }
    process();
    takeDecrypted();
  }

  /** Hands on what the TLS layer decrypted and holds, while the connection takes more. */
  private void takeDecrypted() {
    for (int i = 0; i < TAKES_PER_EVENT && tls != null && tls.buffered() && accepting() && in.hasRemaining(); i++) {
      tls.take(in);
      process();
    }
  }

  /** Hands what was read to the HTTP session (choosing it first), and sizes the buffer for what is left. */
  private void process() {
    in.flip();
    if (session == null) {
      choose();
    }
    if (session != null && !stopped) {
      session.read(in);
    }
    in.compact();
    if (in.position() == 0 && in.capacity() > FIRST_IN) {
      in = ByteBuffer.allocate(FIRST_IN);
    } else if (!in.hasRemaining() && !stopped) {
      if (in.capacity() >= MAX_IN) {
        // Never expected: each session consumes or refuses before this size.
        stop(ServerMetrics.HTTP_PROTOCOL_ERROR);
        return;
      }
      ByteBuffer bigger = ByteBuffer.allocate(Math.min(MAX_IN, in.capacity() * 2));
      in = bigger.put(in.flip());
    }
  }

  /** HTTP/2 when ALPN chose it or the client starts with its preface (prior knowledge); else HTTP/1.1. */
  private void choose() {
    String alpn = tls == null ? null : tls.applicationProtocol();
    if (tls != null && !tls.handshook()) {
      return;
    }
    if ("h2".equals(alpn)) {
      session = new Http2Session(this);
    } else if ("http/1.1".equals(alpn)) {
      session = new Http1Session(this);
    } else if (in.remaining() >= H2_START.length || eof) {
      boolean h2 = in.remaining() >= H2_START.length;
      for (int i = 0; h2 && i < H2_START.length; i++) {
        h2 = in.get(in.position() + i) == H2_START[i];
      }
      session = h2 ? new Http2Session(this) : new Http1Session(this);
    }
  }

  private boolean accepting() {
    return !stopped && !eof && inFlight < MAX_IN_FLIGHT && outBytes < MAX_OUT
        && (session == null || session.accepting());
  }

  /** A whole request: answered through {@code respond} on this thread, at once for a hit. */
  void request(DohExchange.Request request, Consumer<DohExchange.Response> respond) {
    requests++;
    long now = System.nanoTime();
    lastMessage = now;
    lastActive = now;
    inFlight++;
    CompletableFuture<DohExchange.Response> response = exchange.serve(request, client);
    if (response.isDone() && !response.isCompletedExceptionally()) {
      inFlight--;
      respond.accept(response.getNow(null));
      return;
    }
    response.whenComplete((r, e) -> listener.execute(() -> {
      inFlight--;
      lastActive = System.nanoTime();
      if (!closed) {
        respond.accept(e == null ? r : DohExchange.Response.error(500, "the query failed"));
      }
      settle();
    }));
  }

  /** Queues bytes for the client. */
  void send(ByteBuffer bytes) {
    if (closed || !bytes.hasRemaining()) {
      return;
    }
    if (out.isEmpty()) {
      lastWrite = System.nanoTime();
    }
    outBytes += bytes.remaining();
    out.add(bytes);
  }

  /** Counts a request of this connection left unanswered for {@code reason}; the connection goes on. */
  void counted(String reason) {
    listener.metrics().dropped(reason);
  }

  /**
   * Takes no more from the client (counting {@code reason} unless null): what is queued is still
   * written, then the connection closes.
   */
  void stop(String reason) {
    if (!stopped && reason != null) {
      listener.metrics().dropped(reason);
    }
    stopped = true;
  }

  @Override
  protected void write() throws IOException {
    if (tls != null) {
      // Each buffer (a whole response, HEADERS and DATA together) is one TLS record: answers are
      // not joined into one record as DoT's are, since a client that reads a record at a time
      // (dnsperf 2.10) takes one HTTP/2 response from each and loses the others.
      if (!tls.flush()) {
        return;
      }
    }
    while (!out.isEmpty()) {
      ByteBuffer head = out.peek();
      int n = tls == null ? channel.write(head) : tls.write(head);
      if (n > 0) {
        lastWrite = System.nanoTime();
        outBytes -= n;
      }
      if (head.hasRemaining()) {
        return;
      }
      out.poll();
    }
  }

  /** After anything happened: reads what now has room, writes, watches what it must, closes when done. */
  @Override
  protected void settle() {
    if (closed || lingering()) {
      return;
    }
    try {
      if (in != null && in.position() > 0 && accepting()) {
        process();
      }
      if (in != null) {
        takeDecrypted();
      }
      write();
    } catch (IOException e) {
      close();
      return;
    }
    boolean unsent = !out.isEmpty() || (tls != null && tls.pendingOutput());
    boolean busy = session != null && session.busy() && !stopped;
    if ((stopped || eof) && inFlight == 0 && !unsent && !busy) {
      finish();
      return;
    }
    int ops = (accepting() ? SelectionKey.OP_READ : 0) | (unsent ? SelectionKey.OP_WRITE : 0);
    if (key.isValid() && key.interestOps() != ops) {
      key.interestOps(ops);
    }
  }

  @Override
  public void checkDeadline(long now, long handshakeNanos, long firstQueryNanos, long idleNanos) {
    if (closed) {
      return;
    }
    if (handshakeOrLingerDeadline(now, handshakeNanos)) {
      return;
    }
    boolean waiting = !out.isEmpty() || (session != null && session.stalled());
    if (waiting && now - lastWrite > idleNanos) {
      // the client does not take its answers (or keeps its window shut)
      listener.metrics().dropped(ServerMetrics.TCP_DEADLINE);
      close();
    } else if (!stopped && !eof && requests == 0 && now - lastMessage > firstQueryNanos) {
      closeQuiet(ServerMetrics.TCP_FIRST_QUERY_TIMEOUT);
    } else if (!stopped && !eof && requests > 0 && inFlight == 0 && !waiting
        && (session == null || !session.busy()) && now - lastActive > idleNanos) {
      closeQuiet(ServerMetrics.TCP_IDLE_TIMEOUT);
    }
  }

  /** A deadline closes a connection with nothing in flight: counted, told (GOAWAY), then closed. */
  private void closeQuiet(String reason) {
    listener.metrics().dropped(reason);
    stopped = true;
    if (session != null) {
      session.closing();
    }
    settle();
  }
}
