package io.shoal.testing;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;

/** A test client that sends exact bytes and returns exact bytes, over UDP or TCP. */
public final class DnsClient {
  private DnsClient() {}

  /**
   * A query with the given ID and name (case kept as written), RD set, optional EDNS size. The ID
   * wraps to its 16 bits, so a test may number queries with a counter that outgrows them.
   */
  public static Message query(int id, String name, int type, Integer ednsSize) {
    Message m = new Message(id & 0xFFFF);
    m.getHeader().setFlag(Flags.RD);
    m.addRecord(Record.newRecord(TestAuthServer.name(name), type, DClass.IN), Section.QUESTION);
    if (ednsSize != null) {
      m.addRecord(new OPTRecord(ednsSize, 0, 0), Section.ADDITIONAL);
    }
    return m;
  }

  /** Sends {@code packet} over UDP; returns the reply's bytes, or null after {@code timeoutMs}. */
  public static byte[] udp(InetSocketAddress server, byte[] packet, int timeoutMs) throws IOException {
    return udpFrom(new InetSocketAddress(0), server, packet, timeoutMs);
  }

  /** As {@link #udp(InetSocketAddress, byte[], int)}, sent from {@code local} (e.g. 127.0.0.2:0). */
  public static byte[] udpFrom(InetSocketAddress local, InetSocketAddress server, byte[] packet, int timeoutMs)
      throws IOException {
    try (DatagramSocket s = new DatagramSocket(local)) {
      s.setSoTimeout(timeoutMs);
      s.send(new DatagramPacket(packet, packet.length, server));
      byte[] buf = new byte[65535];
      DatagramPacket p = new DatagramPacket(buf, buf.length);
      try {
        s.receive(p);
      } catch (SocketTimeoutException e) {
        return null;
      }
      return Arrays.copyOf(buf, p.getLength());
    }
  }

  public static Message udp(InetSocketAddress server, Message query) throws IOException {
    byte[] r = udp(server, query.toWire(), 5000);
    if (r == null) {
      throw new SocketTimeoutException("no UDP reply from " + server);
    }
    return new Message(r);
  }

  /** Sends {@code packet} over one TCP connection with 2-byte framing; returns the reply. */
  public static byte[] tcp(InetSocketAddress server, byte[] packet, int timeoutMs) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(server, timeoutMs);
      s.setSoTimeout(timeoutMs);
      return exchange(s, packet);
    }
  }

  /** Sends {@code packet} with 2-byte framing on an open stream (TCP or TLS); reads one framed reply. */
  public static byte[] exchange(Socket s, byte[] packet) throws IOException {
    DataOutputStream out = new DataOutputStream(s.getOutputStream());
    out.writeShort(packet.length);
    out.write(packet);
    out.flush();
    DataInputStream in = new DataInputStream(s.getInputStream());
    int len = in.readUnsignedShort();
    return in.readNBytes(len);
  }

  public static Message tcp(InetSocketAddress server, Message query) throws IOException {
    return new Message(tcp(server, query.toWire(), 5000));
  }
}
