package io.shoal.querylog;

import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;

/**
 * Encodes a {@link QueryEvent} as a {@code dnstap.Dnstap} protobuf, field by field from the
 * published schema (src/main/proto/dnstap.proto): shoal sends four message types, and writing
 * them by number keeps the build free of a protoc step.
 */
final class DnstapMessage {
  // Dnstap
  private static final int IDENTITY = 1;
  private static final int VERSION = 2;
  private static final int MESSAGE = 14;
  private static final int TYPE = 15;
  private static final int TYPE_MESSAGE = 1;
  // Message
  private static final int M_TYPE = 1;
  private static final int SOCKET_FAMILY = 2;
  private static final int SOCKET_PROTOCOL = 3;
  private static final int QUERY_ADDRESS = 4;
  private static final int RESPONSE_ADDRESS = 5;
  private static final int QUERY_PORT = 6;
  private static final int RESPONSE_PORT = 7;
  private static final int QUERY_TIME_SEC = 8;
  private static final int QUERY_TIME_NSEC = 9;
  private static final int QUERY_MESSAGE = 10;
  private static final int RESPONSE_TIME_SEC = 12;
  private static final int RESPONSE_TIME_NSEC = 13;
  private static final int RESPONSE_MESSAGE = 14;
  // SocketFamily
  private static final int INET = 1;
  private static final int INET6 = 2;

  private static final long NANOS = 1_000_000_000L;

  private final byte[] identity;
  private final byte[] version;

  /** @param identity the server identity field, or null; @param version likewise */
  DnstapMessage(byte[] identity, byte[] version) {
    this.identity = identity;
    this.version = version;
  }

  byte[] encode(QueryEvent e) {
    try {
      ByteArrayOutputStream m = new ByteArrayOutputStream(64 + e.query().length
          + (e.response() == null ? 0 : e.response().length));
      CodedOutputStream c = CodedOutputStream.newInstance(m);
      c.writeEnum(M_TYPE, e.kind().code);
      if (e.peer() != null) {
        c.writeEnum(SOCKET_FAMILY, e.peer().getAddress() instanceof Inet4Address ? INET : INET6);
      }
      c.writeEnum(SOCKET_PROTOCOL, protocol(e));
      InetSocketAddress peer = e.peer();
      if (peer != null) {
        // The client asked (query side); for a forwarder, the upstream answered (response side).
        boolean client = e.kind().client();
        c.writeByteArray(client ? QUERY_ADDRESS : RESPONSE_ADDRESS, peer.getAddress().getAddress());
        c.writeUInt32(client ? QUERY_PORT : RESPONSE_PORT, peer.getPort());
      }
      c.writeUInt64(QUERY_TIME_SEC, e.queryNanos() / NANOS);
      c.writeFixed32(QUERY_TIME_NSEC, (int) (e.queryNanos() % NANOS));
      c.writeByteArray(QUERY_MESSAGE, e.query());
      if (e.response() != null) {
        c.writeUInt64(RESPONSE_TIME_SEC, e.responseNanos() / NANOS);
        c.writeFixed32(RESPONSE_TIME_NSEC, (int) (e.responseNanos() % NANOS));
        c.writeByteArray(RESPONSE_MESSAGE, e.response());
      }
      c.flush();
      byte[] message = m.toByteArray();

      ByteArrayOutputStream d = new ByteArrayOutputStream(message.length + 64);
      CodedOutputStream o = CodedOutputStream.newInstance(d);
      if (identity != null) {
        o.writeByteArray(IDENTITY, identity);
      }
      if (version != null) {
        o.writeByteArray(VERSION, version);
      }
      o.writeByteArray(MESSAGE, message);
      o.writeEnum(TYPE, TYPE_MESSAGE);
      o.flush();
      return d.toByteArray();
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
  }

  /** dnstap's SocketProtocol: UDP 1, TCP 2, DOT 3, DOH 4; forwarded queries go out over UDP first. */
  private static int protocol(QueryEvent e) {
    if (!e.kind().client()) {
      return 1;
    }
    return switch (e.protocol()) {
      case UDP -> 1;
      case TCP -> 2;
      case DOT -> 3;
      case DOH -> 4;
    };
  }
}
