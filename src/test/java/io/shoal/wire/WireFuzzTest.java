package io.shoal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.TtlRules;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.MXRecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.PTRRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/**
 * Property-based fuzzing of the wire layer with a seeded generator: random and mutated client
 * queries through {@link DnsQuery#parse}, random and mutated upstream answers (compressed names,
 * the OPT anywhere in the additional section, top-bit TTLs) through scan, validation and OPT
 * removal, {@link TtlRules}, {@link CachedAnswer} encode/decode and render. Nothing may throw but
 * the documented {@link BadQuery} and {@link WireException}; every reply shoal renders must parse
 * with dnsjava and say what the answer said; no case may take longer than five seconds.
 *
 * <p>A failure names its seed and case; rerun with {@code -Dshoal.fuzz.seed=N}, and more cases
 * with {@code -Dshoal.fuzz.cases=N}.
 */
class WireFuzzTest {
  private static final long SEED = Long.getLong("shoal.fuzz.seed", 0x5EED_2026L);
  private static final int CASES = Integer.getInteger("shoal.fuzz.cases", 2500);
  /** Far above a case's usual milliseconds (the first also loads classes): this catches loops. */
  private static final long CASE_LIMIT_NANOS = Duration.ofSeconds(5).toNanos();
  private static final Duration SUITE_LIMIT = Duration.ofMillis(Math.max(45_000, CASES * 20L));
  private static final long NOW = 1_800_000_000_000L;
  private static final ReplyPolicy POLICY = new ReplyPolicy(1232, "fuzz-node", "");

  private static final int[] QTYPES = {
    Type.A, Type.AAAA, Type.TXT, Type.MX, Type.NS, Type.CNAME, Type.SOA, Type.SRV, Type.PTR, Type.ANY,
    Type.AXFR, Type.IXFR, Type.DS, 65_000
  };

  // --- generators ---

