package io.shoal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.MXRecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/** The fast path of upstream validation: answers it keeps as they are, and those it leaves to the full check. */
class PointerCheckTest {

  private static Name n(String s) throws Exception {
    return Name.fromString(s);
  }

  /** A CNAME chain, an A, an MX, a TXT and an SOA, compressed as upstreams compress them. */
  private static byte[] typicalAnswer() throws Exception {
    Message m = new Message(4242);
    m.getHeader().setFlag(Flags.QR);
    m.addRecord(Record.newRecord(n("www.example.test."), Type.A, DClass.IN), Section.QUESTION);
    m.addRecord(new CNAMERecord(n("www.example.test."), DClass.IN, 3600, n("web.example.test.")), Section.ANSWER);
    m.addRecord(new ARecord(n("web.example.test."), DClass.IN, 600, InetAddress.getByName("192.0.2.1")),
        Section.ANSWER);
    m.addRecord(new MXRecord(n("example.test."), DClass.IN, 300, 10, n("mail.example.test.")), Section.AUTHORITY);
    m.addRecord(new TXTRecord(n("example.test."), DClass.IN, 300, "v=spf1 -all"), Section.AUTHORITY);
    m.addRecord(new SOARecord(n("example.test."), DClass.IN, 300, n("ns.example.test."),
        n("hostmaster.example.test."), 1, 3600, 900, 604800, 60), Section.AUTHORITY);
    return m.toWire();
  }

  @Test
  void aTypicalCompressedAnswerIsKeptByteForByte() throws Exception {
    byte[] wire = typicalAnswer();
    assertTrue(PointerCheck.pointsOnlyToNames(wire));
    assertArrayEquals(wire, ScannedAnswer.fromUpstream(wire.clone()).wire(), "no rewrite for a clean answer");
  }

  @Test
  void aPointerIntoATtlGoesToTheFullCheckWhichRewritesIt() throws Exception {
    byte[] wire = typicalAnswer();
    ScannedAnswer scan = ScannedAnswer.scan(wire);
    int ttl = scan.ttlOffsets()[0];
    // The CNAME's data ends with a pointer to "example.test." in the question: aim it at a TTL.
    int cnameData = ttl + 4 + 2;
    int rdlen = Wire.u16(wire, ttl + 4);
    int pointer = cnameData + rdlen - 2;
    assertEquals(0xC0, wire[pointer] & 0xC0, "the CNAME target ends with a pointer");
    wire[pointer + 1] = (byte) ttl;
    assertFalse(PointerCheck.pointsOnlyToNames(wire));
    try {
      byte[] rewritten = ScannedAnswer.fromUpstream(wire.clone()).wire();
      assertFalse(java.util.Arrays.equals(wire, rewritten), "rewritten, not kept");
      new Message(rewritten);
    } catch (WireException rejected) {
      // also acceptable: the name the pointer spells is not a valid name
    }
  }

  @Test
  void aPointerToItsOwnNameOrForwardIsRefused() throws Exception {
    byte[] wire = typicalAnswer();
    int owner = ScannedAnswer.scan(wire).ttlOffsets()[0] - 6;
    // The first answer's owner is a pointer to the question; make it point at itself.
    assertEquals(0xC0, wire[owner] & 0xC0);
    wire[owner + 1] = (byte) owner;
    assertFalse(PointerCheck.pointsOnlyToNames(wire));
    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(wire));
  }

  @Test
  void anARecordOfTheWrongSizeIsLeftToTheFullCheck() throws Exception {
    Message m = new Message(7);
    m.getHeader().setFlag(Flags.QR);
    m.addRecord(Record.newRecord(n("a.example.test."), Type.A, DClass.IN), Section.QUESTION);
    m.addRecord(new ARecord(n("a.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.1")), Section.ANSWER);
    byte[] wire = m.toWire();
    byte[] shortA = java.util.Arrays.copyOf(wire, wire.length - 1);
    Wire.put16(shortA, shortA.length - 3 - 2, 3);
    assertFalse(PointerCheck.pointsOnlyToNames(shortA));
    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(shortA));
  }
}
