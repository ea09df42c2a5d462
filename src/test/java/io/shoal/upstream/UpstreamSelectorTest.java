package io.shoal.upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.DnsQuery;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

class UpstreamSelectorTest {
  /**
   * Query IDs are what an off-path attacker must guess: every one in 16 bits, spread over the
   * whole range, also across the refills of the buffer they are drawn from (2,048 IDs each).
   * 400,000 uniform draws leave about 0.2% of the 65,536 values unseen (a standard deviation
   * of about 12 values) and no value drawn 40 times (6.1 on average); a generator stuck on part
   * of the range, or repeating a buffer, fails both.
   */
  @Test
  void queryIdsCoverTheWholeSixteenBitRange() throws Exception {
    try (UpstreamSelector selector = new UpstreamSelector(4, new ServerMetrics())) {
      int[] seen = new int[65536];
      for (int i = 0; i < 400_000; i++) {
        int id = selector.newQueryId();
        assertTrue(id >= 0 && id <= 0xffff, "ID out of 16 bits: " + id);
        seen[id]++;
      }
      int unseen = 0;
      int most = 0;
      for (int n : seen) {
        unseen += n == 0 ? 1 : 0;
        most = Math.max(most, n);
      }
      assertTrue(unseen < 655, unseen + " of 65,536 IDs never drawn in 400,000");
      assertTrue(most < 40, "one ID drawn " + most + " times in 400,000");
    }
  }

  /**
   * An owner lookup sent from a listening socket ({@link UpstreamSelector#fromListener}) leaves
   * from that socket's port with its name's letter case randomised, and is completed only by a
   * reply from the address it went to, with its ID and the question exactly as sent; a forged
   * reply (another sender, the question in lower case, another ID) is not taken, and is left to
   * the listener as any stray response.
   */
  @Test
  void aLookupFromAListenerTakesOnlyItsOwnersReplyWithTheExactQuestion() throws Exception {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    try (UpstreamSelector selector = new UpstreamSelector(4, new ServerMetrics());
        DatagramChannel listener = DatagramChannel.open(StandardProtocolFamily.INET).bind(new InetSocketAddress(loopback, 0));
        DatagramChannel owner = DatagramChannel.open(StandardProtocolFamily.INET).bind(new InetSocketAddress(loopback, 0));
        DatagramChannel forger = DatagramChannel.open(StandardProtocolFamily.INET).bind(new InetSocketAddress(loopback, 0))) {
      InetSocketAddress ownerAt = (InetSocketAddress) owner.getLocalAddress();
      DnsQuery query = DnsQuery.parse(Message.newQuery(Record.newRecord(
          Name.fromString("someplace.with.many.letters.example.test."), Type.A, DClass.IN)).toWire());
      DatagramSender via = (packet, to) -> {
        try {
          return listener.send(ByteBuffer.wrap(packet), to) > 0;
        } catch (IOException e) {
          return false;
        }
      };
      CompletableFuture<byte[]> reply = selector.fromListener(
          via, ownerAt, query, query::peerQuery, System.nanoTime() + 5_000_000_000L);
      assertNotNull(reply, "sent from the listener");

      ByteBuffer in = ByteBuffer.allocate(512);
      InetSocketAddress from = (InetSocketAddress) owner.receive(in);
      assertEquals(listener.getLocalAddress(), from, "the lookup left from the listening socket");
      Message asked = new Message(Arrays.copyOf(in.array(), in.position()));
      String sent = asked.getQuestion().getName().toString();
      assertEquals("someplace.with.many.letters.example.test.", sent.toLowerCase(Locale.ROOT));
      assertNotEquals(sent.toLowerCase(Locale.ROOT), sent, "letter case randomised (40 letters)");

      Message answer = new Message(asked.getHeader().getID());
      answer.getHeader().setFlag(Flags.QR);
      answer.addRecord(asked.getQuestion(), Section.QUESTION);
      answer.addRecord(new ARecord(asked.getQuestion().getName(), DClass.IN, 60, InetAddress.getByName("192.0.2.7")),
          Section.ANSWER);
      byte[] good = answer.toWire();
      InetSocketAddress forgerAt = (InetSocketAddress) forger.getLocalAddress();
      assertFalse(selector.listenerReply(good, forgerAt), "another sender");

      Message lower = new Message(asked.getHeader().getID());
      lower.getHeader().setFlag(Flags.QR);
      lower.addRecord(Record.newRecord(Name.fromString(sent.toLowerCase(Locale.ROOT)), Type.A, DClass.IN),
          Section.QUESTION);
      assertFalse(selector.listenerReply(lower.toWire(), ownerAt), "the question in another letter case");

      byte[] otherId = good.clone();
      otherId[1] ^= 1;
      assertFalse(selector.listenerReply(otherId, ownerAt), "another ID");
      assertFalse(reply.isDone(), "no forged reply completed the lookup");

      assertTrue(selector.listenerReply(good, ownerAt), "the owner's reply");
      assertArrayEquals(good, reply.get(5, TimeUnit.SECONDS));
      assertFalse(selector.listenerReply(good, ownerAt), "a duplicate of it is not taken twice");
    }
  }

  /** A lookup from a listener that gets no reply fails at its deadline, and a late reply is then not taken. */
  @Test
  void aLookupFromAListenerWithNoReplyFailsAtItsDeadline() throws Exception {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    try (UpstreamSelector selector = new UpstreamSelector(4, new ServerMetrics());
        DatagramChannel owner = DatagramChannel.open(StandardProtocolFamily.INET).bind(new InetSocketAddress(loopback, 0))) {
      InetSocketAddress ownerAt = (InetSocketAddress) owner.getLocalAddress();
      DnsQuery query = DnsQuery.parse(Message.newQuery(Record.newRecord(
          Name.fromString("quiet.example.test."), Type.A, DClass.IN)).toWire());
      byte[][] sent = new byte[1][];
      CompletableFuture<byte[]> reply = selector.fromListener((packet, to) -> {
        sent[0] = packet;
        return true;
      }, ownerAt, query, query::peerQuery, System.nanoTime() + 200_000_000L);
      ExecutionException failed = assertThrows(ExecutionException.class, () -> reply.get(10, TimeUnit.SECONDS));
      assertTrue(failed.getCause() instanceof UpstreamException, failed.toString());
      assertEquals("timeout", ((UpstreamException) failed.getCause()).outcome());

      byte[] late = sent[0].clone();
      late[2] |= (byte) 0x80;
      assertFalse(selector.listenerReply(late, ownerAt), "a reply after the deadline");
    }
  }

  /** A listener that cannot send (it reaches no such address) leaves the lookup to the caller. */
  @Test
  void aListenerThatCannotSendLeavesTheLookupToTheCaller() throws Exception {
    try (UpstreamSelector selector = new UpstreamSelector(4, new ServerMetrics())) {
      DnsQuery query = DnsQuery.parse(Message.newQuery(Record.newRecord(
          Name.fromString("elsewhere.example.test."), Type.A, DClass.IN)).toWire());
      assertNull(selector.fromListener((packet, to) -> false, new InetSocketAddress("127.0.0.1", 53), query,
          query::peerQuery, System.nanoTime() + 1_000_000_000L));
    }
  }
}
