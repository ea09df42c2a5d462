package io.shoal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.time.Instant;
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
import org.xbill.DNS.DNSKEYRecord;
import org.xbill.DNS.DNSSEC;
import org.xbill.DNS.DSRecord;
import org.xbill.DNS.NSEC3PARAMRecord;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.NSECRecord;
import org.xbill.DNS.RRSIGRecord;
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

  private static RRSIGRecord rrsig(String owner, int covered, Name signer) throws Exception {
    return new RRSIGRecord(n(owner), DClass.IN, 60, covered, DNSSEC.Algorithm.ECDSAP256SHA256, 60,
        Instant.parse("2030-01-01T00:00:00Z"), Instant.parse("2026-01-01T00:00:00Z"), 12345, signer, new byte[64]);
  }

  /**
   * The records of a signed answer to a DO query, each written without compression (as some
   * authorities send them): header, question, then {@code answer} and {@code authority} records.
   */
  private static byte[] uncompressed(Record question, Record[] answer, Record[] authority) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] header = new byte[Wire.HEADER];
    Wire.put16(header, 0, 4711);
    header[2] = (byte) 0x84;
    Wire.put16(header, 4, 1);
    Wire.put16(header, 6, answer.length);
    Wire.put16(header, 8, authority.length);
    out.writeBytes(header);
    out.writeBytes(question.toWire(Section.QUESTION));
    for (Record r : answer) {
      out.writeBytes(r.toWire(Section.ANSWER));
    }
    for (Record r : authority) {
      out.writeBytes(r.toWire(Section.AUTHORITY));
    }
    return out.toByteArray();
  }

  private static Record[] signedRecords(Name signer) throws Exception {
    int[] types = {Type.A, Type.RRSIG, Type.NSEC, Type.DNSKEY};
    return new Record[] {
      new ARecord(n("a.signed.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.1")),
      rrsig("a.signed.test.", Type.A, signer),
      new NSECRecord(n("a.signed.test."), DClass.IN, 60, n("b.signed.test."), types),
      rrsig("a.signed.test.", Type.NSEC, signer),
      new DSRecord(n("child.signed.test."), DClass.IN, 60, 12345, DNSSEC.Algorithm.ECDSAP256SHA256,
          DNSSEC.Digest.SHA256, new byte[32]),
      new DNSKEYRecord(n("signed.test."), DClass.IN, 60, 257, 3, DNSSEC.Algorithm.ECDSAP256SHA256, new byte[64]),
      new NSEC3Record(n("abcd.signed.test."), DClass.IN, 60, 1, 0, 0, new byte[] {1, 2}, new byte[20], types),
      new NSEC3PARAMRecord(n("signed.test."), DClass.IN, 0, 1, 0, 0, new byte[] {1, 2}),
    };
  }

  @Test
  void aSignedAnswerIsKeptByteForByteWithoutBeingParsedAndWrittenAgain() throws Exception {
    Record question = Record.newRecord(n("a.signed.test."), Type.A, DClass.IN);
    byte[] wire = uncompressed(question, signedRecords(n("signed.test.")), new Record[0]);
    // The full check would compress the owner names: the answer would come out shorter.
    assertTrue(new Message(wire).toWire().length < wire.length, "dnsjava writes it again compressed");
    assertTrue(PointerCheck.pointsOnlyToNames(wire));
    assertArrayEquals(wire, ScannedAnswer.fromUpstream(wire.clone()).wire(), "kept as the upstream sent it");
  }

  @Test
  void aSignedAnswerAsDnsjavaWritesItPassesTheFastPath() throws Exception {
    Message m = new Message(99);
    m.getHeader().setFlag(Flags.QR);
    m.addRecord(Record.newRecord(n("a.signed.test."), Type.A, DClass.IN), Section.QUESTION);
    for (Record r : signedRecords(n("signed.test."))) {
      m.addRecord(r, Section.ANSWER);
    }
    byte[] wire = m.toWire();
    assertTrue(PointerCheck.pointsOnlyToNames(wire), "the validator's own answers are not parsed twice");
    assertArrayEquals(wire, ScannedAnswer.fromUpstream(wire.clone()).wire());
  }

  @Test
  void aCompressedSignerNameGoesToTheFullCheckWhichWritesItOut() throws Exception {
    Record question = Record.newRecord(n("a.signed.test."), Type.A, DClass.IN);
    Record[] answer = {rrsig("a.signed.test.", Type.A, n("signed.test."))};
    byte[] wire = uncompressed(question, answer, new Record[0]);
    // The signer's name is the record's last name, just before the 64-byte signature: make it a
    // pointer to "signed.test." in the question (offset 12 + 2 = 14).
    int signer = wire.length - 64 - "signed.test.".length() - 1;
    byte[] compressed = java.util.Arrays.copyOf(wire, signer + 2 + 64);
    compressed[signer] = (byte) 0xC0;
    compressed[signer + 1] = 14;
    System.arraycopy(wire, wire.length - 64, compressed, signer + 2, 64);
    int rdlengthAt = signer - 18 - 2;
    Wire.put16(compressed, rdlengthAt, Wire.u16(wire, rdlengthAt) - (wire.length - compressed.length));
    assertEquals(n("signed.test."), ((RRSIGRecord) new Message(compressed).getSection(Section.ANSWER).get(0)).getSigner());
    assertFalse(PointerCheck.pointsOnlyToNames(compressed));
    byte[] kept = ScannedAnswer.fromUpstream(compressed.clone()).wire();
    RRSIGRecord written = (RRSIGRecord) new Message(kept).getSection(Section.ANSWER).get(0);
    assertEquals(n("signed.test."), written.getSigner());
    assertTrue(PointerCheck.pointsOnlyToNames(kept), "the signer's name written out, as RFC 4034 says");
  }

  @Test
  void aTypeBitmapOutOfOrderIsLeftToTheFullCheck() throws Exception {
    Record question = Record.newRecord(n("a.signed.test."), Type.NSEC, DClass.IN);
    Record[] answer = {new NSECRecord(n("a.signed.test."), DClass.IN, 60, n("b.signed.test."),
        new int[] {Type.A, Type.CAA})};
    byte[] wire = uncompressed(question, answer, new Record[0]);
    assertTrue(PointerCheck.pointsOnlyToNames(wire));
    // Windows 0 (A) then 1 (CAA, type 257): swap the window numbers so they go down.
    byte[] bad = wire.clone();
    int first = indexOfWindows(bad);
    assertEquals(0, bad[first]);
    bad[first] = 1;
    bad[first + 2 + (bad[first + 1] & 0xFF)] = 0;
    assertFalse(PointerCheck.pointsOnlyToNames(bad));
    try {
      assertFalse(java.util.Arrays.equals(bad, ScannedAnswer.fromUpstream(bad.clone()).wire()), "written again, not kept");
    } catch (WireException refused) {
      // also acceptable: a dnsjava that refuses the order
    }
  }

  /**
   * An answer whose question is {@code labels} labels of 62 octets then the root, and whose one A
   * record's owner is {@code prefix} (raw wire bytes, ending in a pointer or the root).
   */
  private static byte[] withOwner(int labels, byte[] prefix) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] header = new byte[Wire.HEADER];
    Wire.put16(header, 0, 4712);
    header[2] = (byte) 0x84;
    Wire.put16(header, 4, 1);
    Wire.put16(header, 6, 1);
    out.writeBytes(header);
    for (int i = 0; i < labels; i++) {
      out.write(62);
      out.writeBytes("a".repeat(62).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }
    out.writeBytes(new byte[] {0, 0, 1, 0, 1});
    out.writeBytes(prefix);
    out.writeBytes(new byte[] {0, 1, 0, 1, 0, 0, 0, 60, 0, 4, (byte) 192, 0, 2, 1});
    return out.toByteArray();
  }

  @Test
  void aPointerMustLeadToALabelStartAndKeepTheNameWithin255Octets() {
    // Question: 4 labels of 62 octets, 253 octets in all. A pointer to the start of its second
    // label (offset 12 + 63) spells a name of 190 octets; one more 1-octet label before it, 192.
    byte[] second = {1, 'x', (byte) 0xC0, 12 + 63};
    assertTrue(PointerCheck.pointsOnlyToNames(withOwner(4, second)));
    // The same label before the whole question: 2 + 253 = 255 octets, the most a name may have.
    assertTrue(PointerCheck.pointsOnlyToNames(withOwner(4, new byte[] {1, 'x', (byte) 0xC0, 12})));
    // Two octets more: 257, too long.
    assertFalse(PointerCheck.pointsOnlyToNames(withOwner(4, new byte[] {3, 'x', 'y', 'z', (byte) 0xC0, 12})));
    // Into the middle of the first label: no label starts there.
    assertFalse(PointerCheck.pointsOnlyToNames(withOwner(4, new byte[] {(byte) 0xC0, 12 + 5})));
    // A name of 128 one-octet labels, never compressed: 257 octets.
    byte[] many = new byte[128 * 2 + 1];
    for (int i = 0; i < 128; i++) {
      many[2 * i] = 1;
      many[2 * i + 1] = 'q';
    }
    assertFalse(PointerCheck.pointsOnlyToNames(withOwner(1, many)));
  }

  /** Where the NSEC's type bitmaps start in a one-record answer written by {@link #uncompressed}. */
  private static int indexOfWindows(byte[] wire) throws Exception {
    int rdata = ScannedAnswer.scan(wire).ttlOffsets()[0] + 4 + 2;
    return rdata + n("b.signed.test.").length();
  }
}
