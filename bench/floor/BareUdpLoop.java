import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;

/**
 * The JVM's floor for a warm hit: the least a Java program can do to answer a DNS query over UDP.
 * One blocking DatagramChannel on one thread, one direct buffer, no cache, no parse: each query
 * comes back as its own answer: QR and RA set, anything after the question (an OPT record) cut,
 * one A record pointing at the question's name appended. It makes the same two system calls per query as shoal and Unbound, through the same
 * JDK code as shoal, so beside them in one run it shows what a JVM cannot go below on the host.
 * Not a resolver: it answers every question, whatever its name or type, with 192.0.2.1.
 *
 *   java BareUdpLoop.java PORT
 */
public final class BareUdpLoop {
  public static void main(String[] args) throws Exception {
    DatagramChannel channel = DatagramChannel.open(StandardProtocolFamily.INET);
    channel.bind(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])));
    ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
    byte[] answer = {(byte) 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4, (byte) 192, 0, 2, 1};
    while (true) {
      buffer.clear();
      SocketAddress from = channel.receive(buffer);
      int length = buffer.position();
      int end = 12; // the question's name: labels up to the root, no compression in a question
      while (end < length && buffer.get(end) != 0) end += (buffer.get(end) & 0xff) + 1;
      end += 5; // the root label, type and class
      if (end > length || length > 512) continue;
      buffer.put(2, (byte) ((buffer.get(2) | 0x80) & 0xf9)); // QR; AA and TC clear
      buffer.put(3, (byte) 0x80); // RA, NOERROR
      buffer.put(6, (byte) 0).put(7, (byte) 1).put(10, (byte) 0).put(11, (byte) 0); // 1 answer, no additional
      buffer.position(end);
      buffer.put(answer).flip();
      channel.send(buffer, from);
    }
  }
}
