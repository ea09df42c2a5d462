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
  /** max_ttl 200 s: the 300 s answer and the 3600 s NS are served with 200 s at most. */
  private static final TtlRules RULES = new TtlRules(0, 200, 900, 5);
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

  /** The answer as the worker caches it: validated, OPT removed, TTLs within the rules. */
  private static CachedAnswer cached(Message upstream) throws Exception {
    return cached(upstream, RULES);
  }

  private static CachedAnswer cached(Message upstream, TtlRules rules) throws Exception {
    ScannedAnswer scan = ScannedAnswer.fromUpstream(wire(upstream));
    return rules.cachedAnswer(scan, STORED, rules.cacheSeconds(scan));
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
  void theUpstreamsOptIsNeverServedAnEdnsClientGetsShoals() throws Exception {
    // The upstream's OPT advertises 4096 bytes, carries DO and a cookie: all of it per hop.
    Message up = upstream(false);
    up.addRecord(new OPTRecord(4096, 0, 0, ExtendedFlags.DO,
        List.of(new org.xbill.DNS.CookieOption(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}))), Section.ADDITIONAL);
    CachedAnswer answer = cached(up);
    assertEquals(-1, answer.optStart(), "nothing of the upstream's OPT is stored");
    assertNull(parse(answer.wire()).getOPT());

    for (boolean dnssecOk : new boolean[] {true, false}) {
      DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 1232, dnssecOk));
      OPTRecord opt = parse(answer.render(q, STORED + 1_000, NO_LIMIT)).getOPT();
      assertNotNull(opt);
      assertEquals(0, opt.getVersion());
      assertEquals(DnsQuery.EDNS_UDP_SIZE, opt.getPayloadSize());
      assertTrue(opt.getOptions().isEmpty(), "no upstream options");
      assertEquals(dnssecOk ? ExtendedFlags.DO : 0, opt.getFlags() & ExtendedFlags.DO, "DO is the client's");
    }
  }

  @Test
  void eachRecordKeepsItsOwnTtlAndCountsItDown() throws Exception {
    // A CNAME chain of 3600, 1800, 900 and 600: one TTL for all would serve 600 four times.
    Message up = Messages.response(UPSTREAM_ID, "a.example.com.", Type.A, Rcode.NOERROR);
    up.addRecord(new org.xbill.DNS.CNAMERecord(name("a.example.com."), DClass.IN, 3600, name("b.example.com.")),
        Section.ANSWER);
    up.addRecord(new org.xbill.DNS.CNAMERecord(name("b.example.com."), DClass.IN, 1800, name("c.example.com.")),
        Section.ANSWER);
    up.addRecord(new org.xbill.DNS.CNAMERecord(name("c.example.com."), DClass.IN, 900, name("d.example.com.")),
        Section.ANSWER);
    up.addRecord(a("d.example.com.", 600, "192.0.2.4"), Section.ANSWER);
    TtlRules rules = new TtlRules(0, 86_400, 900, 5);
    CachedAnswer answer = cached(up, rules);
    DnsQuery q = client(Messages.query(1, "a.example.com.", Type.A));

    assertArrayEquals(new long[] {3600, 1800, 900, 600},
        ttls(parse(answer.render(q, STORED, NO_LIMIT)), Section.ANSWER));
    assertArrayEquals(new long[] {3500, 1700, 800, 500},
        ttls(parse(answer.render(q, STORED + 100_000, NO_LIMIT)), Section.ANSWER));
    assertEquals(STORED + 600_000, answer.expiresAtMillis(), "the entry goes with its smallest TTL");
  }

  @Test
  void minTtlRaisesTheRecordsBelowIt() throws Exception {
    // min_ttl 120: the 60 s record is kept 120 s, so clients must not see it reach 0 before.
    CachedAnswer answer = cached(upstream(false), new TtlRules(120, 86_400, 900, 5));
    DnsQuery q = client(Messages.query(1, "www.example.com.", Type.A));

    assertArrayEquals(new long[] {300, 120}, ttls(parse(answer.render(q, STORED, NO_LIMIT)), Section.ANSWER));
    assertEquals(STORED + 120_000, answer.expiresAtMillis());
  }

  @Test
  void anAnswerStoredWithTheUpstreamsOptBeforeItsGlueIsServedWithoutIt() throws Exception {
    // Stored by an earlier version: the upstream's OPT sits before two glue records whose second
    // owner is a pointer to the first. Cutting the OPT out in place would break that pointer.
    Message up = upstream(true);
    up.addRecord(new org.xbill.DNS.AAAARecord(name("ns1.example.com."), DClass.IN, 120,
        InetAddress.getByName("2001:db8::53")), Section.ADDITIONAL);
    byte[] stored = wire(up);
    ScannedAnswer raw = ScannedAnswer.scan(stored);
    assertTrue(raw.optEnd() < stored.length);
    CachedAnswer legacy = new CachedAnswer(stored, raw.ttlOffsets(), raw.optStart(), raw.optEnd(),
        STORED, STORED + 60_000);

    for (Message query : new Message[] {
        Messages.query(1, "www.example.com.", Type.A), Messages.ednsQuery(1, "www.example.com.", Type.A, 1232, false)}) {
      Message reply = parse(legacy.render(client(query), STORED + 10_000, NO_LIMIT));
      List<Record> additional = reply.getSection(Section.ADDITIONAL).stream()
          .filter(r -> r.getType() != Type.OPT).toList();
      assertEquals(2, additional.size());
      assertEquals(name("ns1.example.com."), additional.get(1).getName());
      assertEquals("2001:db8:0:0:0:0:0:53", ((org.xbill.DNS.AAAARecord) additional.get(1)).getAddress().getHostAddress());
      assertEquals(110, additional.get(1).getTTL());
      OPTRecord opt = reply.getOPT();
      if (opt != null) {
        assertEquals(0, opt.getFlags() & ExtendedFlags.DO, "the stored upstream OPT had DO; this client did not ask");
      }
    }
  }

  @Test
  void aNameThatPointsIntoATtlFieldDoesNotChangeAsTheTtlCountsDown() throws Exception {
    // The first A's TTL bytes 01 'x' 01 'y' (then 00 of RDLENGTH) also read as the name x.y.;
    // the second A's owner points there. Counting that TTL down would rename the second record.
    byte[] question = {1, 'a', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};
    int ttlAt = 12 + question.length + 2 + 4;
    byte[] w = Messages.concat(
        Messages.header(UPSTREAM_ID, 0x81, 0x80, 1, 2, 0, 0), question,
        Messages.bytes(0xC0, 12, 0, 1, 0, 1, 1, 'x', 1, 'y', 0, 4, 192, 0, 2, 1),
        Messages.bytes(0xC0, ttlAt, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 2));
    assertEquals(name("x.y."), parse(w).getSection(Section.ANSWER).get(1).getName());
    ScannedAnswer scan = ScannedAnswer.fromUpstream(w);
    CachedAnswer answer = RULES.cachedAnswer(scan, STORED, RULES.cacheSeconds(scan));

    Message reply = parse(answer.render(client(Messages.query(1, "a.test.", Type.A)), STORED + 30_000, NO_LIMIT));

    assertEquals(name("x.y."), reply.getSection(Section.ANSWER).get(1).getName());
    assertEquals(30, reply.getSection(Section.ANSWER).get(1).getTTL());
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
  void nonEdnsClientGetsNoOptAndTtlsCountedDown() throws Exception {
    DnsQuery q = client(Messages.query(0x0E0F, "www.example.com.", Type.A));
    assertFalse(q.edns());

    byte[] out = cached(upstream(true)).render(q, STORED + 45_700, NO_LIMIT);

    assertEquals(1, u16(out, 10), "only the glue A: the upstream's OPT was removed before caching");
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
    CachedAnswer answer = cached(upstream(false));
    DnsQuery q = client(Messages.ednsQuery(1, "www.example.com.", Type.A, 4096, true));

    byte[] out = answer.render(q, STORED + 45_700, NO_LIMIT);

    assertEquals(u16(answer.wire(), 10) + 1, u16(out, 10));
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
  void rdAndCdAreEchoedFromTheQuery() throws Exception {
    // Whatever the upstream set: RD is the client's, and CD too (RFC 4035 section 3.1.6).
    Message asked = Messages.query(1, "www.example.com.", Type.A);
    asked.getHeader().setFlag(Flags.CD);
    Message plain = Messages.query(1, "www.example.com.", Type.A);
    plain.getHeader().unsetFlag(Flags.RD);
    Message up = upstream(true);
    up.getHeader().unsetFlag(Flags.RD);
    Message upWithCd = upstream(true);
    upWithCd.getHeader().setFlag(Flags.CD);

    Message r1 = parse(cached(up).render(client(asked), STORED, NO_LIMIT));
    Message r2 = parse(cached(upWithCd).render(client(plain), STORED, NO_LIMIT));

    assertTrue(r1.getHeader().getFlag(Flags.RD));
    assertTrue(r1.getHeader().getFlag(Flags.CD));
    assertFalse(r2.getHeader().getFlag(Flags.RD));
    assertFalse(r2.getHeader().getFlag(Flags.CD));
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
    TtlRules rules = new TtlRules(0, 86_400, 900, 5);
    CachedAnswer answer = cached(up, rules);
    assertEquals(STORED + 300_000, answer.expiresAtMillis(), "min(SOA TTL 900, MINIMUM 300)");
    DnsQuery q = client(Messages.query(5, "nope.example.com.", Type.A));

    Message reply = parse(answer.render(q, STORED + 10_000, NO_LIMIT));

    assertEquals(Rcode.NXDOMAIN, reply.getRcode());
    assertArrayEquals(new long[] {290}, ttls(reply, Section.AUTHORITY));
  }

  @Test
  void expiry() throws Exception {
    CachedAnswer answer = cached(upstream(true));

    // The smallest TTL in the answer is 60 s.
    assertFalse(answer.expiredAt(STORED + 59_999));
    assertTrue(answer.expiredAt(STORED + 60_000));
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

  @Test
  void renderingIntoABufferGivesTheSameReplyAsRenderingANewOne() throws Exception {
    Message adQuery = Messages.query(0x5151, "www.example.com.", Type.A);
    adQuery.getHeader().setFlag(Flags.AD);
    Message servfail = Messages.response(UPSTREAM_ID, "www.example.com.", Type.A, Rcode.SERVFAIL);
    List<CachedAnswer> answers = List.of(
        cached(upstream(false)), cached(upstream(true)), cached(servfail),
        // stored before OPT records were removed on the way in: rendered the long way
        new CachedAnswer(wire(upstream(true)), new int[0], 0, 0, STORED, STORED + 60_000));
    List<DnsQuery> queries = List.of(
        client(Messages.query(0x1234, "WWW.example.com.", Type.A)),
        client(Messages.ednsQuery(0x4321, "www.Example.com.", Type.A, 1232, true)),
        client(Messages.ednsQuery(0x4321, "www.example.COM.", Type.A, 1232, false)),
        client(adQuery));
    for (CachedAnswer answer : answers) {
      for (DnsQuery q : queries) {
        for (int limit : new int[] {NO_LIMIT, 512, 40}) {
          byte[] out = new byte[answer.renderSize() + 100];
          Arrays.fill(out, (byte) 0x5A);

          int n = answer.renderInto(q, STORED + 7_500, limit, out);

          assertArrayEquals(answer.render(q, STORED + 7_500, limit), Arrays.copyOf(out, n),
              "query " + q.id() + ", limit " + limit);
        }
      }
    }
  }
}
