package io.shoal.recursion;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.RecursionSettings;
import io.shoal.config.UpstreamGroupSettings;
import io.shoal.metrics.RecursionMetrics;
import io.shoal.metrics.ServerMetrics;
import io.shoal.upstream.Upstream;
import io.shoal.upstream.UpstreamSelector;
import io.shoal.wire.DnsQuery;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The resolver over a small tree of in-process authorities (root, test., net., example.net.,
 * sub.test. behind a glueless delegation, a lame server): answers, denials, cross-zone CNAMEs,
 * glueless delegations, QNAME minimisation, and the limits ending in SERVFAIL with an EDE.
 */
class RecursiveUpstreamTest {
  static FakeAuthorities tree;
  static UpstreamSelector sockets;

  @BeforeAll
  static void start() throws Exception {
    tree = new FakeAuthorities(6);
    String soa = " SOA ns h 1 3600 600 86400 300\n";
    tree.server(1).zone(".", ". 300" + soa + ". 300 NS a.root.\na.root. 300 A " + tree.ip(1) + "\n"
        + "test. 300 NS ns1.test.\nns1.test. 300 A " + tree.ip(2) + "\n"
        + "net. 300 NS ns.net.\nns.net. 300 A " + tree.ip(3) + "\n");
    StringBuilder test = new StringBuilder("@ 300" + soa + "@ 300 NS ns1\nns1 300 A " + tree.ip(2) + "\n"
        + "www 300 A 192.0.2.1\nalias 300 CNAME www.example.net.\na.b.c 300 A 192.0.2.9\n"
        + "sub 300 NS ns.other.net.\nlame 300 NS ns.lame.net.\n"
        + "loopa 300 NS ns.loopb.test.\nloopb 300 NS ns.loopa.test.\n"
        + "chain0 300 CNAME chain1\n");
    for (int i = 1; i <= 14; i++) {
      test.append("chain").append(i).append(" 300 CNAME chain").append(i + 1).append("\n");
    }
    test.append("chain15 300 A 192.0.2.15\nshort0 300 CNAME short1\nshort1 300 A 192.0.2.16\n");
    for (int i = 1; i <= 20; i++) {
      test.append("nxns 300 NS n").append(i).append(".nowhere.net.\n");
    }
    tree.server(2).zone("test.", test.toString());
    tree.server(3).zone("net.", "@ 300" + soa + "@ 300 NS ns\nns 300 A " + tree.ip(3) + "\n"
        + "example 300 NS ns.example\nns.example 300 A " + tree.ip(4) + "\n"
        + "ns.other 300 A " + tree.ip(5) + "\nns.lame 300 A " + tree.ip(6) + "\n");
    tree.server(4).zone("example.net.", "@ 300" + soa + "@ 300 NS ns\nns 300 A " + tree.ip(4) + "\n"
        + "www 300 A 192.0.2.2\nout 300 CNAME www.test.\n"
        + "@ 300 DNSKEY 257 3 13 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==\n");
    tree.server(5).zone("sub.test.", "@ 300" + soa + "@ 300 NS ns.other.net.\nhost 300 A 192.0.2.3\n");
    tree.server(6).behaviour = FakeAuthorities.Behaviour.UPWARD;
    sockets = new UpstreamSelector(256, new ServerMetrics());
  }

  @AfterAll
  static void stop() {
    tree.close();
    sockets.close();
  }

  static RecursiveUpstream resolver(int maxQueries) {
    return resolver(maxQueries, true, UpstreamGroupSettings.Mode.RECURSIVE, List.of(), List.of());
  }

  static RecursiveUpstream resolver(int maxQueries, boolean queryLoopback, UpstreamGroupSettings.Mode mode,
      List<java.net.InetSocketAddress> servers, List<Name> stubZones) {
    return resolver(maxQueries, 30, 4, queryLoopback, mode, servers, stubZones);
  }

