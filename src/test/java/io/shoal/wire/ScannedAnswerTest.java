package io.shoal.wire;

import static io.shoal.wire.Messages.name;
import static io.shoal.wire.Messages.u32;
import static io.shoal.wire.Messages.wire;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/** What {@link ScannedAnswer} finds in upstream responses, and which responses it accepts. */
class ScannedAnswerTest {

  static ARecord a(String owner, long ttl, String addr) throws Exception {
    return new ARecord(name(owner), DClass.IN, ttl, InetAddress.getByName(addr));
  }

  static SOARecord soa(String zone, long ttl, long minimum) {
    return new SOARecord(
        name(zone), DClass.IN, ttl, name("ns1." + zone), name("hostmaster." + zone),
        2024010101L, 7200, 900, 1209600, minimum);
  }

  /** NOERROR with two answers, an NS in authority, then OPT (flags 0) and a glue A. */
  static Message positive() throws Exception {
    Message m = Messages.response(0x5151, "www.example.com.", Type.A, Rcode.NOERROR);
    m.addRecord(a("www.example.com.", 300, "192.0.2.1"), Section.ANSWER);
    m.addRecord(a("www.example.com.", 60, "192.0.2.2"), Section.ANSWER);
    m.addRecord(new NSRecord(name("example.com."), DClass.IN, 3600, name("ns1.example.com.")), Section.AUTHORITY);
    m.addRecord(new OPTRecord(1232, 0, 0, 0), Section.ADDITIONAL);
    m.addRecord(a("ns1.example.com.", 120, "192.0.2.53"), Section.ADDITIONAL);
    return m;
  }

  @Test
  void answersOfTheSameShapeShareOneOffsetArray() throws Exception {
    // Same name lengths, same records: the same offsets, kept once however many are cached.
    Message one = Messages.response(1, "a1.example.", Type.A, Rcode.NOERROR);
    one.addRecord(a("a1.example.", 300, "192.0.2.1"), Section.ANSWER);
    Message two = Messages.response(2, "b2.example.", Type.A, Rcode.NOERROR);
    two.addRecord(a("b2.example.", 60, "192.0.2.2"), Section.ANSWER);
    Message longer = Messages.response(3, "ccc3.example.", Type.A, Rcode.NOERROR);
    longer.addRecord(a("ccc3.example.", 60, "192.0.2.3"), Section.ANSWER);

    int[] first = ScannedAnswer.scan(wire(one)).ttlOffsets();
    assertTrue(first == ScannedAnswer.scan(wire(two)).ttlOffsets());
    int[] other = ScannedAnswer.scan(wire(longer)).ttlOffsets();
    assertFalse(first == other);
    assertEquals(first[0] + 2, other[0]);
  }

  @Test
  void minTtlIsTheSmallestRecordTtlAndIgnoresOpt() throws Exception {
    // The OPT's TTL field is 0 here (no flags): counting it would give 0.
    ScannedAnswer s = ScannedAnswer.scan(wire(positive()));

    assertEquals(60, s.minTtl());
    assertEquals(Rcode.NOERROR, s.rcode());
    assertEquals(2, s.answerCount());
    assertFalse(s.truncated());
    assertFalse(s.negative());
  }

  @Test
  void ttlOffsetsPointAtEveryTtlExceptOpts() throws Exception {
    byte[] w = wire(positive());

    ScannedAnswer s = ScannedAnswer.scan(w);

    assertEquals(4, s.ttlOffsets().length);
    long[] ttls = Arrays.stream(s.ttlOffsets()).mapToLong(off -> u32(w, off)).toArray();
    assertArrayEquals(new long[] {300, 60, 3600, 120}, ttls);
    for (int off : s.ttlOffsets()) {
      assertFalse(off >= s.optStart() && off < s.optEnd(), "offset " + off + " lies inside the OPT record");
    }
  }

