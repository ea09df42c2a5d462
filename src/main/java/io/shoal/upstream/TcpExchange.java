package io.shoal.upstream;

import io.shoal.wire.CacheKey;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/** A query over TCP on a connection of its own; RFC 7766 framing: each message after its 2-byte length. */
final class TcpExchange extends Exchange {
  private final ByteBuffer out;
  private final ByteBuffer length = ByteBuffer.allocate(2);
  private ByteBuffer body;
  boolean connected;

  TcpExchange(InetSocketAddress server, byte[] query, int id, CacheKey key, long deadlineNanos) {
    super(server, id, key, deadlineNanos);
    out = ByteBuffer.allocate(query.length + 2);
    out.putShort((short) query.length).put(query).flip();
  }

  @Override
  int firstInterest() {
    return connected ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT;
  }

  @Override
  void end(UpstreamSockets sockets, boolean reuse) {
    sockets.closed(channel);
  }

  /**
   * Takes the exchange as far as its socket allows now (connect, write the query, read): the next
   * whole message read, or null when the socket has nothing more for now.
   */
  byte[] step(SelectionKey k) throws IOException {
    SocketChannel ch = (SocketChannel) channel;
    if (!connected) {
      if (!ch.finishConnect()) {
        return null;
      }
      connected = true;
      k.interestOps(SelectionKey.OP_WRITE);
    }
    if (out.hasRemaining()) {
      ch.write(out);
      if (!out.hasRemaining()) {
        k.interestOps(SelectionKey.OP_READ);
      }
      return null;
    }
    if (body == null) {
      if (ch.read(length) < 0) {
        throw new IOException("closed the connection mid-answer");
      }
      if (length.hasRemaining()) {
        return null;
      }
      body = ByteBuffer.allocate(length.flip().getShort() & 0xFFFF);
    }
    if (ch.read(body) < 0) {
      throw new IOException("closed the connection mid-answer");
    }
    if (body.hasRemaining()) {
      return null;
    }
    byte[] message = body.array();
    body = null;
    length.clear();
    return message;
  }
}