  static RecursiveUpstream resolver(int maxQueries, int maxReferrals, int maxGluelessDepth, boolean queryLoopback,
      UpstreamGroupSettings.Mode mode, List<java.net.InetSocketAddress> servers, List<Name> stubZones) {
    List<Record> hints = List.of(
        new NSRecord(Name.root, DClass.IN, 3600, name("a.root.")),
        new ARecord(name("a.root."), DClass.IN, 3600, address(tree.ip(1))));
    RecursionSettings s = new RecursionSettings(hints, "test hints", queryLoopback, true, maxQueries, 3, maxReferrals,
        11, maxGluelessDepth, 1000, 1000, Duration.ofSeconds(5));
    UpstreamGroupSettings g = new UpstreamGroupSettings("r", servers, Duration.ofMillis(500), 3,
        Duration.ofSeconds(1), Duration.ofSeconds(2), Map.of(), mode, s);
    return new RecursiveUpstream(g, stubZones, sockets, new RecursionMetrics(null), tree.port(),
        ForkJoinPool.commonPool());
  }

  @Test
  void withoutQueryLoopbackNoLoopbackAuthorityIsAsked() throws Exception {
    int before = tree.totalQueries();
    Message m = ask(resolver(64, false, UpstreamGroupSettings.Mode.RECURSIVE, List.of(), List.of()), "www.test.",
        Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertEquals(22, lastWhy.code());
    assertEquals(before, tree.totalQueries(), "no query reached a loopback authority");
  }

  @Test
  void aFlushForgetsTheDelegationsBelowTheName() throws Exception {
    RecursiveUpstream r = resolver(64);
    ask(r, "www.test.", Type.A);
    int root = tree.server(1).queries.get();
    ask(r, "www.test.", Type.TXT);
    assertEquals(root, tree.server(1).queries.get(), "warm: test. is known");
    assertTrue(r.flush(name("test.")) > 0);
    ask(r, "www.test.", Type.MX);
    assertTrue(tree.server(1).queries.get() > root, "after the flush the root is asked for test. again");
  }

  @Test
  void aKeySetAskedAgainComesFromWhatTheRecursionKeptUntilAFlush() throws Exception {
    RecursiveUpstream r = resolver(64);
    Message first = ask(r, "example.net.", Type.DNSKEY);
    assertEquals(1, first.getSection(Section.ANSWER).size(), "the zone's key set");
    int zone = tree.server(4).queries.get();
    int all = tree.totalQueries();
    // The validator asks for a zone's keys with every question its key cache cannot answer.
    Message again = ask(r, "example.net.", Type.DNSKEY);
    assertEquals(answers(first), answers(again));
    assertTrue(again.getSection(Section.ANSWER).get(0).getTTL() <= 300, "never a longer TTL than the zone's");
    assertEquals(zone, tree.server(4).queries.get(), "the key set's zone is not asked again");
    assertEquals(all, tree.totalQueries(), "no authority is asked again");
    assertTrue(r.flush(name("example.net.")) > 0);
    ask(r, "example.net.", Type.DNSKEY);
    assertTrue(tree.server(4).queries.get() > zone, "after the flush the zone is asked for its keys again");
  }

  @Test
  void aCnameFollowedOnceIsNotAskedForAgainForAnotherType() throws Exception {
    RecursiveUpstream r = resolver(64);
    assertEquals(List.of("alias.test. CNAME www.example.net.", "www.example.net. A 192.0.2.2"),
        answers(ask(r, "alias.test.", Type.A)));
    int test = tree.server(2).queries.get();
    Message txt = ask(r, "alias.test.", Type.TXT);
    assertEquals(List.of("alias.test. CNAME www.example.net."), answers(txt));
    assertEquals(test, tree.server(2).queries.get(), "the link's zone is not asked again, only its target's");
  }

  @Test
  void aStubZoneGoesToItsServersAndWhatLeavesItIsResolvedFromTheRoot() throws Exception {
    int root = tree.server(1).queries.get();
    java.net.InetSocketAddress stubServer = new java.net.InetSocketAddress(tree.ip(4), tree.port());
    RecursiveUpstream r = resolver(64, false, UpstreamGroupSettings.Mode.STUB, List.of(stubServer),
        List.of(name("example.net.")));
    assertEquals(List.of("www.example.net. A 192.0.2.2"), answers(ask(r, "www.example.net.", Type.A)));
    assertEquals(root, tree.server(1).queries.get(), "a stub zone's names never start at the root");
    // query_loopback is off here: the named stub server is asked, the tree's loopback root is not.
    Message out = ask(r, "out.example.net.", Type.A);
    assertEquals(Rcode.SERVFAIL, out.getRcode(), "the CNAME target is resolved from the root, which is on loopback");
    RecursiveUpstream open = resolver(64, true, UpstreamGroupSettings.Mode.STUB, List.of(stubServer),
        List.of(name("example.net.")));
    assertEquals(List.of("out.example.net. CNAME www.test.", "www.test. A 192.0.2.1"),
        answers(ask(open, "out.example.net.", Type.A)));
  }

  static Name name(String s) {
    try {
      return Name.fromString(s);
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  static java.net.InetAddress address(String ip) {
    try {
      return java.net.InetAddress.getByName(ip);
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  static Message ask(Upstream u, String qname, int type) throws Exception {
    Message q = Message.newQuery(Record.newRecord(name(qname), type, DClass.IN));
    q.addRecord(new OPTRecord(1232, 0, 0, 0), Section.ADDITIONAL);
    Upstream.Outcome o = u.forward(DnsQuery.parse(q.toWire())).toCompletableFuture().get(10, TimeUnit.SECONDS);
    Upstream.Answered a = (Upstream.Answered) o;
    Message m = new Message(a.wire());
    if (a.why() != null) {
      // Keep the EDE where a test can read it: the worker adds it to the client's reply.
      m.getHeader().setFlag(Flags.TC);
      lastWhy = a.why();
    } else {
      lastWhy = null;
    }
    return m;
  }

  static io.shoal.wire.ExtendedError lastWhy;

  static List<String> answers(Message m) {
    return m.getSection(Section.ANSWER).stream().map(r -> r.getName() + " " + Type.string(r.getType()) + " "
        + r.rdataToString()).toList();
  }

  @Test
  void resolvesANameTwoDelegationsDown() throws Exception {
    RecursiveUpstream r = resolver(64);
    Message m = ask(r, "www.test.", Type.A);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertEquals(List.of("www.test. A 192.0.2.1"), answers(m));
    assertTrue(m.getHeader().getFlag(Flags.RA));
    assertTrue(!m.getHeader().getFlag(Flags.AA), "a resolver's answer is not authoritative");
  }

  @Test
  void followsACnameIntoAnotherZone() throws Exception {
    Message m = ask(resolver(64), "alias.test.", Type.A);
    assertEquals(List.of("alias.test. CNAME www.example.net.", "www.example.net. A 192.0.2.2"), answers(m));
  }

  @Test
  void resolvesTheServerNameOfAGluelessDelegation() throws Exception {
    Message m = ask(resolver(64), "host.sub.test.", Type.A);
    assertEquals(List.of("host.sub.test. A 192.0.2.3"), answers(m));
    assertTrue(tree.server(3).asked("ns.other.net.", Type.A) > 0, "the NS name was looked up in net.");
  }

  @Test
  void nxdomainAndNodataCarryTheSoa() throws Exception {
    RecursiveUpstream r = resolver(64);
    Message nx = ask(r, "nothing.test.", Type.A);
    assertEquals(Rcode.NXDOMAIN, nx.getRcode());
    assertEquals(Type.SOA, nx.getSection(Section.AUTHORITY).get(0).getType());
    Message nodata = ask(r, "www.test.", Type.TXT);
    assertEquals(Rcode.NOERROR, nodata.getRcode());
    assertTrue(nodata.getSection(Section.ANSWER).isEmpty());
    assertEquals(Type.SOA, nodata.getSection(Section.AUTHORITY).get(0).getType());
  }

  @Test
  void minimisesTheNameAndPassesEmptyNonTerminals() throws Exception {
    Message m = ask(resolver(64), "a.b.c.test.", Type.A);
    assertEquals(List.of("a.b.c.test. A 192.0.2.9"), answers(m));
    assertTrue(tree.server(1).asked("test.", Type.NS) > 0, "the root was asked for test. only");
    assertEquals(0, tree.server(1).asked("a.b.c.test.", Type.A), "the root never saw the full name");
    assertTrue(tree.server(2).asked("c.test.", Type.NS) > 0, "the empty non-terminal c.test. was asked as NS");
  }

  @Test
  void aWarmResolverGoesStraightToTheZone() throws Exception {
    RecursiveUpstream r = resolver(64);
    ask(r, "www.test.", Type.A);
    int rootBefore = tree.server(1).queries.get();
    Message m = ask(r, "www.test.", Type.AAAA);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertEquals(rootBefore, tree.server(1).queries.get(), "the delegation to test. was kept");
  }

  @Test
  void aLameServerEndsInServfailWithNoReachableAuthority() throws Exception {
    Message m = ask(resolver(64), "x.lame.test.", Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertEquals(22, lastWhy.code());
  }

  @Test
  void everyQuestionGoesOutInMixedCase() throws Exception {
    List<String> sent = new java.util.ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      tree.server(i).spellings.clear();
    }
    RecursiveUpstream r = resolver(64);
    for (String name : List.of("www.test.", "alias.test.", "a.b.c.test.", "host.sub.test.")) {
      assertEquals(Rcode.NOERROR, ask(r, name, Type.A).getRcode(), name);
    }
    for (int i = 1; i <= 5; i++) {
      sent.addAll(tree.server(i).spellings);
    }
    String letters = String.join("", sent).replaceAll("[^A-Za-z]", "");
    // Each letter's case is a coin toss (0x20): over this many letters both cases must show up.
    assertTrue(letters.length() >= 60, "letters asked: " + sent);
    assertTrue(letters.chars().anyMatch(Character::isUpperCase), "no upper case in " + sent);
    assertTrue(letters.chars().anyMatch(Character::isLowerCase), "no lower case in " + sent);
  }

  @Test
  void aLongCnameChainStopsAtTheLinkLimit() throws Exception {
    RecursiveUpstream r = resolver(64);
    Message ok = ask(r, "short0.test.", Type.A);
    assertEquals(Rcode.NOERROR, ok.getRcode());
    Message m = ask(r, "chain0.test.", Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertTrue(lastWhy.text().contains("CNAME"), lastWhy.text());
  }

  @Test
  void anNxnsReferralLooksUpAtMostThreeNames() throws Exception {
    int before = tree.server(3).queries.get();
    Message m = ask(resolver(64), "victim.nxns.test.", Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertTrue(lastWhy.text().contains("name servers"), lastWhy.text());
    int sent = tree.server(3).queries.get() - before;
    assertTrue(sent <= 3 * 2, "net. was asked " + sent + " times for 20 NS names");
  }

  @Test
  void aDependencyLoopEndsInServfail() throws Exception {
    Message m = ask(resolver(64), "x.loopa.test.", Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
  }

  @Test
  void theQueryBudgetStopsAResolution() throws Exception {
    Message m = ask(resolver(4), "host.sub.test.", Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertTrue(lastWhy.text().contains("authority queries"), lastWhy.text());
  }

  @Test
  void theReferralLimitStopsAResolution() throws Exception {
    // host.sub.test. takes three referrals: the root's to test., test.'s to sub.test., and for the
    // address of sub.test.'s glueless server ns.other.net. the root's to net.
    RecursiveUpstream three = resolver(64, 3, 4, true, UpstreamGroupSettings.Mode.RECURSIVE, List.of(), List.of());
    assertEquals(Rcode.NOERROR, ask(three, "host.sub.test.", Type.A).getRcode());
    RecursiveUpstream two = resolver(64, 2, 4, true, UpstreamGroupSettings.Mode.RECURSIVE, List.of(), List.of());
    Message m = ask(two, "host.sub.test.", Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertTrue(lastWhy.text().contains("more than 2 referrals"), lastWhy.text());
  }

  @Test
  void theGluelessDepthLimitStopsANameServerLookUp() throws Exception {
    // sub.test.'s only server, ns.other.net., has no glue in test.: its address is a look-up of its own.
    RecursiveUpstream flat = resolver(64, 30, 0, true, UpstreamGroupSettings.Mode.RECURSIVE, List.of(), List.of());
    Message m = ask(flat, "host.sub.test.", Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertTrue(lastWhy.text().contains("nested deeper than 0"), lastWhy.text());
    RecursiveUpstream nested = resolver(64, 30, 1, true, UpstreamGroupSettings.Mode.RECURSIVE, List.of(), List.of());
    assertEquals(Rcode.NOERROR, ask(nested, "host.sub.test.", Type.A).getRcode());
  }
}
