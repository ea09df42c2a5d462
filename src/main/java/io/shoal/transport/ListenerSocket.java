package io.shoal.transport;

import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.tls.TlsChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * What every connection of a {@link TcpTransport} does with its socket whatever it speaks (DNS
 * over TCP or TLS, DNS over HTTPS): TLS when the listener has engines, the handshake's deadline,
 * and the orderly end: the server's side shut (FIN) while what the client still sends is read
 * and dropped for a while, so the close does not become a reset that could throw away answers the
 * client has not read yet. Touched by the listener's selector thread only.
 */
public abstract class ListenerSocket implements ListenerConnection {
  /** How long a connection whose server side is shut keeps reading (and dropping) what the client sends. */
  private static final long LINGER_NANOS = 1_000_000_000L;

  protected final TcpTransport listener;
  protected final SocketChannel channel;
  protected final InetSocketAddress client;
  /** Null for a clear-text listener. */
  protected final TlsChannel tls;
  /** When it was accepted: the TLS handshake's deadline runs from here. */
  private final long accepted;
  protected SelectionKey key;
  /** The client has sent all it will. */
  protected boolean eof;
  protected boolean closed;
  /** When the server's side was shut (FIN sent) while the client may still be sending; 0: not. */
  private long lingeringSince;

  protected ListenerSocket(TcpTransport listener, SocketChannel channel, InetSocketAddress client, long now) {
    this.listener = listener;
    this.channel = channel;
    this.client = client;
    this.accepted = now;
    this.tls = listener.engines() == null ? null : new TlsChannel(channel, listener.engines(), this::handshook);
  }

  /** The TLS handshake finished: the first request's deadline runs from now. */
  protected abstract void handshook();

  @Override
  public void register(Selector selector) throws IOException {
    key = channel.register(selector, SelectionKey.OP_READ, this);
  }

  @Override
  public long accepted() {
    return accepted;
  }

  @Override
  public boolean closed() {
    return closed;
  }

  /** Reads what the socket has (for the protocol spoken), whole messages handed on. */
  protected abstract void read() throws IOException;

  /** Writes what waits for the client, as much as the socket takes. */
  protected abstract void write() throws IOException;

  /** After anything happened: reads what now has room, writes, watches what it must, closes when done. */
  protected abstract void settle();

  @Override
  public final void ready(SelectionKey k) {
    try {
      if (lingeringSince != 0) {
        dropWhileLingering();
        return;
      }
      if (k.isReadable()) {
        read();
      }
      if (!closed && k.isValid() && k.isWritable()) {
        write();
      }
      settle();
    } catch (IOException e) {
      // reset by the client, or a write to a closed connection: nothing more to say to it
      close();
    }
  }

  /** Whether the server's side is shut and the connection only drops what still arrives. */
  protected boolean lingering() {
    return lingeringSince != 0;
  }

  /** While lingering: reads and drops what the client sent, closing at its FIN. */
  private void dropWhileLingering() throws IOException {
    if (channel.read(ByteBuffer.allocate(512)) < 0) {
      close();
    }
  }

  /**
   * The deadlines every connection has: the handshake's (from the accept) and the linger's. True
   * when one of them applies now, and the connection's own deadlines do not.
   */
  protected boolean handshakeOrLingerDeadline(long now, long handshakeNanos) {
    if (tls != null && !tls.handshook() && lingeringSince == 0) {
      if (now - accepted > handshakeNanos) {
        listener.metrics().dropped(ServerMetrics.TLS_HANDSHAKE_TIMEOUT);
        close();
      }
      return true;
    }
    if (lingeringSince != 0) {
      if (now - lingeringSince > LINGER_NANOS) {
        close();
      }
      return true;
    }
    return false;
  }

  /** Closes a connection that said all it had to: at once after the client's FIN, else lingering. */
  protected void finish() {
    if (tls != null) {
      tls.closeOutbound();
    }
    if (eof) {
      close();
      return;
    }
    try {
      channel.shutdownOutput();
    } catch (IOException e) {
      close();
      return;
    }
    lingeringSince = System.nanoTime();
    if (key.isValid()) {
      key.interestOps(SelectionKey.OP_READ);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (key != null) {
      key.cancel();
    }
    try {
      channel.close();
    } catch (IOException e) {
      // already gone
    }
    listener.closed(this);
  }
}
