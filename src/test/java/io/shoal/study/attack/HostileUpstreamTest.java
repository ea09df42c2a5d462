package io.shoal.study.attack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The robustness scenario's hostile upstream answers as the summary says, in turn: garbage, a
 * self-pointing name that dnsjava refuses to parse, a valid answer with the wrong ID, and
 * nothing; and the study's hand-built queries are what dnsjava reads.
 */
class HostileUpstreamTest {

  @Test
  void itTakesItsMisbehavioursInTurn() throws IOException {
    try (HostileUpstream hostile = HostileUpstream.start(1);
        DatagramSocket client = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
      client.setSoTimeout(1000);
      byte[] garbage = ask(client, hostile.address(), 0x1234);
      assertEquals(0x12, garbage[0] & 0xff);
      assertEquals(0x34, garbage[1] & 0xff);

      byte[] loop = ask(client, hostile.address(), 0x2345);
      assertThrows(IOException.class, () -> new Message(loop), "a name that points at itself");

      Message wrongId = new Message(ask(client, hostile.address(), 0x3456));
      assertNotEquals(0x3456, wrongId.getHeader().getID());
      Record a = wrongId.getSection(Section.ANSWER).get(0);
      assertEquals(Name.fromString("h1.hostile.test."), a.getName());
      assertEquals(Type.A, a.getType());

      byte[] q = AttackPackets.query(0x4567, "h1.hostile.test.", Type.A);
      client.send(new DatagramPacket(q, q.length, hostile.address()));
      assertThrows(SocketTimeoutException.class, () -> client.receive(new DatagramPacket(new byte[512], 512)));
      assertEquals("garbage 1, self_pointer 1, wrong_id 1, silence 1", HostileUpstream.describe(hostile.counts()));
    }
  }

  @Test
  void handBuiltQueriesParseAsTheNamesAsked() throws IOException {
    Message m = new Message(AttackPackets.query(0xbeef, "n7.bench.test.", Type.A));
    assertEquals(0xbeef, m.getHeader().getID());
    assertEquals(Name.fromString("n7.bench.test."), m.getQuestion().getName());
    AttackPackets packets = new AttackPackets(3);
    Name first = new Message(packets.uniqueQuery("bench.test.")).getQuestion().getName();
    Name second = new Message(packets.uniqueQuery("bench.test.")).getQuestion().getName();
    assertNotEquals(first, second);
    assertTrue(first.subdomain(Name.fromString("bench.test.")), first.toString());
    byte[] framed = AttackPackets.tcpFramed(AttackPackets.query(1, "a.b.", Type.A));
    assertEquals(framed.length - 2, (framed[0] & 0xff) << 8 | (framed[1] & 0xff));
  }

  @Test
  void malformedPacketsAreNotQueriesDnsjavaAccepts() {
    AttackPackets packets = new AttackPackets(5);
    int refused = 0;
    for (int i = 0; i < 6; i++) { // the six kinds that are malformed by construction (the seventh flips bytes)
      byte[] p = packets.malformed("bench.test.");
      try {
        Message m = new Message(p);
        // a parse that succeeds must at least not be a plain query: QR set, or counts beyond the packet
        assertTrue(m.getHeader().getFlag(org.xbill.DNS.Flags.QR), Arrays.toString(p));
      } catch (IOException e) {
        refused++;
      }
    }
    assertTrue(refused >= 4, refused + " of 6 refused");
    packets.malformed("bench.test."); // the seventh kind, then the first again
    assertTrue(packets.malformed("bench.test.").length < 600);
  }

  private static byte[] ask(DatagramSocket client, InetSocketAddress server, int id) throws IOException {
    byte[] q = AttackPackets.query(id, "h1.hostile.test.", Type.A);
    client.send(new DatagramPacket(q, q.length, server));
    DatagramPacket reply = new DatagramPacket(new byte[4096], 4096);
    client.receive(reply);
    return Arrays.copyOf(reply.getData(), reply.getLength());
  }
}