  private static Name randomName(SplittableRandom rnd, Name under) {
    int labels = rnd.nextInt(4);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < labels; i++) {
      int len = rnd.nextInt(10) == 0 ? 63 : 1 + rnd.nextInt(12);
      for (int j = 0; j < len; j++) {
        int c = rnd.nextInt(38);
        sb.append(c < 26 ? (char) ((rnd.nextBoolean() ? 'a' : 'A') + c) : c < 36 ? (char) ('0' + c - 26) : '-');
      }
      sb.append('.');
    }
    try {
      Name relative = sb.length() == 0 ? Name.empty : Name.fromString(sb.toString(), null);
      return Name.concatenate(relative, under);
    } catch (Exception e) {
      // Too long once concatenated: fall back to the suffix itself.
      return under;
    }
  }

  private static Name zone(SplittableRandom rnd) {
    Name test = Messages.name("example.test.");
    return rnd.nextInt(4) == 0 ? test : randomName(rnd, test);
  }

  private static byte[] query(SplittableRandom rnd, Name qname, int qtype, int qclass) {
    Message m = new Message(rnd.nextInt(0x10000));
    if (rnd.nextInt(4) != 0) {
      m.getHeader().setFlag(Flags.RD);
    }
    if (rnd.nextInt(4) == 0) {
      m.getHeader().setFlag(Flags.CD);
    }
    if (rnd.nextInt(20) == 0) {
      m.getHeader().setOpcode(1 + rnd.nextInt(15));
    }
    m.addRecord(Record.newRecord(qname, qtype, qclass), Section.QUESTION);
    if (rnd.nextInt(3) != 0) {
      int version = rnd.nextInt(15) == 0 ? 1 + rnd.nextInt(255) : 0;
      m.addRecord(new OPTRecord(rnd.nextInt(0x10000), 0, version, rnd.nextBoolean() ? ExtendedFlags.DO : 0),
          Section.ADDITIONAL);
    }
    return m.toWire();
  }

  private static Record randomRecord(SplittableRandom rnd, Name owner, Name zone) throws IOException {
    long ttl = rnd.nextInt(8) == 0 ? rnd.nextInt(5) : rnd.nextInt(100_000);
    Name target = randomName(rnd, zone);
    return switch (rnd.nextInt(10)) {
      case 0 -> new ARecord(owner, DClass.IN, ttl, InetAddress.getByAddress(new byte[] {
        (byte) rnd.nextInt(256), 0, 2, (byte) rnd.nextInt(256)}));
      case 1 -> new AAAARecord(owner, DClass.IN, ttl, InetAddress.getByName("2001:db8::" + Integer.toHexString(rnd.nextInt(0x10000))));
      case 2 -> new CNAMERecord(owner, DClass.IN, ttl, target);
      case 3 -> new TXTRecord(owner, DClass.IN, ttl, "t".repeat(rnd.nextInt(256)));
      case 4 -> new MXRecord(owner, DClass.IN, ttl, rnd.nextInt(100), target);
      case 5 -> new NSRecord(zone, DClass.IN, ttl, target);
      case 6 -> new SOARecord(zone, DClass.IN, ttl, target, randomName(rnd, zone),
          rnd.nextInt(1 << 30), 3600, 600, 86400, rnd.nextInt(4000));
      case 7 -> new SRVRecord(owner, DClass.IN, ttl, 1, 2, 53, target);
      case 8 -> new PTRRecord(owner, DClass.IN, ttl, target);
      default -> Record.newRecord(owner, 65_001, DClass.IN, ttl, new byte[rnd.nextInt(40)]);
    };
  }

  /** An upstream answer as a server could write it, plus what it holds. */
  private record Generated(byte[] wire, Name qname, int qtype, boolean hasTopBitTtl) {}

  /**
   * Writes the answer by hand so the OPT can sit anywhere in the additional section (dnsjava
   * always writes it last) and owner names are compressed against every earlier name.
   */
  private static Generated upstreamAnswer(SplittableRandom rnd) throws IOException {
    Name zone = zone(rnd);
    Name qname = randomName(rnd, zone);
    int qtype = QTYPES[rnd.nextInt(9)];
    int[] rcodes = {Rcode.NOERROR, Rcode.NOERROR, Rcode.NOERROR, Rcode.NXDOMAIN, Rcode.SERVFAIL, Rcode.REFUSED};
    int rcode = rcodes[rnd.nextInt(rcodes.length)];
    List<List<Record>> sections = new ArrayList<>();
    for (int s = 0; s < 3; s++) {
      List<Record> records = new ArrayList<>();
      int n = rnd.nextInt(s == 0 ? 6 : 3);
      for (int i = 0; i < n; i++) {
        Name owner = rnd.nextBoolean() ? qname : randomName(rnd, zone);
        records.add(randomRecord(rnd, owner, zone));
      }
      sections.add(records);
    }
    int optAt = rnd.nextInt(3) == 0 ? -1 : rnd.nextInt(sections.get(2).size() + 1);
    boolean topBit = rnd.nextInt(10) == 0;

    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Map<String, Integer> names = new HashMap<>();
    int flags = 0x8000 | 0x0080 | (rnd.nextBoolean() ? 0x0400 : 0) | (rnd.nextBoolean() ? 0x0100 : 0) | rcode;
    int ar = sections.get(2).size() + (optAt >= 0 ? 1 : 0);
    int[] header = {rnd.nextInt(0x10000), flags, 1, sections.get(0).size(), sections.get(1).size(), ar};
    for (int v : header) {
      out.write(v >> 8);
      out.write(v);
    }
    writeName(out, qname, names);
    out.write(qtype >> 8);
    out.write(qtype);
    out.write(0);
    out.write(DClass.IN);
    boolean topBitWritten = false;
    for (int s = 0; s < 3; s++) {
      List<Record> records = sections.get(s);
      for (int i = 0; i <= records.size(); i++) {
        if (s == 2 && i == optAt) {
          byte[] options = rnd.nextBoolean() ? new byte[0]
              : new byte[] {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}; // a client COOKIE
          out.writeBytes(new byte[] {0, 0, 41, 0x10, 0, 0, 0, (byte) (rnd.nextBoolean() ? 0x80 : 0), 0});
          out.write(options.length >> 8);
          out.write(options.length);
          out.writeBytes(options);
        }
        if (i == records.size()) {
          break;
        }
        Record r = records.get(i);
        writeName(out, r.getName(), names);
        byte[] rdata = r.rdataToWireCanonical();
        long ttl = topBit && !topBitWritten ? 0x80000000L | r.getTTL() : r.getTTL();
        topBitWritten |= topBit;
        int[] fields = {r.getType(), r.getDClass()};
        for (int v : fields) {
          out.write(v >> 8);
          out.write(v);
        }
        out.writeBytes(new byte[] {(byte) (ttl >> 24), (byte) (ttl >> 16), (byte) (ttl >> 8), (byte) ttl});
        out.write(rdata.length >> 8);
        out.write(rdata.length);
        out.writeBytes(rdata);
      }
    }
    return new Generated(out.toByteArray(), qname, qtype, topBitWritten);
  }

  /** Writes {@code name}, as a pointer to the longest suffix already written when there is one. */
  private static void writeName(ByteArrayOutputStream out, Name name, Map<String, Integer> written) {
    for (int i = 0; i < name.labels() - 1; i++) {
      Name suffix = new Name(name, i);
      Integer at = written.get(suffix.toString().toLowerCase());
      if (at != null) {
        out.write(0xC0 | at >> 8);
        out.write(at);
        return;
      }
      if (out.size() < 0x3FFF) {
        written.put(suffix.toString().toLowerCase(), out.size());
      }
      byte[] label = name.getLabel(i);
      out.write(label, 0, label.length);
    }
    out.write(0);
  }

  /** One to three random damages: a byte changed, a cut, junk appended, a count or a pointer. */
  private static byte[] mutate(SplittableRandom rnd, byte[] wire) {
    byte[] w = wire.clone();
    int n = 1 + rnd.nextInt(3);
    for (int i = 0; i < n && w.length > 0; i++) {
      switch (rnd.nextInt(6)) {
        case 0 -> w[rnd.nextInt(w.length)] = (byte) rnd.nextInt(256);
        case 1 -> w = java.util.Arrays.copyOf(w, rnd.nextInt(w.length));
        case 2 -> {
          byte[] junk = new byte[1 + rnd.nextInt(20)];
          rnd.nextBytes(junk);
          byte[] longer = java.util.Arrays.copyOf(w, w.length + junk.length);
          System.arraycopy(junk, 0, longer, w.length, junk.length);
          w = longer;
        }
        case 3 -> {
          if (w.length >= 12) {
            w[4 + rnd.nextInt(8)] = (byte) rnd.nextInt(4);
          }
        }
        case 4 -> {
          if (w.length > 14) {
            int at = 12 + rnd.nextInt(w.length - 13);
            int target = rnd.nextInt(w.length + 4);
            w[at] = (byte) (0xC0 | target >> 8);
            w[at + 1] = (byte) target;
          }
        }
        default -> w[rnd.nextInt(w.length)] ^= (byte) (1 << rnd.nextInt(8));
      }
    }
    return w;
  }

  // --- properties ---

  @Test
  void queriesParseIntoAQueryOrADocumentedRejection() {
    runCases(0, (rnd, c) -> {
      Name qname = randomName(rnd, rnd.nextInt(8) == 0 ? Messages.name("bind.") : Messages.name("example.test."));
      int qclass = rnd.nextInt(8) == 0 ? DClass.CH : rnd.nextInt(20) == 0 ? DClass.HS : DClass.IN;
      byte[] packet = query(rnd, qname, QTYPES[rnd.nextInt(QTYPES.length)], qclass);
      if (rnd.nextBoolean()) {
        packet = mutate(rnd, packet);
      }
      if (rnd.nextInt(10) == 0) {
        packet = new byte[rnd.nextInt(80)];
        rnd.nextBytes(packet);
      }
      checkQuery(packet);
    });
  }

  private static void checkQuery(byte[] packet) throws Exception {
    DnsQuery q;
    try {
      q = DnsQuery.parse(packet, POLICY);
    } catch (BadQuery bad) {
      if (bad.dropped()) {
        assertNull(bad.reply());
        return;
      }
      byte[] reply = bad.reply();
      assertTrue(reply.length <= 512, "a reply made here fits any client: " + reply.length);
      Message m = new Message(reply);
      assertEquals(Messages.u16(packet, 0), m.getHeader().getID());
      assertTrue(m.getHeader().getFlag(Flags.QR));
      assertEquals(bad.rcode().orElseThrow(), m.getRcode());
      if (m.getOPT() != null) {
        assertEquals(0, m.getOPT().getVersion());
        assertTrue(m.getOPT().getOptions().isEmpty());
      }
      return;
    }
    byte[] keyName = java.util.Arrays.copyOf(q.key().bytes(), q.key().nameLength());
    Message asDnsjava = parseOrNull(packet);
    if (asDnsjava != null) {
      // dnsjava may refuse a damaged record further on that shoal only skips; the question is ours.
      assertArrayEquals(asDnsjava.getQuestion().getName().toWireCanonical(), keyName, "the key is the name, lower-cased");
    }
    assertTrue(q.udpLimit() >= 512 && q.udpLimit() <= POLICY.maxUdpSize());
    assertEquals(q.dnssecOk() ? CacheKey.FLAG_DO : 0, q.key().flags() & CacheKey.FLAG_DO);
    Message servfail = new Message(q.servfail());
    assertEquals(q.id(), servfail.getHeader().getID());
    assertEquals(q.edns(), servfail.getOPT() != null);
    Message upstream = new Message(q.upstreamQuery(0x4242));
    assertArrayEquals(keyName, upstream.getQuestion().getName().toWireCanonical());
    assertEquals(q.qtype(), upstream.getQuestion().getType());
  }

  @Test
  void upstreamAnswersAreRejectedOrCachedAndRenderedAsValidReplies() {
    int[] rendered = new int[2];
    runCases(1, (rnd, c) -> {
      Generated g = upstreamAnswer(rnd);
      boolean damaged = rnd.nextInt(3) == 0;
      byte[] wire = damaged ? mutate(rnd, g.wire()) : g.wire();
      rendered[damaged ? 1 : 0] += checkAnswer(rnd, wire, g, damaged);
    });
    // Guards against a generator whose answers all fail early, which would make this vacuous.
    assertTrue(rendered[0] > CASES, "replies rendered from well-formed answers: " + rendered[0]);
    assertTrue(rendered[1] > CASES / 20, "replies rendered from damaged answers that could be made valid: " + rendered[1]);
  }

  /** Checks one answer; returns how many replies were rendered from it. */
  private static int checkAnswer(SplittableRandom rnd, byte[] wire, Generated g, boolean damaged) throws Exception {
    try {
      ScannedAnswer.scan(wire);
    } catch (WireException expected) {
      // documented
    }
    ScannedAnswer clean;
    try {
      clean = ScannedAnswer.fromUpstream(wire);
    } catch (WireException e) {
      if (!damaged) {
        fail("a well-formed answer was rejected: " + e.getMessage());
      }
      return 0;
    }
    Message after = new Message(clean.wire());
    assertNull(after.getOPT(), "the upstream's OPT is removed");
    assertEquals(-1, clean.optStart());
    Message before = parseOrNull(wire);
    if (before != null) {
      for (int s : new int[] {Section.ANSWER, Section.AUTHORITY, Section.ADDITIONAL}) {
        List<Record> expected = before.getSection(s).stream().filter(r -> r.getType() != Type.OPT).toList();
        assertEquals(expected, after.getSection(s), "section " + s + " keeps its records");
      }
    }
    for (int off : clean.ttlOffsets()) {
      assertTrue(Messages.u32(clean.wire(), off) <= 0x7FFFFFFFL, "no top-bit TTL survives");
    }
    if (!damaged && g.hasTopBitTtl()) {
      assertEquals(0, clean.minTtl());
    }

    TtlRules rules = new TtlRules(rnd.nextInt(3) == 0 ? rnd.nextInt(100) : 0, 100 + rnd.nextInt(100_000), 900, 5);
    long seconds = rules.cacheSeconds(clean);
    CachedAnswer cached = seconds > 0
        ? rules.cachedAnswer(clean, NOW, seconds)
        : CachedAnswer.of(clean, NOW, NOW + 0xFFFF_FFFFL * 1000);
    ByteBuffer buf = ByteBuffer.allocate(cached.encodedSize());
    cached.encode(buf);
    buf.flip();
    CachedAnswer decoded = CachedAnswer.decode(buf);
    // The same answer as an earlier version stored it: the upstream's wire, OPT and all.
    ScannedAnswer raw = ScannedAnswer.scan(wire);
    CachedAnswer legacy = new CachedAnswer(wire, raw.ttlOffsets(), raw.optStart(), raw.optEnd(), NOW, NOW + 60_000);

    int rendered = 0;
    for (int i = 0; i < 3; i++) {
      DnsQuery q;
      try {
        q = DnsQuery.parse(clientQuery(rnd, g.qname(), Messages.u16(clean.wire(), 12 + g.qname().length())), POLICY);
      } catch (BadQuery notForTheCache) {
        return rendered; // damage turned the question into a zone transfer: never looked up
      }
      if (!ScannedAnswer.answers(clean.wire(), clean.wire().length, Messages.u16(clean.wire(), 0), q.key())) {
        return rendered; // damage changed the question: the upstream exchange would not have taken it
      }
      long now = NOW + rnd.nextInt(200_000);
      int[] limits = {512, q.udpLimit(), 65535, 12 + rnd.nextInt(2000)};
      int limit = limits[rnd.nextInt(limits.length)];
      byte[] reply = cached.render(q, now, limit);
      checkReply(q, reply, limit, after);
      rendered++;
      assertArrayEquals(reply, decoded.render(q, now, limit), "decode(encode(x)) renders as x");
      if (raw.end() != wire.length) {
        continue; // bytes after the last record: earlier versions kept them, nothing to compare
      }
      Message legacyMessage = new Message(legacy.render(q, now, limit));
      assertEquals(q.edns(), legacyMessage.getOPT() != null);
      if (legacyMessage.getOPT() != null) {
        assertTrue(legacyMessage.getOPT().getOptions().stream().allMatch(o -> o instanceof ExtendedErrorCodeOption e
            && e.getErrorCode() == 13), "an old entry's upstream OPT is not served");
      }
    }
    return rendered;
  }

  private static Message parseOrNull(byte[] wire) {
    try {
      return new Message(wire);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** A client's query for {@code qname} (random letter case), with or without EDNS, DO and CD. */
  private static byte[] clientQuery(SplittableRandom rnd, Name qname, int qtype) {
    StringBuilder sb = new StringBuilder();
    for (char ch : qname.toString().toCharArray()) {
      sb.append(rnd.nextBoolean() ? Character.toUpperCase(ch) : ch);
    }
    Message m = new Message(rnd.nextInt(0x10000));
    m.getHeader().setFlag(Flags.RD);
    if (rnd.nextBoolean()) {
      m.getHeader().setFlag(Flags.CD);
    }
    m.addRecord(Record.newRecord(Messages.name(sb.toString()), qtype, DClass.IN), Section.QUESTION);
    if (rnd.nextBoolean()) {
      m.addRecord(new OPTRecord(512 + rnd.nextInt(65_000), 0, 0, rnd.nextBoolean() ? ExtendedFlags.DO : 0),
          Section.ADDITIONAL);
    }
    return m.toWire();
  }

  private static void checkReply(DnsQuery q, byte[] reply, int limit, Message answer) throws Exception {
    Message m = new Message(reply);
    Message asked = new Message(q.packet());
    assertEquals(q.id(), m.getHeader().getID());
    assertTrue(m.getHeader().getFlag(Flags.QR));
    assertEquals(asked.getHeader().getFlag(Flags.CD), m.getHeader().getFlag(Flags.CD));
    assertEquals(asked.getHeader().getFlag(Flags.RD), m.getHeader().getFlag(Flags.RD));
    assertEquals(asked.getQuestion().getName().toString(), m.getQuestion().getName().toString(), "0x20 case");
    assertTrue(reply.length <= Math.max(limit, q.questionEnd() + 11), reply.length + " > " + limit);
    OPTRecord opt = m.getOPT();
    assertEquals(q.edns(), opt != null);
    if (opt != null) {
      assertEquals(0, opt.getVersion());
      assertEquals(DnsQuery.EDNS_UDP_SIZE, opt.getPayloadSize());
      if (m.getRcode() == Rcode.SERVFAIL && !m.getHeader().getFlag(Flags.TC)) {
        // A SERVFAIL served from the cache says so (RFC 8914 code 13), and nothing of the upstream's.
        assertEquals(List.of(13), opt.getOptions().stream().map(o -> ((ExtendedErrorCodeOption) o).getErrorCode()).toList());
      } else {
        assertTrue(opt.getOptions().isEmpty());
      }
      assertEquals(q.dnssecOk(), (opt.getFlags() & ExtendedFlags.DO) != 0);
    }
    if (m.getHeader().getFlag(Flags.TC) && reply.length <= q.questionEnd() + 11) {
      return; // truncated here: header, question and OPT only
    }
    assertEquals(answer.getHeader().getFlag(Flags.TC), m.getHeader().getFlag(Flags.TC), "TC only as the upstream set it");
    assertEquals(answer.getRcode(), m.getRcode());
    for (int s : new int[] {Section.ANSWER, Section.AUTHORITY}) {
      assertEquals(answer.getSection(s), m.getSection(s), "section " + s);
    }
    for (int s : new int[] {Section.ANSWER, Section.AUTHORITY, Section.ADDITIONAL}) {
      for (Record r : m.getSection(s)) {
        assertTrue(r.getType() == Type.OPT || r.getTTL() <= 0x7FFFFFFFL);
      }
    }
  }

  /** One property case: may throw only what the property says it may. */
  private interface Case {
    void run(SplittableRandom rnd, int index) throws Exception;
  }

  /** Runs {@link #CASES} cases from a seed per property, each bounded in time, the lot bounded too. */
  private static void runCases(int property, Case body) {
    long seed = SEED + property;
    assertTimeoutPreemptively(SUITE_LIMIT, () -> {
      SplittableRandom master = new SplittableRandom(seed);
      for (int i = 0; i < CASES; i++) {
        SplittableRandom rnd = master.split();
        long start = System.nanoTime();
        try {
          body.run(rnd, i);
        } catch (Throwable t) {
          throw new AssertionError("seed " + seed + ", case " + i + ": " + t, t);
        }
        long took = System.nanoTime() - start;
        assertFalse(took > CASE_LIMIT_NANOS, "seed " + seed + ", case " + i + " took " + took / 1_000_000 + " ms");
      }
    }, "the fuzz cases did not finish in " + SUITE_LIMIT);
  }

  @Test
  void theGeneratorMakesWhatItPromises() throws Exception {
    // Without this the properties above could pass on answers that never exercise the OPT.
    SplittableRandom rnd = new SplittableRandom(SEED);
    int optBeforeOthers = 0;
    int compressed = 0;
    for (int i = 0; i < 300; i++) {
      Generated g = upstreamAnswer(rnd);
      ScannedAnswer s = ScannedAnswer.scan(g.wire());
      if (s.optStart() >= 0 && s.optEnd() < g.wire().length) {
        optBeforeOthers++;
      }
      for (int b = 12; b < g.wire().length - 1; b++) {
        if ((g.wire()[b] & 0xC0) == 0xC0) {
          compressed++;
          break;
        }
      }
      assertNotNull(new Message(g.wire()).getQuestion());
    }
    assertTrue(optBeforeOthers > 30, "OPT before other records in " + optBeforeOthers + " of 300");
    assertTrue(compressed > 150, "compression in " + compressed + " of 300");
  }
}
