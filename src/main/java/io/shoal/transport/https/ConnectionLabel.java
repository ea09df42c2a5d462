package io.shoal.transport.https;

import akka.util.ByteString;
import akka.util.ByteStringBuilder;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * What {@link DohConnectionHook} puts in front of a DoH TLS connection's bytes, for the engine
 * akka-http makes for it from the one supplier of all ({@code CountedHandshakeEngine.labelled}),
 * which reads it off and so knows whose handshake it runs: a zero byte (no TLS record starts with
 * one), the length of the client's address, the address and the port.
 */
final class ConnectionLabel {
  private static final byte MARK = 0;

  private ConnectionLabel() {}

  static ByteString of(InetSocketAddress client) {
    byte[] address = client.getAddress().getAddress();
    ByteStringBuilder b = new ByteStringBuilder();
    b.putByte(MARK);
    b.putByte((byte) address.length);
    b.putBytes(address);
    b.putByte((byte) (client.getPort() >> 8));
    b.putByte((byte) client.getPort());
    return b.result();
  }

  /**
   * The client named by the label at {@code src}'s position, which is moved past it; null, with
   * {@code src} left as it was, when the bytes do not start with a label (a socket the hook did
   * not see).
   */
  static InetSocketAddress read(ByteBuffer src) {
    int at = src.position();
    if (src.remaining() < 2 || src.get(at) != MARK) {
      return null;
    }
    int length = src.get(at + 1);
    if ((length != 4 && length != 16) || src.remaining() < 2 + length + 2) {
      return null;
    }
    byte[] address = new byte[length];
    src.position(at + 2);
    src.get(address);
    int port = ((src.get() & 0xFF) << 8) | (src.get() & 0xFF);
    try {
      return new InetSocketAddress(InetAddress.getByAddress(address), port);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e); // not for 4 or 16 bytes
    }
  }
}