  @Test
  void optExtentCoversExactlyTheOptRecord() throws Exception {
    byte[] w = wire(positive());

    ScannedAnswer s = ScannedAnswer.scan(w);

    assertEquals(11, s.optEnd() - s.optStart());
    assertEquals(0, w[s.optStart()], "OPT owner is the root");
    assertEquals(Type.OPT, Messages.u16(w, s.optStart() + 1));
    assertEquals(1232, Messages.u16(w, s.optStart() + 3));
    assertTrue(s.optEnd() < w.length, "the glue A follows the OPT");
  }

  @Test
  void noOptMeansNoExtent() throws Exception {
    Message m = Messages.response(1, "example.com.", Type.A, Rcode.NOERROR);
    m.addRecord(a("example.com.", 30, "192.0.2.9"), Section.ANSWER);

    ScannedAnswer s = ScannedAnswer.scan(wire(m));

    assertEquals(-1, s.optStart());
    assertEquals(-1, s.optEnd());
    assertEquals(30, s.minTtl());
  }

  @Test
  void minTtlWithOnlyAnOptIsZero() throws Exception {
    Message m = Messages.response(1, "example.com.", Type.A, Rcode.NOERROR);
    m.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);

    ScannedAnswer s = ScannedAnswer.scan(wire(m));

