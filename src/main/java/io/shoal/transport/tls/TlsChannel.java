package io.shoal.transport.tls;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.function.Supplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

/**
 * TLS over one non-blocking socket, driven by the listener's selector thread: what the
 * connection reads comes out decrypted, what it writes goes out encrypted, and the handshake runs
 * as bytes arrive and as the socket takes them. The engine and its buffers (about 50 KB) are made
 * when the client's first bytes arrive, so a connection that never says anything (a health check,
 * a holder) costs a socket and nothing more. Delegated tasks run inline: one connection's handshake
 * is a few key operations on the selector thread.
 */
public final class TlsChannel {
  private static final ByteBuffer NOTHING = ByteBuffer.allocate(0);
  /** Unwraps per read at most: a bound on one event's work whatever the engine reports. */
  private static final int UNWRAPS_PER_READ = 256;

  private final SocketChannel channel;
  private final Supplier<SSLEngine> engines;
  private final Runnable onHandshake;
  private SSLEngine engine;
  /** Ciphertext read and not yet unwrapped (write mode). */
  private ByteBuffer netIn;
  /** Ciphertext wrapped and not yet written (read mode). */
  private ByteBuffer netOut;
  /** Plaintext unwrapped and not yet taken (read mode). */
  private ByteBuffer appIn;
  private boolean handshook;
  private boolean inboundDone;

  /**
   * {@code engines} makes the server engine when the first bytes arrive; {@code onHandshake} runs
   * once, on the selector thread, when the handshake finished.
   */
  public TlsChannel(SocketChannel channel, Supplier<SSLEngine> engines, Runnable onHandshake) {
    this.channel = channel;
    this.engines = engines;
    this.onHandshake = onHandshake;
  }

  /** True once the handshake finished. */
  public boolean handshook() {
    return handshook;
  }

  /** The protocol ALPN chose in the handshake ("h2", "http/1.1"), or "" when none was; null before the handshake. */
  public String applicationProtocol() {
    return engine == null ? null : engine.getApplicationProtocol();
  }

  /** True while bytes the client sent wait decrypted here for the connection to take them. */
  public boolean buffered() {
    return appIn != null && appIn.hasRemaining();
  }

  /** True while encrypted bytes wait for the socket to take them. */
  public boolean pendingOutput() {
    return netOut != null && netOut.hasRemaining();
  }

  /**
   * Reads into {@code dst} what the client sent, decrypted: the bytes given (0 while the handshake
   * runs or a record is incomplete), or -1 once the client closed and everything was taken. An
   * SSLException is a failed handshake or a broken stream; the connection closes.
   */
  public int read(ByteBuffer dst) throws IOException {
    if (buffered()) {
      return transfer(dst);
    }
    if (inboundDone) {
      return -1;
    }
    if (engine == null) {
      start();
    }
    int n = channel.read(netIn);
    if (n < 0) {
      inboundDone = true;
      try {
        engine.closeInbound();
      } catch (SSLException e) {
        // A client may close its socket without close_notify once it has its answers: only
        // before the handshake finished is that a failure.
        if (!handshook) {
          throw e;
        }
      }
      return buffered() ? transfer(dst) : -1;
    }
    unwrap();
    return buffered() ? transfer(dst) : 0;
  }

  /** Decrypted bytes already here, without reading the socket: what a connection with room takes. */
  public int take(ByteBuffer dst) {
    return buffered() ? transfer(dst) : 0;
  }

