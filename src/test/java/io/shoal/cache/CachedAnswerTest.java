package io.shoal.cache;

import static io.shoal.wire.Messages.name;
import static io.shoal.wire.Messages.parse;
import static io.shoal.wire.Messages.u16;
import static io.shoal.wire.Messages.wire;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.wire.DnsQuery;
import io.shoal.wire.Messages;
import io.shoal.wire.Rcode;
import io.shoal.wire.ScannedAnswer;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
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
import org.xbill.DNS.Type;

/** Replies rendered from a cached answer: ID, name case, counted-down TTLs, OPT and truncation. */
class CachedAnswerTest {
  private static final long STORED = 1_700_000_000_000L;
  /** The cache decided on 200 s, less than the 300 s answer and the 3600 s NS TTLs. */
  private static final long EXPIRES = STORED + 200_000;
  private static final int UPSTREAM_ID = 0x7777;
  private static final int NO_LIMIT = 65535;

  private static ARecord a(String owner, long ttl, String addr) throws Exception {
    return new ARecord(name(owner), DClass.IN, ttl, InetAddress.getByName(addr));
  }

  /** An upstream answer with AA set, OPT (DO) placed before the glue A in the additional section. */
  private static Message upstream(boolean withOpt) throws Exception {
    Message m = Messages.response(UPSTREAM_ID, "www.example.com.", Type.A, Rcode.NOERROR);
    m.getHeader().setFlag(Flags.AA);
    m.addRecord(a("www.example.com.", 300, "192.0.2.1"), Section.ANSWER);
    m.addRecord(a("www.example.com.", 60, "192.0.2.2"), Section.ANSWER);
    m.addRecord(new NSRecord(name("example.com."), DClass.IN, 3600, name("ns1.example.com.")), Section.AUTHORITY);
    if (withOpt) {
      m.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    }
    m.addRecord(a("ns1.example.com.", 120, "192.0.2.53"), Section.ADDITIONAL);
    return m;
  }

  private static CachedAnswer cached(Message upstream) throws Exception {
    return CachedAnswer.of(ScannedAnswer.scan(wire(upstream)), STORED, EXPIRES);
  }

  private static DnsQuery client(Message query) throws Exception {
    return DnsQuery.parse(wire(query));
  }

  private static long[] ttls(Message reply, int section) {
    return reply.getSection(section).stream()
        .filter(r -> r.getType() != Type.OPT)
        .mapToLong(Record::getTTL)
        .toArray();
  }

  @Test
  void replyCarriesTheClientsIdAndNameCase() throws Exception {
    DnsQuery q = client(Messages.ednsQuery(0x0A0B, "WwW.eXaMpLe.CoM.", Type.A, 1232, true));

    byte[] out = cached(upstream(true)).render(q, STORED + 1_000, NO_LIMIT);

    assertEquals(0x0A0B, parse(out).getHeader().getID());
    assertArrayEquals(
        Arrays.copyOfRange(q.packet(), 12, q.nameEnd()), Arrays.copyOfRange(out, 12, q.nameEnd()));
    // The answers' owners are compression pointers to the question, so they follow its case too.
    assertEquals("WwW.eXaMpLe.CoM.", parse(out).getSection(Section.ANSWER).get(0).getName().toString());
  }

