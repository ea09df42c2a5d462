package io.shoal.wire;

import static io.shoal.wire.Messages.bytes;
import static io.shoal.wire.Messages.concat;
import static io.shoal.wire.Messages.header;
import static io.shoal.wire.Messages.nameOfLabels;
import static io.shoal.wire.Messages.parse;
import static io.shoal.wire.Messages.wire;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** Key extraction and validation of client queries by {@link DnsQuery#parse}. */
class DnsQueryTest {

  private static BadQuery rejected(byte[] packet) {
    return assertThrows(BadQuery.class, () -> DnsQuery.parse(packet));
  }

  /** Asserts a FORMERR reply: header only, the query's ID, QR set. */
  private static void assertFormerr(byte[] packet) {
    BadQuery bad = rejected(packet);
    assertFalse(bad.dropped(), "a readable header deserves an answer");
    assertEquals("formerr", bad.reason());
    assertEquals(OptionalInt.of(Rcode.FORMERR), bad.rcode());
    Message reply = parse(bad.reply());
    assertEquals(Messages.u16(packet, 0), reply.getHeader().getID());
    assertTrue(reply.getHeader().getFlag(Flags.QR));
    assertEquals(Rcode.FORMERR, reply.getRcode());
  }

  // --- owner lookups between cluster nodes ---

  @Test
  void aPeerQueryIsMarkedAndKeepsTheQuestionAndKey() throws Exception {
    DnsQuery client = DnsQuery.parse(wire(Messages.query(7, "WwW.Example.COM.", Type.AAAA)));
    assertFalse(client.fromPeer());

    byte[] peer = client.peerQuery(0x4242);
    DnsQuery owner = DnsQuery.parse(peer);

    assertTrue(owner.fromPeer());
    assertTrue(owner.recursionDesired());
    assertEquals(0x4242, owner.id());
    assertEquals(client.key(), owner.key());
    Message m = parse(peer);
    OPTRecord opt = m.getOPT();
    assertNotNull(opt);
    assertEquals(DnsQuery.PEER_OPTION, opt.getOptions().get(0).getCode());
    // the plain upstream query carries no mark
    assertFalse(DnsQuery.parse(client.upstreamQuery(9)).fromPeer());
  }

  // --- the cache key ---

  @Test
  void keyLowerCasesTheNameWhilePacketKeepsTheClientsCase() throws Exception {
    byte[] packet = wire(Messages.query(0x1234, "WwW.ExAmPle.COM.", Type.A));

    DnsQuery q = DnsQuery.parse(packet);

    assertEquals("www.example.com.", q.key().name());
    assertEquals(CacheKey.of("www.example.com.", Type.A, DClass.IN, 0), q.key());
    assertArrayEquals(packet, q.packet());
    byte[] clientName = Arrays.copyOfRange(q.packet(), 12, q.nameEnd());
    assertArrayEquals(
        bytes(3, 'W', 'w', 'W', 7, 'E', 'x', 'A', 'm', 'P', 'l', 'e', 3, 'C', 'O', 'M', 0), clientName);
    assertEquals(0x1234, q.id());
  }

  @Test
  void namesDifferingOnlyInCaseShareAKey() throws Exception {
    DnsQuery upper = DnsQuery.parse(wire(Messages.query(1, "EXAMPLE.ORG.", Type.A)));
    DnsQuery lower = DnsQuery.parse(wire(Messages.query(2, "example.org.", Type.A)));

    assertEquals(lower.key(), upper.key());
    assertEquals(lower.key().hashCode(), upper.key().hashCode());
  }

  @Test
  void aKeyFromTheWireHashesAsTheSameKeyReadBackFromItsBytes() throws Exception {
    CacheKey parsed = DnsQuery.parse(wire(Messages.query(3, "Mixed.Example.ORG.", Type.AAAA))).key();
    CacheKey back = CacheKey.ofBytes(parsed.bytes());

    assertEquals(back, parsed);
    assertEquals(back.hashCode(), parsed.hashCode());
  }

  @Test
  void aKeyMatchesItsQuestionInAnyCaseAndNoOtherNameOrType() throws Exception {
    CacheKey key = DnsQuery.parse(wire(Messages.query(4, "www.example.org.", Type.A))).key();

    assertTrue(key.matchesQuestion(wire(Messages.query(5, "www.example.org.", Type.A))));
    assertTrue(key.matchesQuestion(wire(Messages.query(6, "WWW.Example.oRG.", Type.A))));
    assertFalse(key.matchesQuestion(wire(Messages.query(7, "www.example.net.", Type.A))));
    assertFalse(key.matchesQuestion(wire(Messages.query(8, "WWW.EXAMPLE.NET.", Type.A))));
    assertFalse(key.matchesQuestion(wire(Messages.query(9, "www.example.org.", Type.AAAA))));
    assertTrue(key.nameMatchesQuestion(wire(Messages.query(10, "www.EXAMPLE.org.", Type.AAAA))));
  }

  @Test
  void keyCarriesQtypeAndQclass() throws Exception {
    Message m = Message.newQuery(Record.newRecord(Messages.name("printer.example."), Type.TXT, DClass.HS));
    DnsQuery q = DnsQuery.parse(wire(m));

    assertEquals(Type.TXT, q.qtype());
    assertEquals(DClass.HS, q.qclass());
    assertEquals(Type.TXT, q.key().qtype());
    assertEquals(DClass.HS, q.key().qclass());
    assertNotEquals(
        DnsQuery.parse(wire(Messages.query(1, "printer.example.", Type.TXT))).key(), q.key(),
        "class HS and class IN answers must not share a cache entry");
  }

  @Test
  void doBitFromOptTtlGoesIntoTheKey() throws Exception {
    DnsQuery withDo = DnsQuery.parse(wire(Messages.ednsQuery(1, "example.com.", Type.A, 1232, true)));
    DnsQuery withoutDo = DnsQuery.parse(wire(Messages.ednsQuery(1, "example.com.", Type.A, 1232, false)));

    assertTrue(withDo.dnssecOk());
    assertEquals(CacheKey.FLAG_DO, withDo.key().flags());
    assertFalse(withoutDo.dnssecOk());
    assertEquals(0, withoutDo.key().flags());
    assertNotEquals(withDo.key(), withoutDo.key());
  }

  @Test
  void doBitIsReadFromTheOptTtlField0x8000Only() throws Exception {
    // Another extended-flags bit (the lowest Z bit) must not be taken for DO.
    Message m = Messages.query(1, "example.com.", Type.A);
    m.addRecord(new OPTRecord(1232, 0, 0, 0x0001), Section.ADDITIONAL);

    DnsQuery q = DnsQuery.parse(wire(m));

    assertTrue(q.edns());
    assertFalse(q.dnssecOk());
    assertEquals(0, q.key().flags());
  }

  @Test
  void cdBitFromHeaderGoesIntoTheKey() throws Exception {
    Message m = Messages.query(1, "example.com.", Type.A);
    m.getHeader().setFlag(Flags.CD);

    DnsQuery q = DnsQuery.parse(wire(m));

    assertTrue(q.checkingDisabled());
    assertEquals(CacheKey.FLAG_CD, q.key().flags());
  }

  @Test
  void doAndCdTogether() throws Exception {
    Message m = Messages.ednsQuery(1, "example.com.", Type.A, 1232, true);
    m.getHeader().setFlag(Flags.CD);

    assertEquals(CacheKey.FLAG_DO | CacheKey.FLAG_CD, DnsQuery.parse(wire(m)).key().flags());
  }

  // --- UDP size ---

  @Test
  void udpLimitIs512WithoutEdns() throws Exception {
    DnsQuery q = DnsQuery.parse(wire(Messages.query(1, "example.com.", Type.A)));

    assertFalse(q.edns());
    assertEquals(512, q.udpLimit());
  }

  @Test
  void udpLimitIsTheAdvertisedEdnsSizeUpToTheCap() throws Exception {
    ReplyPolicy cap4096 = new ReplyPolicy(4096, "", "");

    assertEquals(4000, DnsQuery.parse(wire(Messages.ednsQuery(1, "example.com.", Type.A, 4000, false)), cap4096)
        .udpLimit());
    assertEquals(4096, DnsQuery.parse(wire(Messages.ednsQuery(1, "example.com.", Type.A, 65535, false)), cap4096)
        .udpLimit());
  }

  @Test
  void aClientAdvertising65535GetsAtMost1232ByDefault() throws Exception {
    // A 43-byte query must not buy a 64 KB reply: the amplification cap.
    DnsQuery q = DnsQuery.parse(wire(Messages.ednsQuery(1, "example.com.", Type.A, 65535, false)));

    assertTrue(q.edns());
    assertEquals(1232, q.udpLimit());
  }

  @Test
  void advertisedSizeBelow512CountsAs512() throws Exception {
    DnsQuery q = DnsQuery.parse(wire(Messages.ednsQuery(1, "example.com.", Type.A, 100, false)));

    assertEquals(512, q.udpLimit());
  }

  // --- dropped packets ---

  @Test
  void packetShorterThanAHeaderIsDroppedAsMalformed() {
    for (int len : new int[] {0, 1, 11}) {
      BadQuery bad = rejected(new byte[len]);
      assertTrue(bad.dropped(), len + " bytes");
      assertNull(bad.reply());
      assertEquals("malformed", bad.reason());
      assertEquals(OptionalInt.empty(), bad.rcode());
    }
  }

  @Test
  void responseIsDroppedNeverAnswered() {
    Message m = Messages.query(7, "example.com.", Type.A);
    m.getHeader().setFlag(Flags.QR);

    BadQuery bad = rejected(wire(m));

    assertTrue(bad.dropped());
    assertNull(bad.reply());
    assertEquals("response", bad.reason());
  }

  // --- error replies ---

  @Test
  void notifyOpcodeGetsNotimpWithTheSameId() {
    assertNotimp(Opcode.NOTIFY);
  }

  @Test
  void updateOpcodeGetsNotimpWithTheSameId() {
    assertNotimp(Opcode.UPDATE);
  }

  private static void assertNotimp(int opcode) {
    Message m = Messages.query(0xBEEF, "example.com.", Type.SOA);
    m.getHeader().setOpcode(opcode);

    BadQuery bad = rejected(wire(m));

    assertFalse(bad.dropped());
    assertEquals("notimp", bad.reason());
    assertEquals(OptionalInt.of(Rcode.NOTIMP), bad.rcode());
    Message reply = parse(bad.reply());
    assertEquals(0xBEEF, reply.getHeader().getID());
    assertTrue(reply.getHeader().getFlag(Flags.QR));
    assertEquals(Rcode.NOTIMP, reply.getRcode());
    assertEquals(opcode, reply.getHeader().getOpcode());
  }

  @Test
  void noQuestionIsFormerr() {
    Message m = new Message(0x0102);
    m.getHeader().setFlag(Flags.RD);

    assertFormerr(wire(m));
  }

  @Test
  void twoQuestionsAreFormerr() {
    Message m = Messages.query(0x0203, "a.example.", Type.A);
    m.addRecord(Record.newRecord(Messages.name("b.example."), Type.A, DClass.IN), Section.QUESTION);
    byte[] packet = wire(m);
    assertEquals(2, Messages.u16(packet, 4));

    assertFormerr(packet);
  }

  @Test
  void compressionPointerInQuestionIsFormerr() {
    // "www" then a pointer back to offset 12: legal in an answer, meaningless in a question.
    byte[] packet = concat(header(0x0304, 0x01, 0, 1, 0, 0, 0), bytes(3, 'w', 'w', 'w', 0xC0, 12, 0, 1, 0, 1));

    assertFormerr(packet);
  }

  @Test
  void compressionPointerLoopInQuestionIsFormerr() {
    // The name is a pointer to itself.
    byte[] packet = concat(header(0x0405, 0x01, 0, 1, 0, 0, 0), bytes(0xC0, 12, 0, 1, 0, 1));

    assertFormerr(packet);
  }

  @Test
  void questionNameRunningPastTheEndIsFormerr() {
    byte[] packet = concat(header(0x0506, 0x01, 0, 1, 0, 0, 0), bytes(7, 'e', 'x', 'a', 'm', 'p', 'l', 'e'));

    assertFormerr(packet);
  }

  @Test
  void questionWithoutTypeAndClassIsFormerr() {
    byte[] packet = concat(header(0x0607, 0x01, 0, 1, 0, 0, 0), nameOfLabels(7), bytes(0, 1));

    assertFormerr(packet);
  }

  @Test
  void labelLongerThan63IsFormerr() {
    byte[] packet = concat(header(0x0708, 0x01, 0, 1, 0, 0, 0), nameOfLabels(64), bytes(0, 1, 0, 1));

    assertFormerr(packet);
  }

  @Test
  void nameOf255OctetsIsAccepted() throws Exception {
    byte[] name = nameOfLabels(63, 63, 63, 61);
    assertEquals(255, name.length);
    byte[] packet = concat(header(0x0809, 0x01, 0, 1, 0, 0, 0), name, bytes(0, 1, 0, 1));

    DnsQuery q = DnsQuery.parse(packet);

    assertEquals(12 + 255, q.nameEnd());
  }

  @Test
  void nameOf256OctetsIsFormerr() {
    // RFC 1035 3.1: label octets and length octets, root included, total 255 or less.
    byte[] name = nameOfLabels(63, 63, 63, 62);
    assertEquals(256, name.length);

    assertFormerr(concat(header(0x090A, 0x01, 0, 1, 0, 0, 0), name, bytes(0, 1, 0, 1)));
  }

  @Test
  void muchLongerNameIsFormerr() {
    assertFormerr(concat(
        header(0x0A0B, 0x01, 0, 1, 0, 0, 0), nameOfLabels(63, 63, 63, 63, 63), bytes(0, 1, 0, 1)));
  }

  @Test
  void axfrIsRefusedWithTheQuestion() {
    assertRefused(Type.AXFR, false);
  }

  @Test
  void ixfrIsRefusedWithTheQuestion() {
    assertRefused(Type.IXFR, false);
  }

  @Test
  void refusalToAnEdnsClientCarriesOpt() {
    assertRefused(Type.AXFR, true);
  }

  private static void assertRefused(int qtype, boolean edns) {
    Message m = edns
        ? Messages.ednsQuery(0x4321, "Example.COM.", qtype, 1232, false)
        : Messages.query(0x4321, "Example.COM.", qtype);

    BadQuery bad = rejected(wire(m));

    assertFalse(bad.dropped());
    assertEquals("refused", bad.reason());
    assertEquals(OptionalInt.of(Rcode.REFUSED), bad.rcode());
    Message reply = parse(bad.reply());
    assertEquals(0x4321, reply.getHeader().getID());
    assertTrue(reply.getHeader().getFlag(Flags.QR));
    assertEquals(Rcode.REFUSED, reply.getRcode());
    Record question = reply.getQuestion();
    assertNotNull(question);
    assertEquals(Messages.name("example.com."), question.getName());
    assertEquals(qtype, question.getType());
    assertEquals(0, reply.getSection(Section.ANSWER).size());
    assertEquals(edns, reply.getOPT() != null);
  }

  @Test
  void twoOptRecordsAreFormerr() {
    Message m = Messages.ednsQuery(0x1111, "example.com.", Type.A, 1232, false);
    m.addRecord(new OPTRecord(4096, 0, 0, 0), Section.ADDITIONAL);
    byte[] packet = wire(m);
    assertEquals(2, Messages.u16(packet, 10));

    assertFormerr(packet);
  }

  @Test
  void optInTheAnswerSectionIsFormerr() {
    Message m = Messages.query(0x2222, "example.com.", Type.A);
    m.addRecord(new OPTRecord(1232, 0, 0, 0), Section.ANSWER);

    assertFormerr(wire(m));
  }

  @Test
  void additionalRecordRunningPastTheEndIsFormerr() {
    byte[] full = wire(Messages.ednsQuery(0x3333, "example.com.", Type.A, 1232, false));

    assertFormerr(Arrays.copyOf(full, full.length - 3));
  }

  // --- EDNS version, and what replies shoal makes itself carry ---

  private static Message ednsVersion(int version, boolean dnssecOk) {
    Message m = Messages.query(0x5A5A, "Example.COM.", Type.A);
    m.addRecord(new OPTRecord(4096, 0, version, dnssecOk ? ExtendedFlags.DO : 0), Section.ADDITIONAL);
    return m;
  }

  @Test
  void ednsVersion1GetsBadversWithAnOptOfVersion0AndNoAnswer() {
    BadQuery bad = rejected(wire(ednsVersion(1, true)));

    assertFalse(bad.dropped());
    assertEquals("badvers", bad.reason());
    assertEquals(OptionalInt.of(Rcode.BADVERS), bad.rcode());
    Message reply = parse(bad.reply());
    assertEquals(org.xbill.DNS.Rcode.BADVERS, reply.getRcode(), "extended rcode 16 across header and OPT");
    assertEquals(0, reply.getHeader().getRcode() & 0x0F);
    OPTRecord opt = reply.getOPT();
    assertNotNull(opt);
    assertEquals(0, opt.getVersion());
    assertEquals(ExtendedFlags.DO, opt.getFlags() & ExtendedFlags.DO);
    assertEquals(0, reply.getSection(Section.ANSWER).size());
    assertEquals(Messages.name("example.com."), reply.getQuestion().getName());
    assertEquals(Rcode.BADVERS, AnswerRenderer.rcode(bad.reply()), "the metric label sees BADVERS");
  }

  @Test
  void ednsVersion0IsAccepted() throws Exception {
    assertTrue(DnsQuery.parse(wire(ednsVersion(0, false))).edns());
  }

  @Test
  void notimpCarriesTheQuestionAndAnOptWithTheClientsDo() {
    Message m = Messages.ednsQuery(0x6B6B, "example.com.", Type.SOA, 1232, true);
    m.getHeader().setOpcode(Opcode.NOTIFY);

    Message reply = parse(rejected(wire(m)).reply());

    assertEquals(Rcode.NOTIMP, reply.getRcode());
    assertEquals(Messages.name("example.com."), reply.getQuestion().getName());
    assertEquals(Type.SOA, reply.getQuestion().getType());
    assertNotNull(reply.getOPT());
    assertEquals(ExtendedFlags.DO, reply.getOPT().getFlags() & ExtendedFlags.DO);
  }

  @Test
  void formerrAfterAReadableQuestionCarriesItAndAnOpt() {
    // Question and OPT parse; the answer-section record after them is cut short.
    Message m = Messages.ednsQuery(0x7C7C, "example.com.", Type.A, 1232, false);
    byte[] good = wire(m);
    byte[] packet = concat(good, bytes(0xC0, 12, 0, 1));
    Wire.put16(packet, 6, 0);
    Wire.put16(packet, 10, 2);

    BadQuery bad = rejected(packet);

    assertEquals("formerr", bad.reason());
    Message reply = parse(bad.reply());
    assertEquals(Rcode.FORMERR, reply.getRcode());
    assertEquals(Messages.name("example.com."), reply.getQuestion().getName());
    assertNotNull(reply.getOPT(), "the query had an OPT");
  }

  @Test
  void formerrWithoutAReadableQuestionIsTheHeaderAlone() {
    byte[] packet = concat(header(0x0506, 0x01, 0, 1, 0, 0, 0), bytes(7, 'e', 'x', 'a'));

    byte[] reply = rejected(packet).reply();

    assertEquals(12, reply.length);
  }

  @Test
  void refusalAndServfailCopyDo() throws Exception {
    Message axfr = Messages.ednsQuery(1, "example.com.", Type.AXFR, 1232, true);
    OPTRecord refusedOpt = parse(rejected(wire(axfr)).reply()).getOPT();
    assertEquals(ExtendedFlags.DO, refusedOpt.getFlags() & ExtendedFlags.DO);

    DnsQuery q = DnsQuery.parse(wire(Messages.ednsQuery(1, "example.com.", Type.A, 1232, true)));
    Message servfail = parse(q.servfail());
    assertEquals(Rcode.SERVFAIL, servfail.getRcode());
    assertEquals(Rcode.SERVFAIL, AnswerRenderer.rcode(q.servfail()));
    assertEquals(ExtendedFlags.DO, servfail.getOPT().getFlags() & ExtendedFlags.DO);
    assertEquals(0, parse(DnsQuery.parse(wire(Messages.ednsQuery(1, "example.com.", Type.A, 1232, false)))
        .servfail()).getOPT().getFlags() & ExtendedFlags.DO);
  }

  // --- class CH ---

  private static Message chaos(String name, int type) {
    Message m = Message.newQuery(Record.newRecord(Messages.name(name), type, DClass.CH));
    m.getHeader().setID(0x0C0C);
    return m;
  }

  @Test
  void classChIsRefusedByDefault() {
    for (String name : new String[] {"version.bind.", "id.server.", "hostname.bind.", "version.server.", "x.example."}) {
      BadQuery bad = rejected(wire(chaos(name, Type.TXT)));

      assertEquals("chaos", bad.reason(), name);
      Message reply = parse(bad.reply());
      assertEquals(Rcode.REFUSED, reply.getRcode(), name);
      assertEquals(Messages.name(name), reply.getQuestion().getName());
      assertEquals(0, reply.getSection(Section.ANSWER).size());
    }
  }

  @Test
  void configuredIdentityAndVersionAreAnsweredAsTxtInClassCh() throws Exception {
    ReplyPolicy policy = new ReplyPolicy(1232, "resolver-7.example", "shoal 1.0");

    Message id = parse(assertThrows(BadQuery.class,
        () -> DnsQuery.parse(wire(chaos("ID.Server.", Type.TXT)), policy)).reply());
    Message host = parse(assertThrows(BadQuery.class,
        () -> DnsQuery.parse(wire(chaos("hostname.bind.", Type.TXT)), policy)).reply());
    Message version = parse(assertThrows(BadQuery.class,
        () -> DnsQuery.parse(wire(chaos("version.bind.", Type.TXT)), policy)).reply());
    Message other = parse(assertThrows(BadQuery.class,
        () -> DnsQuery.parse(wire(chaos("authors.bind.", Type.TXT)), policy)).reply());

    for (Message m : new Message[] {id, host}) {
      assertEquals(Rcode.NOERROR, m.getRcode());
      org.xbill.DNS.TXTRecord txt = (org.xbill.DNS.TXTRecord) m.getSection(Section.ANSWER).get(0);
      assertEquals(DClass.CH, txt.getDClass());
      assertEquals(List.of("resolver-7.example"), txt.getStrings());
      assertEquals(0, txt.getTTL());
    }
    assertEquals("ID.Server.", id.getQuestion().getName().toString(), "the client's case");
    assertEquals(List.of("shoal 1.0"),
        ((org.xbill.DNS.TXTRecord) version.getSection(Section.ANSWER).get(0)).getStrings());
    assertEquals(Rcode.REFUSED, other.getRcode());
  }

  @Test
  void chaosAnswerToAnEdnsClientCarriesOpt() throws Exception {
    Message m = chaos("id.server.", Type.TXT);
    m.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);

    Message reply = parse(assertThrows(BadQuery.class,
        () -> DnsQuery.parse(wire(m), new ReplyPolicy(1232, "me", ""))).reply());

    assertEquals(1, reply.getSection(Section.ANSWER).size());
    assertEquals(ExtendedFlags.DO, reply.getOPT().getFlags() & ExtendedFlags.DO);
  }
}
