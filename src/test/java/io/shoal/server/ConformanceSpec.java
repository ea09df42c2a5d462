package io.shoal.server;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestAuthServer.Mode;
import io.shoal.testing.TestNode;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.util.HashSet;
import java.util.Set;
import java.util.Arrays;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/**
 * Protocol conformance end to end, shoal in front of a test authoritative server that answers
 * some names unusually or wrongly: EDNS (version, DO, per-hop OPT), CD, per-record TTLs, top-bit
 * TTLs, class CH, the UDP reply cap, and upstream answers that must be rewritten or refused.
 */
public class ConformanceSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    for (String n : new String[] {"cd", "cookie", "refused", "topbit", "optfirst", "selfpointer", "silent", "badvers", "pipe0",
        "pipe1", "pipe2", "pipe3"}) {
      auth.add(a(n + ".example.test.", 60));
    }
    auth.add(cname("chain.example.test.", 3600, "c2.example.test."))
        .add(cname("c2.example.test.", 1800, "c3.example.test."))
        .add(cname("c3.example.test.", 900, "c4.example.test."))
        .add(a("c4.example.test.", 600));
    auth.add(txt("big.example.test.", 12));
    auth.add(txt("medium.example.test.", 7));
    auth.mode("cookie.example.test.", Mode.COOKIE)
        .mode("refused.example.test.", Mode.REFUSED)
        .mode("topbit.example.test.", Mode.TOP_BIT_TTL)
        .mode("optfirst.example.test.", Mode.OPT_FIRST)
        .mode("selfpointer.example.test.", Mode.SELF_POINTER)
        .mode("silent.example.test.", Mode.SILENT);
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.max_udp_size = 2000",
        "shoal.chaos.identity = \"shoal-e2e\""));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private static ARecord a(String name, long ttl) throws Exception {
    return new ARecord(TestAuthServer.name(name), DClass.IN, ttl, InetAddress.getByName("192.0.2.1"));
  }

  private static CNAMERecord cname(String name, long ttl, String target) {
    return new CNAMERecord(TestAuthServer.name(name), DClass.IN, ttl, TestAuthServer.name(target));
  }

  /** TXT of {@code chunks} strings of 200 bytes. */
  private static TXTRecord txt(String name, int chunks) {
    String[] strings = new String[chunks];
    Arrays.fill(strings, "x".repeat(200));
    return new TXTRecord(TestAuthServer.name(name), DClass.IN, 60, Arrays.asList(strings));
  }

  /** A query with EDNS (1232 bytes) and DO as given. */
  private static Message edns(int id, String name, int type, boolean dnssecOk) {
    Message m = DnsClient.query(id, name, type, null);
    m.addRecord(new OPTRecord(1232, 0, 0, dnssecOk ? ExtendedFlags.DO : 0), Section.ADDITIONAL);
    return m;
  }

  private static Message udp(Message query) throws Exception {
    return DnsClient.udp(node.udp(), query);
  }

  /** Asserts shoal's own OPT: version 0, shoal's UDP size, the client's DO, no options. */
  private static void assertShoalsOpt(Message reply, boolean dnssecOk) {
    assertShoalsOpt(reply, dnssecOk, -1);
  }

  /** As above, with shoal's own extended DNS error {@code ede} as the one option (-1: none). */
  private static void assertShoalsOpt(Message reply, boolean dnssecOk, int ede) {
    OPTRecord opt = reply.getOPT();
    assertNotNull("an EDNS client gets an OPT", opt);
    assertEquals(0, opt.getVersion());
    assertEquals(1232, opt.getPayloadSize());
    assertEquals(dnssecOk ? ExtendedFlags.DO : 0, opt.getFlags() & ExtendedFlags.DO);
    if (ede < 0) {
      assertTrue("no option of the upstream's: " + opt.getOptions(), opt.getOptions().isEmpty());
    } else {
      assertEquals("shoal's extended error only: " + opt.getOptions(), 1, opt.getOptions().size());
      assertEquals(ede, ((org.xbill.DNS.ExtendedErrorCodeOption) opt.getOptions().get(0)).getErrorCode());
    }
  }

  // --- TCP (RFC 7766) ---

  /**
   * More queries than one connection takes in flight at once (32), written in one go and followed
   * by the client's half-close: every one is answered, misses and hits alike, before the close.
   */
  @Test
  public void pipelinedQueriesThenAHalfCloseAreAllAnswered() throws Exception {
    String[] names = {"pipe0", "pipe1", "pipe2", "pipe3"};
    int count = 100;
    try (Socket s = new Socket()) {
      s.connect(node.tcp(), 2000);
      s.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      for (int id = 1; id <= count; id++) {
        byte[] q = DnsClient.query(id, names[id % names.length] + ".example.test.", Type.A, null).toWire();
        out.writeShort(q.length);
        out.write(q);
      }
      out.flush();
      s.shutdownOutput();
      DataInputStream in = new DataInputStream(s.getInputStream());
      Set<Integer> answered = new HashSet<>();
      for (int i = 0; i < count; i++) {
        Message reply = new Message(in.readNBytes(in.readUnsignedShort()));
        assertEquals(Rcode.NOERROR, reply.getRcode());
        answered.add(reply.getHeader().getID());
      }
      assertEquals("every query answered once", count, answered.size());
      assertEquals("then the connection closes", -1, in.read());
    }
  }

  // --- EDNS version ---

  @Test
  public void ednsVersion1GetsBadversAndIsNotForwarded() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_queries_total", "rcode=\"BADVERS\"", "transport=\"udp\"");
    Message q = DnsClient.query(0x1001, "badvers.example.test.", Type.A, null);
    q.addRecord(new OPTRecord(1232, 0, 1, ExtendedFlags.DO), Section.ADDITIONAL);

    Message reply = udp(q);

    assertEquals(Rcode.BADVERS, reply.getRcode());
    assertTrue(reply.getSection(Section.ANSWER).isEmpty());
    assertEquals(0, reply.getOPT().getVersion());
    assertEquals(ExtendedFlags.DO, reply.getOPT().getFlags() & ExtendedFlags.DO);
    assertEquals(0, auth.queries("badvers.example.test.", Type.A));
    assertEquals("counted as BADVERS, not NOERROR", before + 1,
        metrics.await(v -> v >= before + 1, "shoal_queries_total", "rcode=\"BADVERS\"", "transport=\"udp\""), 0.0);
  }

  // --- CD ---

  @Test
  public void theReplyCopiesTheClientsCdOnAMissAndOnAHit() throws Exception {
    for (int i = 0; i < 2; i++) {
      Message q = DnsClient.query(0x1100 + i, "cd.example.test.", Type.A, null);
      q.getHeader().setFlag(Flags.CD);

      Message reply = udp(q);

      assertEquals(Rcode.NOERROR, reply.getRcode());
      assertTrue("query " + i + ": CD echoed though the upstream did not", reply.getHeader().getFlag(Flags.CD));
    }
    assertEquals("the second was a hit", 1, auth.queries("cd.example.test.", Type.A));
    assertFalse(udp(DnsClient.query(0x1102, "cd.example.test.", Type.A, null)).getHeader().getFlag(Flags.CD));
  }

  // --- DO in replies shoal makes itself ---

  @Test
  public void servfailAndRefusedCarryTheClientsDo() throws Exception {
    Message servfail = udp(edns(0x1201, "silent.example.test.", Type.A, true));
    assertEquals(Rcode.SERVFAIL, servfail.getRcode());
    assertShoalsOpt(servfail, true, 22);

    Message refused = udp(edns(0x1202, "example.test.", Type.AXFR, true));
    assertEquals(Rcode.REFUSED, refused.getRcode());
    assertShoalsOpt(refused, true);
  }

  // --- the upstream's OPT is per hop ---

  @Test
  public void theUpstreamsOptIsNeverForwardedOrServedFromCache() throws Exception {
    Message miss = udp(edns(0x1301, "cookie.example.test.", Type.A, true));
    Message hit = udp(edns(0x1302, "cookie.example.test.", Type.A, true));
    assertEquals("the second was a hit", 1, auth.queries("cookie.example.test.", Type.A));
    Message plain = udp(DnsClient.query(0x1303, "cookie.example.test.", Type.A, null));

    assertShoalsOpt(miss, true);
    assertShoalsOpt(hit, true);
    assertNull("no OPT for a client without EDNS", plain.getOPT());
    assertEquals(1, hit.getSection(Section.ANSWER).size());
    assertShoalsOpt(udp(edns(0x1304, "cookie.example.test.", Type.A, false)), false);
  }

  @Test
  public void anUpstreamsExtendedErrorIsNotPassedOn() throws Exception {
    Message reply = udp(edns(0x1305, "refused.example.test.", Type.A, false));

    // The upstream's REFUSED carries its own extended error; the client gets shoal's only.
    assertEquals(Rcode.SERVFAIL, reply.getRcode());
    assertShoalsOpt(reply, false, 22);
  }

  // --- top-bit TTL ---

  @Test
  public void aTtlWithTheTopBitSetReachesTheClientAsZero() throws Exception {
    Message reply = udp(DnsClient.query(0x1401, "topbit.example.test.", Type.A, null));

    assertEquals(Rcode.NOERROR, reply.getRcode());
    assertEquals(0, reply.getSection(Section.ANSWER).get(0).getTTL());
  }

  // --- NOTIMP and FORMERR echo question and OPT ---

  @Test
  public void notimpAndFormerrCarryTheQuestionAndAnOpt() throws Exception {
    Message notify = edns(0x1501, "example.test.", Type.SOA, true);
    notify.getHeader().setOpcode(Opcode.NOTIFY);
    Message notimp = udp(notify);
    assertEquals(Rcode.NOTIMP, notimp.getRcode());
    assertEquals(TestAuthServer.name("example.test."), notimp.getQuestion().getName());
    assertShoalsOpt(notimp, true);

    // A readable question and OPT, then a second OPT: FORMERR.
    Message twoOpts = edns(0x1502, "example.test.", Type.A, false);
    twoOpts.addRecord(new OPTRecord(4096, 0, 0, 0), Section.ADDITIONAL);
    Message formerr = udp(twoOpts);
    assertEquals(Rcode.FORMERR, formerr.getRcode());
    assertEquals(TestAuthServer.name("example.test."), formerr.getQuestion().getName());
    assertNotNull(formerr.getOPT());
  }

  // --- class CH ---

  @Test
  public void classChIsAnsweredHereAndNeverForwarded() throws Exception {
    Message id = udp(chaos(0x1601, "id.server."));
    Message version = udp(chaos(0x1602, "version.bind."));

    assertEquals(Rcode.NOERROR, id.getRcode());
    assertEquals(List.of("shoal-e2e"), ((TXTRecord) id.getSection(Section.ANSWER).get(0)).getStrings());
    assertEquals("no version configured: refused", Rcode.REFUSED, version.getRcode());
    assertEquals(0, auth.queries("id.server.", Type.TXT));
    assertEquals(0, auth.queries("version.bind.", Type.TXT));
  }

  private static Message chaos(int id, String name) {
    Message m = new Message(id);
    m.addRecord(Record.newRecord(TestAuthServer.name(name), Type.TXT, DClass.CH), Section.QUESTION);
    return m;
  }

  // --- each record its own TTL ---

  @Test
  public void eachRecordOfACnameChainKeepsItsOwnTtl() throws Exception {
    Message first = udp(DnsClient.query(0x1701, "chain.example.test.", Type.A, null));
    assertEquals(List.of(3600L, 1800L, 900L, 600L), ttls(first));

    node.advanceSeconds(100);
    Message hit = udp(DnsClient.query(0x1702, "chain.example.test.", Type.A, null));
    assertEquals(List.of(3500L, 1700L, 800L, 500L), ttls(hit));
    assertEquals(1, auth.queries("chain.example.test.", Type.A));

    node.advanceSeconds(500);
    udp(DnsClient.query(0x1703, "chain.example.test.", Type.A, null));
    assertEquals("the entry expires with its smallest TTL", 2, auth.queries("chain.example.test.", Type.A));
  }

  private static List<Long> ttls(Message m) {
    return m.getSection(Section.ANSWER).stream().map(Record::getTTL).toList();
  }

  // --- UDP replies capped at listen.max_udp_size ---

  @Test
  public void udpRepliesAreCappedWhateverTheClientAdvertises() throws Exception {
    // 2.4 KB of TXT to a client advertising 65535, with the cap at 2000: truncated.
    Message big = DnsClient.udp(node.udp(), DnsClient.query(0x1801, "big.example.test.", Type.TXT, 65535));
    assertTrue(big.getHeader().getFlag(Flags.TC));
    assertTrue(big.getSection(Section.ANSWER).isEmpty());
    // 1.4 KB fits under the cap, though not under 1232.
    Message medium = DnsClient.udp(node.udp(), DnsClient.query(0x1802, "medium.example.test.", Type.TXT, 65535));
    assertFalse(medium.getHeader().getFlag(Flags.TC));
    assertEquals(1, medium.getSection(Section.ANSWER).size());
    assertTrue(DnsClient.udp(node.udp(), DnsClient.query(0x1803, "medium.example.test.", Type.TXT, 1232))
        .getHeader().getFlag(Flags.TC));
    // TCP carries it all.
    Message tcp = DnsClient.tcp(node.tcp(), DnsClient.query(0x1804, "big.example.test.", Type.TXT, 65535));
    assertFalse(tcp.getHeader().getFlag(Flags.TC));
    assertEquals(1, tcp.getSection(Section.ANSWER).size());
  }

  // --- answers that must be rewritten, or refused ---

  @Test
  public void anOptBeforeOtherAdditionalRecordsIsRemovedWithoutBreakingThem() throws Exception {
    Message plain = udp(DnsClient.query(0x1901, "optfirst.example.test.", Type.A, null));
    Message withEdns = udp(edns(0x1902, "optfirst.example.test.", Type.A, false));

    for (Message reply : new Message[] {plain, withEdns}) {
      List<Record> glue = reply.getSection(Section.ADDITIONAL).stream().filter(r -> r.getType() != Type.OPT).toList();
      assertEquals(2, glue.size());
      assertEquals(TestAuthServer.name("ns.optfirst.example.test."), glue.get(0).getName());
      assertEquals(TestAuthServer.name("ns.optfirst.example.test."), glue.get(1).getName());
      assertEquals("2001:db8:0:0:0:0:0:53", ((AAAARecord) glue.get(1)).getAddress().getHostAddress());
    }
    assertNull(plain.getOPT());
    assertShoalsOpt(withEdns, false);
  }

  @Test
  public void anAnswerWithACompressionLoopIsServfailCountedAndNotCached() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"bad_upstream_answer\"");

    Message first = udp(DnsClient.query(0x1A01, "selfpointer.example.test.", Type.A, null));
    Message second = udp(DnsClient.query(0x1A02, "selfpointer.example.test.", Type.A, null));

    assertEquals(Rcode.SERVFAIL, first.getRcode());
    assertEquals(Rcode.SERVFAIL, second.getRcode());
    assertEquals("never cached", 2, auth.queries("selfpointer.example.test.", Type.A));
    double after = metrics.await(v -> v >= before + 2, "shoal_dropped_total", "reason=\"bad_upstream_answer\"");
    assertEquals(before + 2, after, 0.0);
  }
}