  /**
   * Encrypts and writes what of {@code src} the socket takes now; returns the plaintext bytes
   * consumed (0 while earlier records still wait to be written).
   */
  public int write(ByteBuffer src) throws IOException {
    int consumed = 0;
    while (src.hasRemaining() && flush()) {
      netOut.clear();
      SSLEngineResult r;
      try {
        r = engine.wrap(src, netOut);
      } finally {
        netOut.flip();
      }
      if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
        netOut = ByteBuffer.allocate(engine.getSession().getPacketBufferSize()).flip();
        continue;
      }
      if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
        throw new SSLException("the TLS session is closed");
      }
      consumed += r.bytesConsumed();
    }
    flush();
    return consumed;
  }

  /**
   * Writes encrypted bytes that wait, and goes on with a handshake that waits to send: true when
   * nothing is left waiting.
   */
  public boolean flush() throws IOException {
    if (engine == null) {
      return true;
    }
    while (true) {
      if (netOut.hasRemaining()) {
        channel.write(netOut);
        if (netOut.hasRemaining()) {
          return false;
        }
      }
      if (engine.getHandshakeStatus() != HandshakeStatus.NEED_WRAP) {
        return true;
      }
      wrapHandshake();
    }
  }

  /**
   * Sends close_notify, as far as the socket takes it now. Without it a client cannot tell the
   * close from a cut (RFC 8446, 6.1), and strict ones (OpenSSL's, dnsperf) fail the connection.
   */
  public void closeOutbound() {
    if (engine == null) {
      return;
    }
    try {
      engine.closeOutbound();
      // The JDK's engine then asks to wrap the alert (NEED_WRAP), which flush does; Conscrypt's
      // does not ask, and wraps it only when told to.
      for (int i = 0; i < 4 && flush() && !engine.isOutboundDone(); i++) {
        wrapHandshake();
      }
      flush();
    } catch (IOException e) {
      // the client left, or the engine has nothing more to send: nothing more to tell it
    }
  }

  private void start() throws SSLException {
    engine = engines.get();
    engine.beginHandshake();
    int packet = engine.getSession().getPacketBufferSize();
    netIn = ByteBuffer.allocate(packet);
    netOut = ByteBuffer.allocate(packet).flip();
    appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize()).flip();
  }

  private int transfer(ByteBuffer dst) {
    int n = Math.min(dst.remaining(), appIn.remaining());
    if (n == appIn.remaining()) {
      dst.put(appIn);
    } else {
      ByteBuffer slice = appIn.slice();
      slice.limit(n);
      dst.put(slice);
      appIn.position(appIn.position() + n);
    }
    return n;
  }

  /** Unwraps what netIn holds, running the handshake as it asks, until it needs more bytes. */
  private void unwrap() throws IOException {
    netIn.flip();
    try {
      for (int unwraps = 0; unwraps < UNWRAPS_PER_READ; unwraps++) {
        appIn.compact();
        SSLEngineResult r;
        try {
          r = engine.unwrap(netIn, appIn);
        } finally {
          appIn.flip();
        }
        switch (r.getStatus()) {
          case BUFFER_UNDERFLOW:
            if (netIn.limit() == netIn.capacity() && netIn.position() == 0) {
              // a record larger than the buffer: make room for it
              ByteBuffer bigger = ByteBuffer.allocate(engine.getSession().getPacketBufferSize() + netIn.capacity());
              bigger.put(netIn).flip();
              netIn = bigger;
            }
            return;
          case BUFFER_OVERFLOW:
            // plaintext waits for the connection to take it; the rest is unwrapped then
            ByteBuffer bigger = ByteBuffer.allocate(appIn.remaining() + engine.getSession().getApplicationBufferSize());
            bigger.put(appIn).flip();
            appIn = bigger;
            continue;
          case CLOSED:
            inboundDone = true;
            flush();
            return;
          default:
            break;
        }
        handshake(r.getHandshakeStatus());
        if (!netIn.hasRemaining() && engine.getHandshakeStatus() != HandshakeStatus.NEED_UNWRAP) {
          return;
        }
        if (r.bytesConsumed() == 0 && r.bytesProduced() == 0
            && engine.getHandshakeStatus() != HandshakeStatus.NEED_UNWRAP) {
          return;
        }
      }
    } finally {
      netIn.compact();
    }
  }

  private void handshake(HandshakeStatus status) throws IOException {
    while (true) {
      switch (status) {
        case NEED_TASK:
          for (Runnable task; (task = engine.getDelegatedTask()) != null; ) {
            task.run();
          }
          status = engine.getHandshakeStatus();
          continue;
        case NEED_WRAP:
          if (!flush()) {
            return;
          }
          status = engine.getHandshakeStatus();
          continue;
        case FINISHED:
          finished();
          return;
        case NOT_HANDSHAKING:
          finished();
          return;
        default:
          return;
      }
    }
  }

  private void wrapHandshake() throws IOException {
    netOut.clear();
    SSLEngineResult r;
    try {
      r = engine.wrap(NOTHING, netOut);
    } finally {
      netOut.flip();
    }
    if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
      netOut = ByteBuffer.allocate(netOut.capacity() * 2).flip();
      return;
    }
    if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
      for (Runnable task; (task = engine.getDelegatedTask()) != null; ) {
        task.run();
      }
    } else if (r.getHandshakeStatus() == HandshakeStatus.FINISHED) {
      finished();
    }
    if (r.getStatus() == SSLEngineResult.Status.CLOSED && !netOut.hasRemaining()) {
      throw new SSLException("the TLS session closed during its handshake");
    }
  }

  private void finished() {
    if (!handshook) {
      handshook = true;
      onHandshake.run();
    }
  }
}
