package io.shoal.transport;

import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.tls.TlsChannel;
import io.shoal.wire.AnswerRenderer;
import io.shoal.wire.Padding;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One DNS-over-TCP or DNS-over-TLS connection of a {@link TcpTransport}, touched by its selector
 * thread only: RFC 7766 framing, queries answered concurrently and written in the order they
 * complete; over TLS the same behind a {@link TlsChannel}. What a connection may hold is bounded:
 * one message being read (at most 64 KiB) and, in flight or waiting to be written, at most
 * {@link #PIPELINE} replies; past that it stops reading until the client has taken its answers.
 */
final class TcpConnection extends ListenerSocket {
  /** Queries of one connection in flight or waiting to be written at once. */
  static final int PIPELINE = 32;
  /** A DNS header: any message shorter is not a query. */
  private static final int SHORTEST_MESSAGE = 12;
  private static final int FIRST_BUFFER = 512;
  /** Replies waiting together are encrypted as one TLS record of at most this many bytes. */
  private static final int RECORD = 16384;
  /** Decrypted bytes taken per event, at most this many times, so one client cannot hold the thread. */
  private static final int TAKES_PER_EVENT = 64;

  private final int maxQueries;
  private ByteBuffer in = ByteBuffer.allocate(FIRST_BUFFER);
  private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
  private int inFlight;
  private int queries;
  /** Bytes received, and bytes of whole messages among them: a client cut off mid-message is counted. */
  private long received;
  private long framed;
  /** When the last whole message arrived (or the connection was accepted): the deadline's start. */
  private long lastMessage;
  /** When a query last arrived or was answered: eviction takes the oldest idle connection. */
  private long lastActive;
  /** When the client last took bytes of a reply, while replies wait to be written. */
  private long lastWrite;
  /** No more queries are taken: deadline, query cap or a framing error. */
  private boolean stopped;

  TcpConnection(TcpTransport listener, SocketChannel channel, InetSocketAddress client, long now) {
    super(listener, channel, client, now);
    this.maxQueries = listener.maxQueries();
    this.lastMessage = now;
    this.lastActive = now;
    this.lastWrite = now;
  }

  /** The handshake finished: the first query's deadline runs from now. */
  @Override
  protected void handshook() {
    lastMessage = System.nanoTime();
  }

  /** True once it sent a whole query: eviction turns to connections that have not first. */
  @Override
  public boolean asked() {
    return queries > 0;
  }

  @Override
  public long lastActive() {
    return lastActive;
  }

  /** No query in flight and nothing to write: eviction may take it. */
  @Override
  public boolean idle() {
    return !closed && inFlight == 0 && out.isEmpty() && (tls == null || !tls.pendingOutput());
  }

  @Override
  protected void read() throws IOException {
    int n = tls == null ? channel.read(in) : tls.read(in);
    if (n < 0) {
      eof = true;
    } else {
      received += n;
    }
    frame();
    takeDecrypted();
  }

  /** Frames what the TLS layer decrypted and holds, while the pipeline has room. */
  private void takeDecrypted() {
    for (int i = 0; i < TAKES_PER_EVENT && tls != null && tls.buffered() && !stopped
        && inFlight + out.size() < PIPELINE && in.hasRemaining(); i++) {
      received += tls.take(in);
      frame();
    }
  }

  /** Takes the whole messages out of the buffer while the pipeline has room. */
  private void frame() {
    in.flip();
    while (!stopped && inFlight + out.size() < PIPELINE && in.remaining() >= 2) {
      int length = in.getShort(in.position()) & 0xffff;
      if (length < SHORTEST_MESSAGE) {
        // Empty or headerless messages are framing errors, not queries: they must not restart
        // the deadline or count against the query cap while the client holds its slot.
        listener.metrics().dropped(ServerMetrics.MALFORMED);
        stopped = true;
        break;
      }
      if (in.remaining() < 2 + length) {
        if (in.capacity() < 2 + length) {
          ByteBuffer bigger = ByteBuffer.allocate(2 + length);
          bigger.put(in);
          in = bigger.flip();
        }
        break;
      }
      if (++queries > maxQueries) {
        listener.metrics().dropped(ServerMetrics.TCP_QUERY_LIMIT);
        stopped = true;
        break;
      }
      in.position(in.position() + 2);
      byte[] packet = new byte[length];
      in.get(packet);
      framed += 2 + length;
      long now = System.nanoTime();
      lastMessage = now;
      lastActive = now;
      inFlight++;
      ask(packet);
    }
    in.compact();
    if (in.position() == 0 && in.capacity() > FIRST_BUFFER) {
      // a large message was taken: give its buffer back
      in = ByteBuffer.allocate(FIRST_BUFFER);
    }
  }

  private void ask(byte[] packet) {
    Protocol protocol = listener.protocol();
    CompletableFuture<Optional<byte[]>> reply =
        listener.ingress().ask(packet, client, protocol).toCompletableFuture();
    if (reply.isDone()) {
      // a hit, local data or a refusal: answered on this thread, no hand-off
      answered(padded(protocol, packet, reply.getNow(Optional.empty())));
      return;
    }
    reply.whenComplete((r, e) -> listener.execute(() -> {
      answered(e == null ? padded(protocol, packet, r) : Optional.empty());
      settle();
    }));
  }

  /** Over TLS a reply is padded when its query asked for it (RFC 8467). */
  private static Optional<byte[]> padded(Protocol protocol, byte[] query, Optional<byte[]> reply) {
    return protocol == Protocol.DOT ? Padding.forQuery(query, reply) : reply;
  }

  private void answered(Optional<byte[]> reply) {
    inFlight--;
    lastActive = System.nanoTime();
    if (closed || reply.isEmpty()) {
      return;
    }
    byte[] wire = TcpTransport.untruncated(reply.get());
    listener.metrics().answered(listener.protocol().label(), AnswerRenderer.rcode(wire));
    ByteBuffer framedReply = ByteBuffer.allocate(2 + wire.length);
    framedReply.putShort((short) wire.length).put(wire).flip();
    out.add(framedReply);
  }

  @Override
  protected void write() throws IOException {
    if (tls != null) {
      if (!tls.flush()) {
        return;
      }
      coalesce();
    }
    while (!out.isEmpty()) {
      ByteBuffer head = out.peek();
      int n = tls == null ? channel.write(head) : tls.write(head);
      if (n > 0) {
        lastWrite = System.nanoTime();
      }
      if (head.hasRemaining()) {
        return;
      }
      out.poll();
    }
  }

  /** Over TLS, replies waiting together go out as one record: one encryption and one write for all. */
  private void coalesce() {
    if (out.size() < 2) {
      return;
    }
    int total = 0;
    int n = 0;
    for (ByteBuffer b : out) {
      if (total + b.remaining() > RECORD && n > 0) {
        break;
      }
      total += b.remaining();
      n++;
    }
    if (n < 2) {
      return;
    }
    ByteBuffer joined = ByteBuffer.allocate(total);
    for (int i = 0; i < n; i++) {
      joined.put(out.poll());
    }
    out.addFirst(joined.flip());
  }

  /**
   * After anything happened: writes what waits, frames what the pipeline now has room for, sets
   * what the selector should watch, and closes a connection with nothing left to do.
   */
  @Override
  protected void settle() {
    if (closed || lingering()) {
      return;
    }
    try {
      if (!stopped && in.position() >= 2) {
        frame();
      }
      takeDecrypted();
      write();
    } catch (IOException e) {
      close();
      return;
    }
    boolean unsent = !out.isEmpty() || (tls != null && tls.pendingOutput());
    if ((stopped || eof) && inFlight == 0 && !unsent) {
      // With the pipeline empty every whole message left has been taken: what remains, if
      // anything, was cut short by the client.
      finish();
      return;
    }
    int ops = (!stopped && !eof && inFlight + out.size() < PIPELINE ? SelectionKey.OP_READ : 0)
        | (unsent ? SelectionKey.OP_WRITE : 0);
    if (key.isValid() && key.interestOps() != ops) {
      key.interestOps(ops);
    }
  }

  /**
   * Stops reading a connection whose first query did not arrive within {@code firstQueryNanos}, or
   * whose next whole message did not within {@code idleNanos} (its queries already received are
   * still answered), and closes one whose client has not taken a reply for as long.
   */
  @Override
  public void checkDeadline(long now, long handshakeNanos, long firstQueryNanos, long idleNanos) {
    if (closed) {
      return;
    }
    if (handshakeOrLingerDeadline(now, handshakeNanos)) {
      return;
    }
    if (!stopped && !eof && now - lastMessage > (queries == 0 ? firstQueryNanos : idleNanos)) {
      listener.metrics().dropped(received > framed ? ServerMetrics.TCP_DEADLINE
          : queries > 0 ? ServerMetrics.TCP_IDLE_TIMEOUT : ServerMetrics.TCP_FIRST_QUERY_TIMEOUT);
      stopped = true;
      settle();
    } else if (!out.isEmpty() && now - lastWrite > idleNanos) {
      listener.metrics().dropped(ServerMetrics.TCP_DEADLINE);
      close();
    }
  }
}