  @Test
  void ttlsAreCappedByLifetimeAndCountedDownInWholeSeconds() throws Exception {
    DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 1232, true));

    // 45.7 s after storing: 45 s have elapsed.
    Message reply = parse(cached(upstream(true)).render(q, STORED + 45_700, NO_LIMIT));

    assertArrayEquals(new long[] {155, 15}, ttls(reply, Section.ANSWER));
    assertArrayEquals(new long[] {155}, ttls(reply, Section.AUTHORITY));
    assertArrayEquals(new long[] {75}, ttls(reply, Section.ADDITIONAL));
  }

  @Test
  void freshAnswerCarriesTheCappedTtls() throws Exception {
    DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 1232, true));

    Message reply = parse(cached(upstream(true)).render(q, STORED + 999, NO_LIMIT));

    assertArrayEquals(new long[] {200, 60}, ttls(reply, Section.ANSWER));
    assertArrayEquals(new long[] {200}, ttls(reply, Section.AUTHORITY));
    assertArrayEquals(new long[] {120}, ttls(reply, Section.ADDITIONAL));
  }

  @Test
  void ttlsNeverGoNegative() throws Exception {
    DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 1232, true));

    Message reply = parse(cached(upstream(true)).render(q, STORED + 150_000, NO_LIMIT));

    assertArrayEquals(new long[] {50, 0}, ttls(reply, Section.ANSWER));
    assertArrayEquals(new long[] {50}, ttls(reply, Section.AUTHORITY));
    assertArrayEquals(new long[] {0}, ttls(reply, Section.ADDITIONAL));
  }

  @Test
  void optTtlFieldHoldsEdnsFlagsAndIsLeftUntouched() throws Exception {
    byte[] stored = wire(upstream(true));
    ScannedAnswer scan = ScannedAnswer.scan(stored);
    DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 1232, true));

    byte[] out = CachedAnswer.of(scan, STORED, EXPIRES).render(q, STORED + 45_700, NO_LIMIT);

    // Same layout for an EDNS client: the OPT sits where it was, byte for byte.
    assertArrayEquals(
        Arrays.copyOfRange(stored, scan.optStart(), scan.optEnd()),
        Arrays.copyOfRange(out, scan.optStart(), scan.optEnd()));
    OPTRecord opt = parse(out).getOPT();
    assertNotNull(opt);
    assertEquals(ExtendedFlags.DO, opt.getFlags() & ExtendedFlags.DO);
    assertEquals(0x8000, opt.getTTL());
  }

  @Test
  void renderingLeavesTheStoredBytesAlone() throws Exception {
    // The next client must see TTLs counted from the original, not from our last reply.
    CachedAnswer answer = cached(upstream(true));
    byte[] before = answer.wire().clone();
    DnsQuery q = client(Messages.query(0x0C0D, "WWW.EXAMPLE.COM.", Type.A));

    answer.render(q, STORED + 45_700, NO_LIMIT);

    assertArrayEquals(before, answer.wire());
  }

  @Test
  void nonEdnsClientGetsNoOptAndLaterTtlsArePatchedInPlace() throws Exception {
    byte[] stored = wire(upstream(true));
    DnsQuery q = client(Messages.query(0x0E0F, "www.example.com.", Type.A));
    assertFalse(q.edns());

    byte[] out = CachedAnswer.of(ScannedAnswer.scan(stored), STORED, EXPIRES).render(q, STORED + 45_700, NO_LIMIT);

    assertEquals(2, u16(stored, 10));
    assertEquals(1, u16(out, 10), "ARCOUNT drops by the removed OPT");
    assertEquals(stored.length - 11, out.length);
    Message reply = parse(out);
    assertNull(reply.getOPT());
    assertArrayEquals(new long[] {155, 15}, ttls(reply, Section.ANSWER));
    assertArrayEquals(new long[] {155}, ttls(reply, Section.AUTHORITY));
    List<Record> additional = reply.getSection(Section.ADDITIONAL);
    assertEquals(1, additional.size());
    assertEquals(name("ns1.example.com."), additional.get(0).getName());
    assertEquals(75, additional.get(0).getTTL());
    assertEquals("192.0.2.53", ((ARecord) additional.get(0)).getAddress().getHostAddress());
  }

  @Test
  void ednsClientGetsAnOptWhenTheStoredAnswerHasNone() throws Exception {
    byte[] stored = wire(upstream(false));
    DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 4096, true));

    byte[] out = CachedAnswer.of(ScannedAnswer.scan(stored), STORED, EXPIRES).render(q, STORED + 45_700, NO_LIMIT);

    assertEquals(u16(stored, 10) + 1, u16(out, 10));
    Message reply = parse(out);
    OPTRecord opt = reply.getOPT();
    assertNotNull(opt);
    assertEquals(ExtendedFlags.DO, opt.getFlags() & ExtendedFlags.DO, "DO echoed to a DO client");
    assertArrayEquals(new long[] {155, 15}, ttls(reply, Section.ANSWER));
    assertArrayEquals(new long[] {75}, ttls(reply, Section.ADDITIONAL));
  }

  @Test
  void addedOptHasNoDoForAClientWithoutDo() throws Exception {
    DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 1232, false));

    OPTRecord opt = parse(cached(upstream(false)).render(q, STORED, NO_LIMIT)).getOPT();

    assertNotNull(opt);
    assertEquals(0, opt.getFlags() & ExtendedFlags.DO);
  }

  @Test
  void aaIsClearedAndRaSet() throws Exception {
    Message up = upstream(true);
    up.getHeader().unsetFlag(Flags.RA);
    DnsQuery q = client(Messages.query(1, "www.example.com.", Type.A));

    Message reply = parse(cached(up).render(q, STORED, NO_LIMIT));

    assertFalse(reply.getHeader().getFlag(Flags.AA), "a cached copy is not authoritative");
    assertTrue(reply.getHeader().getFlag(Flags.RA));
    assertTrue(reply.getHeader().getFlag(Flags.QR));
    assertEquals(Rcode.NOERROR, reply.getRcode());
  }

  @Test
  void rdIsEchoedFromTheQuery() throws Exception {
    Message noRd = Messages.query(1, "www.example.com.", Type.A);
    noRd.getHeader().unsetFlag(Flags.RD);
    Message upWithoutRd = upstream(true);
    upWithoutRd.getHeader().unsetFlag(Flags.RD);

    Message r1 = parse(cached(upstream(true)).render(client(noRd), STORED, NO_LIMIT));
    Message r2 = parse(cached(upWithoutRd).render(client(Messages.query(1, "www.example.com.", Type.A)), STORED, NO_LIMIT));

    assertFalse(r1.getHeader().getFlag(Flags.RD));
    assertTrue(r2.getHeader().getFlag(Flags.RD));
  }

  @Test
  void replyThatFitsExactlyIsNotTruncated() throws Exception {
    CachedAnswer answer = cached(upstream(true));
    DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 1232, true));
    int full = answer.render(q, STORED, NO_LIMIT).length;

    Message reply = parse(answer.render(q, STORED, full));

    assertFalse(reply.getHeader().getFlag(Flags.TC));
    assertEquals(2, reply.getSection(Section.ANSWER).size());
  }

  @Test
  void oversizedReplyToEdnsClientIsHeaderQuestionAndOptWithTc() throws Exception {
    CachedAnswer answer = cached(upstream(true));
    DnsQuery q = client(Messages.ednsQuery(0x1357, "Www.Example.Com.", Type.A, 1232, true));
    int full = answer.render(q, STORED, NO_LIMIT).length;

    byte[] out = answer.render(q, STORED, full - 1);

    assertEquals(q.questionEnd() + 11, out.length);
    assertEquals(0, u16(out, 6));
    assertEquals(0, u16(out, 8));
    assertEquals(1, u16(out, 10));
    Message reply = parse(out);
    assertTrue(reply.getHeader().getFlag(Flags.TC));
    assertEquals(0x1357, reply.getHeader().getID());
    assertEquals("Www.Example.Com.", reply.getQuestion().getName().toString());
    assertEquals(Type.A, reply.getQuestion().getType());
    assertNotNull(reply.getOPT());
    assertEquals(ExtendedFlags.DO, reply.getOPT().getFlags() & ExtendedFlags.DO);
  }

  @Test
  void answerLargerThan512IsTruncatedForAClassicClient() throws Exception {
    Message up = Messages.response(UPSTREAM_ID, "big.example.com.", Type.A, Rcode.NOERROR);
    for (int i = 0; i < 40; i++) {
      up.addRecord(a("big.example.com.", 300, "192.0.2." + i), Section.ANSWER);
    }
    CachedAnswer answer = cached(up);
    DnsQuery q = client(Messages.query(0x2468, "big.example.com.", Type.A));
    assertTrue(answer.wire().length > 512);

    byte[] out = answer.render(q, STORED, q.udpLimit());

    assertEquals(q.questionEnd(), out.length);
    Message reply = parse(out);
    assertTrue(reply.getHeader().getFlag(Flags.TC));
    assertEquals(0x2468, reply.getHeader().getID());
    assertEquals(1, reply.getHeader().getCount(Section.QUESTION));
    for (int section : new int[] {Section.ANSWER, Section.AUTHORITY, Section.ADDITIONAL}) {
      assertEquals(0, reply.getHeader().getCount(section));
    }
    // Over TCP the same answer goes out whole.
    assertEquals(40, parse(answer.render(q, STORED, NO_LIMIT)).getSection(Section.ANSWER).size());
  }

  @Test
  void negativeAnswerKeepsRcodeAndCountsDownTheSoa() throws Exception {
    Message up = Messages.response(UPSTREAM_ID, "nope.example.com.", Type.A, Rcode.NXDOMAIN);
    up.addRecord(
        new SOARecord(name("example.com."), DClass.IN, 900, name("ns1.example.com."),
            name("hostmaster.example.com."), 1, 7200, 900, 1209600, 300),
        Section.AUTHORITY);
    CachedAnswer answer = CachedAnswer.of(ScannedAnswer.scan(wire(up)), STORED, STORED + 300_000);
    DnsQuery q = client(Messages.query(5, "nope.example.com.", Type.A));

    Message reply = parse(answer.render(q, STORED + 10_000, NO_LIMIT));

    assertEquals(Rcode.NXDOMAIN, reply.getRcode());
    assertArrayEquals(new long[] {290}, ttls(reply, Section.AUTHORITY));
  }

  @Test
  void expiry() throws Exception {
    CachedAnswer answer = cached(upstream(true));

    assertFalse(answer.expiredAt(EXPIRES - 1));
    assertTrue(answer.expiredAt(EXPIRES));
  }

  @Test
  void encodeDecodeRoundTripRendersTheSameReply() throws Exception {
    CachedAnswer answer = cached(upstream(true));
    ByteBuffer buf = ByteBuffer.allocate(answer.encodedSize());

    answer.encode(buf);
    buf.flip();
    CachedAnswer back = CachedAnswer.decode(buf);

    assertFalse(buf.hasRemaining());
    assertEquals(answer.storedAtMillis(), back.storedAtMillis());
    assertEquals(answer.expiresAtMillis(), back.expiresAtMillis());
    DnsQuery q = client(Messages.query(0x0F0F, "www.EXAMPLE.com.", Type.A));
    assertArrayEquals(answer.render(q, STORED + 12_345, 512), back.render(q, STORED + 12_345, 512));
  }
}
