package io.shoal.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The batch memory against the kernel: what sendmmsg sends from it arrives where and as it was
 * put, and recvmmsg's messages read back with their senders, over IPv4, IPv6 and IPv4-mapped.
 */
class DatagramBatchTest {
  private static final LinuxDatagrams OS = LinuxDatagrams.get();

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static byte[] receive(DatagramChannel ch, InetSocketAddress[] from) throws Exception {
    ByteBuffer b = ByteBuffer.allocate(4096);
    from[0] = (InetSocketAddress) ch.receive(b);
    b.flip();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  @Test
  void sendsToAddressesItEncodesItselfOverIpv4AndIpv6() throws Exception {
    assertNotNull(OS, "batch calls: " + LinuxDatagrams.unavailable());
    try (DatagramChannel v4 = DatagramChannel.open(StandardProtocolFamily.INET);
        DatagramChannel v6 = DatagramChannel.open(StandardProtocolFamily.INET6);
        DatagramChannel peer4 = DatagramChannel.open(StandardProtocolFamily.INET);
        DatagramChannel peer6 = DatagramChannel.open(StandardProtocolFamily.INET6)) {
      v4.bind(new InetSocketAddress("127.0.0.1", 0));
      v6.bind(new InetSocketAddress("::", 0));
      peer4.bind(new InetSocketAddress("127.0.0.1", 0));
      peer6.bind(new InetSocketAddress("::1", 0));
      InetSocketAddress to4 = (InetSocketAddress) peer4.getLocalAddress();
      InetSocketAddress to6 = (InetSocketAddress) peer6.getLocalAddress();

      DatagramBatch out4 = new DatagramBatch(OS, 4, 64);
      assertTrue(out4.add(text("one"), 3, to4, null, 0, false));
      assertFalse(out4.add(text("two"), 3, to6, null, 0, false), "an IPv4 socket cannot send to IPv6");
      assertTrue(out4.add(text("three"), 5, to4, null, 0, false));
      assertEquals(2, OS.send(OS.fd(v4), out4.address(0), out4.size()));

      DatagramBatch out6 = new DatagramBatch(OS, 4, 64);
      assertTrue(out6.add(text("six"), 3, to6, null, 0, true));
      assertTrue(out6.add(text("mapped"), 6, to4, null, 0, true), "an IPv6 wildcard reaches IPv4 as mapped");
      assertEquals(2, OS.send(OS.fd(v6), out6.address(0), out6.size()));

      InetSocketAddress[] from = new InetSocketAddress[1];
      assertArrayEquals(text("one"), receive(peer4, from));
      assertEquals(v4.getLocalAddress(), from[0]);
      assertArrayEquals(text("three"), receive(peer4, from));
      assertArrayEquals(text("mapped"), receive(peer4, from));
      assertEquals(((InetSocketAddress) v6.getLocalAddress()).getPort(), from[0].getPort());
      assertArrayEquals(text("six"), receive(peer6, from));
      assertEquals(((InetSocketAddress) v6.getLocalAddress()).getPort(), from[0].getPort());
    }
  }

  @Test
  void readsABatchWithItsSendersAndRepliesToThemAsTheyCame() throws Exception {
    assertNotNull(OS, "batch calls: " + LinuxDatagrams.unavailable());
    try (DatagramChannel server = DatagramChannel.open(StandardProtocolFamily.INET6);
        DatagramChannel client4 = DatagramChannel.open(StandardProtocolFamily.INET);
        DatagramChannel client6 = DatagramChannel.open(StandardProtocolFamily.INET6)) {
      server.bind(new InetSocketAddress("::", 0));
      int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
      client4.bind(new InetSocketAddress("127.0.0.1", 0));
      client6.bind(new InetSocketAddress("::1", 0));
      client4.send(ByteBuffer.wrap(text("from4")), new InetSocketAddress("127.0.0.1", port));
      client6.send(ByteBuffer.wrap(text("from6")), new InetSocketAddress("::1", port));

      DatagramBatch in = new DatagramBatch(OS, 8, 2048);
      int fd = OS.fd(server);
      int got = 0;
      DatagramBatch out = new DatagramBatch(OS, 8, 2048);
      // both datagrams are queued before the first call; a second call takes one the first missed
      for (int call = 0; call < 2 && got < 2; call++) {
        int n = OS.receive(fd, in.address(0), in.capacity());
        assertTrue(n >= 1 && n <= 2 - got, "messages read: " + n);
        for (int i = 0; i < n; i++) {
          byte[] data = new byte[in.length(i)];
          in.copy(i, data, data.length);
          InetSocketAddress sender = in.sender(i);
          String said = new String(data, StandardCharsets.US_ASCII);
          if (said.equals("from4")) {
            assertEquals(client4.getLocalAddress(), sender, "an IPv4 sender on an IPv6 socket reads as IPv4");
          } else {
            assertEquals("from6", said);
            assertEquals(((InetSocketAddress) client6.getLocalAddress()).getPort(), sender.getPort());
            assertEquals(InetAddress.getByName("::1"), sender.getAddress());
          }
          assertFalse(in.truncated(i));
          byte[] reply = ("re:" + said).getBytes(StandardCharsets.US_ASCII);
          assertTrue(out.add(reply, reply.length, sender, in, i, true));
          got++;
        }
        assertEquals(out.size(), OS.send(fd, out.address(0), out.size()));
        in.readyToReceive(n);
        out.clear();
      }
      assertEquals(2, got);
      InetSocketAddress[] from = new InetSocketAddress[1];
      assertArrayEquals(text("re:from4"), receive(client4, from));
      assertArrayEquals(text("re:from6"), receive(client6, from));
    }
  }

  @Test
  void aDatagramLongerThanItsSlotIsMarkedCut() throws Exception {
    assertNotNull(OS, "batch calls: " + LinuxDatagrams.unavailable());
    try (DatagramChannel server = DatagramChannel.open(StandardProtocolFamily.INET);
        DatagramChannel client = DatagramChannel.open(StandardProtocolFamily.INET)) {
      server.bind(new InetSocketAddress("127.0.0.1", 0));
      client.send(ByteBuffer.wrap(new byte[100]), server.getLocalAddress());
      DatagramBatch in = new DatagramBatch(OS, 2, 64);
      assertEquals(1, OS.receive(OS.fd(server), in.address(0), in.capacity()));
      assertTrue(in.truncated(0));
      assertEquals(64, in.length(0));
    }
  }
}