    assertEquals(0, s.minTtl());
    assertEquals(0, s.ttlOffsets().length);
  }

  @Test
  void ttlWithTheTopBitSetCountsAsZero() throws Exception {
    byte[] w = wire(positive());
    int off = ScannedAnswer.scan(w).ttlOffsets()[0];
    w[off] = (byte) 0x80; // RFC 2181 section 8

    assertEquals(0, ScannedAnswer.scan(w).minTtl());
  }

  @Test
  void nxdomainWithSoaInAuthority() throws Exception {
    Message m = Messages.response(1, "nope.example.com.", Type.A, Rcode.NXDOMAIN);
    m.addRecord(soa("example.com.", 3600, 300), Section.AUTHORITY);

    ScannedAnswer s = ScannedAnswer.scan(wire(m));

    assertTrue(s.negative());
    assertEquals(Rcode.NXDOMAIN, s.rcode());
    assertEquals(3600, s.soaTtl());
    assertEquals(300, s.soaMinimum());
  }

  @Test
  void nodataWithSoaInAuthority() throws Exception {
    Message m = Messages.response(1, "www.example.com.", Type.AAAA, Rcode.NOERROR);
    m.addRecord(soa("example.com.", 120, 86400), Section.AUTHORITY);
    m.addRecord(new OPTRecord(1232, 0, 0, 0), Section.ADDITIONAL);

    ScannedAnswer s = ScannedAnswer.scan(wire(m));

    assertTrue(s.negative());
    assertEquals(0, s.answerCount());
    assertEquals(120, s.soaTtl());
    assertEquals(86400, s.soaMinimum());
  }

  @Test
  void soaInTheAnswerSectionIsNotANegativeAnswersSoa() throws Exception {
    Message m = Messages.response(1, "example.com.", Type.SOA, Rcode.NOERROR);
    m.addRecord(soa("example.com.", 3600, 300), Section.ANSWER);

    ScannedAnswer s = ScannedAnswer.scan(wire(m));

    assertFalse(s.negative());
    assertEquals(-1, s.soaTtl());
    assertEquals(-1, s.soaMinimum());
    assertEquals(3600, s.minTtl());
  }

  @Test
  void negativeWithoutSoaHasNone() throws Exception {
    Message m = Messages.response(1, "nope.example.com.", Type.A, Rcode.NXDOMAIN);

    ScannedAnswer s = ScannedAnswer.scan(wire(m));

    assertTrue(s.negative());
    assertEquals(-1, s.soaTtl());
  }

  @Test
  void servfailIsNotNegative() throws Exception {
    ScannedAnswer s = ScannedAnswer.scan(wire(Messages.response(1, "example.com.", Type.A, Rcode.SERVFAIL)));

    assertFalse(s.negative());
    assertEquals(Rcode.SERVFAIL, s.rcode());
  }

  @Test
  void truncatedFlagIsReported() throws Exception {
    Message m = positive();
    m.getHeader().setFlag(Flags.TC);

    assertTrue(ScannedAnswer.scan(wire(m)).truncated());
  }

  @Test
  void recordDataRunningPastTheEndIsAWireException() throws Exception {
    byte[] w = wire(positive());

    assertThrows(WireException.class, () -> ScannedAnswer.scan(Arrays.copyOf(w, w.length - 1)));
  }

  @Test
  void recordHeaderRunningPastTheEndIsAWireException() throws Exception {
    Message m = Messages.response(1, "example.com.", Type.TXT, Rcode.NOERROR);
    m.addRecord(new TXTRecord(name("example.com."), DClass.IN, 60, "hello"), Section.ANSWER);
    byte[] w = wire(m);
    // Claim a second answer that is not there.
    w[7] = 2;

    assertThrows(WireException.class, () -> ScannedAnswer.scan(w));
  }

  /** A response with no question and one A record owned by {@code owner}, TTL 77. */
  private static byte[] answerOwnedBy(byte[] owner) {
    return Messages.concat(
        Messages.header(1, 0x81, 0x80, 0, 1, 0, 0), owner,
        Messages.bytes(0, 1, 0, 1, 0, 0, 0, 77, 0, 4, 192, 0, 2, 1));
  }

  @Test
  void ownerNameOf255OctetsIsScanned() throws Exception {
    assertEquals(77, ScannedAnswer.scan(answerOwnedBy(Messages.nameOfLabels(63, 63, 63, 61))).minTtl());
  }

  @Test
  void ownerNameOf256OctetsIsAWireException() {
    assertThrows(WireException.class, () -> ScannedAnswer.scan(answerOwnedBy(Messages.nameOfLabels(63, 63, 63, 62))));
  }

  @Test
  void responseShorterThanAHeaderIsAWireException() {
    assertThrows(WireException.class, () -> ScannedAnswer.scan(new byte[11]));
  }

  // --- fromUpstream(): what an upstream answer becomes before it is cached or forwarded ---

  /** positive() with an AAAA for ns1 after the glue A: its owner is a pointer to the A's owner. */
  private static Message optBeforeTwoGlueRecords() throws Exception {
    Message m = positive();
    m.addRecord(new org.xbill.DNS.AAAARecord(name("ns1.example.com."), DClass.IN, 120,
        InetAddress.getByName("2001:db8::53")), Section.ADDITIONAL);
    return m;
  }

  private static void assertNoOpt(byte[] w) throws Exception {
    assertEquals(null, new Message(w).getOPT());
  }

  @Test
  void anOptAtTheEndIsCutOff() throws Exception {
    Message m = Messages.response(0x5151, "www.example.com.", Type.A, Rcode.NOERROR);
    m.addRecord(a("www.example.com.", 300, "192.0.2.1"), Section.ANSWER);
    byte[] plain = wire(m);
    m.addRecord(new OPTRecord(4096, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);

    ScannedAnswer s = ScannedAnswer.fromUpstream(wire(m));

    assertArrayEquals(plain, s.wire());
    assertEquals(-1, s.optStart());
  }

  @Test
  void anOptBeforeOtherRecordsIsRemovedAndEveryPointerStillLeadsToItsName() throws Exception {
    byte[] w = wire(optBeforeTwoGlueRecords());
    ScannedAnswer raw = ScannedAnswer.scan(w);
    assertTrue(raw.optEnd() < w.length);

    ScannedAnswer s = ScannedAnswer.fromUpstream(w);

    assertNoOpt(s.wire());
    assertEquals(-1, s.optStart());
    java.util.List<Record> additional = new Message(s.wire()).getSection(Section.ADDITIONAL);
    assertEquals(2, additional.size());
    for (Record r : additional) {
      assertEquals(name("ns1.example.com."), r.getName());
      assertEquals(120, r.getTTL());
    }
    assertEquals("2001:db8:0:0:0:0:0:53",
        ((org.xbill.DNS.AAAARecord) additional.get(1)).getAddress().getHostAddress());
    long[] ttls = Arrays.stream(s.ttlOffsets()).mapToLong(off -> u32(s.wire(), off)).toArray();
    assertArrayEquals(new long[] {300, 60, 3600, 120, 120}, ttls, "offsets found again in the new layout");
  }

  @Test
  void aTopBitTtlBecomesZero() throws Exception {
    byte[] w = wire(positive());
    int off = ScannedAnswer.scan(w).ttlOffsets()[0];
    Messages.put32(w, off, 0x80000010L);

    ScannedAnswer s = ScannedAnswer.fromUpstream(w);

    assertEquals(0, s.minTtl());
    assertEquals(0, new Message(s.wire()).getSection(Section.ANSWER).get(0).getTTL());
  }

  @Test
  void bytesAfterTheLastRecordAreDropped() throws Exception {
    Message m = Messages.response(1, "www.example.com.", Type.A, Rcode.NOERROR);
    m.addRecord(a("www.example.com.", 30, "192.0.2.9"), Section.ANSWER);
    byte[] w = wire(m);

    assertArrayEquals(w, ScannedAnswer.fromUpstream(Messages.concat(w, Messages.bytes(1, 2, 3))).wire());
  }

  /** One answer record whose owner is {@code owner} (bytes placed right after the question). */
  private static byte[] answerWithOwner(int... owner) {
    return Messages.concat(
        Messages.header(1, 0x81, 0x80, 1, 1, 0, 0), Messages.nameOfLabels(3, 7, 3), Messages.bytes(0, 1, 0, 1),
        Messages.bytes(owner), Messages.bytes(0, 1, 0, 1, 0, 0, 0, 77, 0, 4, 192, 0, 2, 1));
  }

  @Test
  void aPointerBackToTheQuestionIsAccepted() throws Exception {
    assertEquals(77, ScannedAnswer.fromUpstream(answerWithOwner(0xC0, 12)).minTtl());
  }

  @Test
  void aCompressionPointerToItselfIsRejected() {
    // The owner starts at 12 + 17 + 4 = 33 and points at 33.
    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(answerWithOwner(0xC0, 33)));
    assertThrows(WireException.class, () -> ScannedAnswer.scan(answerWithOwner(0xC0, 33)));
  }

  @Test
  void aForwardPointerIsRejected() {
    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(answerWithOwner(0xC0, 40)));
  }

  @Test
  void aPointerIntoTheHeaderIsRejected() {
    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(answerWithOwner(0xC0, 2)));
  }

  @Test
  void aTwoPointerLoopIsRejected() {
    // A label, then a pointer back to the label: "a.a.a.a..." for ever.
    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(answerWithOwner(1, 'a', 0xC0, 33)));
  }

  @Test
  void aPointerInsideRdataThatLoopsIsRejected() throws Exception {
    // A CNAME whose target is a pointer to itself: only a parse of the RDATA finds it.
    byte[] w = Messages.concat(
        Messages.header(1, 0x81, 0x80, 1, 1, 0, 0), Messages.nameOfLabels(3, 7, 3), Messages.bytes(0, 5, 0, 1),
        Messages.bytes(0xC0, 12, 0, 5, 0, 1, 0, 0, 0, 77, 0, 2, 0xC0, 45));

    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(w));
  }

  @Test
  void badRdataForItsTypeIsRejected() {
    // An A record with three bytes of address.
    byte[] w = Messages.concat(
        Messages.header(1, 0x81, 0x80, 1, 1, 0, 0), Messages.nameOfLabels(3, 7, 3), Messages.bytes(0, 1, 0, 1),
        Messages.bytes(0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 77, 0, 3, 192, 0, 2));

    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(w));
  }

  @Test
  void anOptInTheAnswerSectionOrTwoOptsAreRejected() throws Exception {
    Message inAnswer = Messages.response(1, "www.example.com.", Type.A, Rcode.NOERROR);
    inAnswer.addRecord(new OPTRecord(1232, 0, 0, 0), Section.ANSWER);
    Message two = positive();
    two.addRecord(new OPTRecord(1232, 0, 0, 0), Section.ADDITIONAL);

    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(wire(inAnswer)));
    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(wire(two)));
  }

  @Test
  void anExtendedRcodeFromTheUpstreamIsRejected() throws Exception {
    // BADCOOKIE (23): its upper bits live in the OPT, which is not forwarded.
    Message m = Messages.response(1, "www.example.com.", Type.A, Rcode.NOERROR);
    m.addRecord(new OPTRecord(1232, 1, 0, 0), Section.ADDITIONAL);

    assertThrows(WireException.class, () -> ScannedAnswer.fromUpstream(wire(m)));
  }

  @Test
  void withTtlsWithinClampsEveryRecord() throws Exception {
    ScannedAnswer s = ScannedAnswer.fromUpstream(wire(positive())).withTtlsWithin(100, 200);

    long[] ttls = Arrays.stream(s.ttlOffsets()).mapToLong(off -> u32(s.wire(), off)).toArray();
    assertArrayEquals(new long[] {200, 100, 200, 120}, ttls);
    assertEquals(100, s.minTtl());
  }

  // --- answers(): is this the reply to our upstream query? ---

  private static final CacheKey KEY = CacheKey.of("www.example.com.", Type.A, DClass.IN, 0);

  private static boolean answers(Message m, int id) {
    byte[] w = wire(m);
    return ScannedAnswer.answers(w, w.length, id, KEY);
  }

  @Test
  void matchingResponseAnswers() throws Exception {
    assertTrue(answers(positive(), 0x5151));
  }

  @Test
  void sameNameInOtherCaseAnswers() {
    // 0x20 randomisation upstream: the case may come back changed.
    assertTrue(answers(Messages.response(9, "WWW.Example.CoM.", Type.A, Rcode.NOERROR), 9));
  }

  @Test
  void wrongIdDoesNotAnswer() throws Exception {
    assertFalse(answers(positive(), 0x5152));
  }

  @Test
  void queryDoesNotAnswer() {
    Message m = Messages.query(9, "www.example.com.", Type.A);

    assertFalse(answers(m, 9));
  }

  @Test
  void otherNameDoesNotAnswer() {
    assertFalse(answers(Messages.response(9, "www.example.net.", Type.A, Rcode.NOERROR), 9));
    assertFalse(answers(Messages.response(9, "ww.example.com.", Type.A, Rcode.NOERROR), 9));
  }

  @Test
  void otherTypeDoesNotAnswer() {
    assertFalse(answers(Messages.response(9, "www.example.com.", Type.AAAA, Rcode.NOERROR), 9));
  }

  @Test
  void otherClassDoesNotAnswer() {
    Message m = Message.newQuery(Record.newRecord(name("www.example.com."), Type.A, DClass.CH));
    m.getHeader().setID(9);
    m.getHeader().setFlag(Flags.QR);

    assertFalse(answers(m, 9));
  }

  @Test
  void responseWithoutQuestionDoesNotAnswer() {
    Message m = new Message(9);
    m.getHeader().setFlag(Flags.QR);

    assertFalse(answers(m, 9));
  }

  @Test
  void onlyTheReceivedLengthCounts() throws Exception {
    // A datagram read into a larger buffer: bytes past length are stale.
    byte[] w = wire(positive());
    byte[] buffer = Arrays.copyOf(w, 4096);

    assertTrue(ScannedAnswer.answers(buffer, w.length, 0x5151, KEY));
    assertFalse(ScannedAnswer.answers(buffer, 20, 0x5151, KEY));
  }
}
