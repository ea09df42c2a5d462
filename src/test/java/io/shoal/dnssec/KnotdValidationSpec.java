package io.shoal.dnssec;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.study.host.Prerequisites;
import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.study.server.KnotdZones;
import io.shoal.study.server.KnotdZones.Signing;
import io.shoal.testing.TestNode;
import io.shoal.testing.UnboundValidator;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.DNSKEYRecord;
import org.xbill.DNS.DNSSEC;
import org.xbill.DNS.DSRecord;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * DNSSEC validation against a real signer and a real peer validator. knotd signs the zones itself
 * (keys it makes at start, ECDSA P-256): {@code sec.test.} with NSEC, its child {@code
 * n3.sec.test.} with NSEC3 (DS in the parent), an unsigned child {@code insecure.sec.test.} (a
 * delegation without DS), a signed child {@code nokey.sec.test.} whose DS in the parent matches
 * none of its keys, and {@code forged.test.}, of which a second knotd (signing off) serves a copy
 * with one record edited after signing. The trust anchors are {@code keymgr ZONE ds} of sec.test.
 * and forged.test. Every question goes to shoal and to Unbound's validator set up alike (same
 * anchors, forwarding to the same knotd servers), and both must give the client the same rcode,
 * AD bit and extended DNS error, which is also the one RFC 4035 and RFC 8914 ask for.
 */
public class KnotdValidationSpec extends JUnitSuite {
  private static final AtomicInteger ids = new AtomicInteger();
  /** How far the clock of the expiry checks runs ahead: past knotd's 14-day signature lifetime. */
  private static final Duration AHEAD = Duration.ofDays(30);

  private static Path dir;
  private static KnotdZones signer;
  private static KnotdZones forgedCopy;
  private static TestNode shoal;
  private static TestNode shoalNta;
  private static TestNode shoalLate;
  private static UnboundValidator unbound;
  private static UnboundValidator unboundNta;
  private static UnboundValidator unboundLate;

  @BeforeClass
  public static void start() throws Exception {
    for (String tool : List.of("knotd", "knotc", "keymgr", "unbound")) {
      if (Prerequisites.find(tool).isEmpty()) {
        String msg = "KnotdValidationSpec CANCELED: " + tool + " is not installed. Install it with: "
            + "apt-get install -y knot unbound (.ci/run does this)";
        System.err.println("\n*** " + msg + " ***\n");
        Assume.assumeTrue(msg, false);
      }
    }
    dir = Files.createTempDirectory("shoal-knotd-dnssec");
    Files.createDirectories(dir.resolve("signer"));
    signer = KnotdZones.builder()
        .zone("sec.test.", Signing.NSEC,
            "ns A 127.0.0.1", "www A 192.0.2.1", "*.wild A 192.0.2.8", "alias CNAME www",
            "n3 NS ns.n3", "ns.n3 A 127.0.0.1",
            "insecure NS ns.insecure", "ns.insecure A 127.0.0.1",
            "nokey NS ns.nokey", "ns.nokey A 127.0.0.1",
            "baddigest NS ns.baddigest", "ns.baddigest A 127.0.0.1")
        .zone("n3.sec.test.", Signing.NSEC3, "ns A 127.0.0.1", "www A 192.0.2.3", "*.wild A 192.0.2.9",
            "a.ent A 192.0.2.10", "plain NS ns.plain", "ns.plain A 127.0.0.1")
        .zone("plain.n3.sec.test.", Signing.OFF, "ns A 127.0.0.1", "www A 192.0.2.11")
        .zone("insecure.sec.test.", Signing.OFF, "ns A 127.0.0.1", "www A 192.0.2.5")
        .zone("nokey.sec.test.", Signing.NSEC, "ns A 127.0.0.1", "www A 192.0.2.6", "cd A 192.0.2.6")
        .zone("baddigest.sec.test.", Signing.NSEC, "ns A 127.0.0.1", "www A 192.0.2.12")
        .zone("forged.test.", Signing.NSEC, "ns A 127.0.0.1", "www A 192.0.2.4", "cd A 192.0.2.4", "plain A 192.0.2.4",
            "good A 192.0.2.7")
        .start(dir.resolve("signer"));

    // The chain: n3's real DS, and for nokey a DS of a key the child does not have.
    List<String> ds = new ArrayList<>();
    for (DSRecord r : signer.ds("n3.sec.test.")) {
      ds.add(r.toString());
    }
    ds.add(foreignDs("nokey.sec.test.").toString());
    // For baddigest, the DS of its real key with one digest byte changed: key tag and algorithm match.
    for (DSRecord r : signer.ds("baddigest.sec.test.")) {
      byte[] digest = r.getDigest().clone();
      digest[digest.length - 1] ^= 0x01;
      ds.add(new DSRecord(r.getName(), r.getDClass(), r.getTTL(), r.getFootprint(), r.getAlgorithm(), r.getDigestID(),
          digest).toString());
    }
    signer.add("sec.test.", ds);
    Message delegated = Await.value(Duration.ofSeconds(10), () -> signer.ask(Name.fromString("n3.sec.test."), Type.DS),
        m -> m != null && m.getSection(Section.ANSWER).stream().anyMatch(r -> r.getType() == Type.RRSIG));
    assertTrue("knotd serves the signed DS of n3.sec.test.: " + delegated,
        delegated != null && delegated.getSection(Section.ANSWER).stream().anyMatch(r -> r.getType() == Type.RRSIG));

    Path secAnchor = signer.writeAnchor("sec.test.", dir.resolve("sec.test.ds"));
    Path forgedAnchor = signer.writeAnchor("forged.test.", dir.resolve("forged.test.ds"));

    // A copy of the signed forged.test. with three addresses changed after signing, served as it is.
    // One name per case, so no case asks a name another asked: what a validator says of a name it has
    // cached as bogus is another matter (Unbound then says 6 without reason).
    String signed = signer.signedZoneText("forged.test.");
    Pattern record = Pattern.compile(
        "(?m)^((?:www|cd|plain)\\.forged\\.test\\.\\s+\\d+\\s+(?:IN\\s+)?A\\s+)192\\.0\\.2\\.4[ \\t]*$");
    assertEquals("www, cd and plain.forged.test. A 192.0.2.4 to edit in the signed zone file:\n" + signed, 3,
        record.matcher(signed).results().count());
    String edited = record.matcher(signed).replaceAll("$1192.0.2.66");
    Files.createDirectories(dir.resolve("forged-copy"));
    forgedCopy = KnotdZones.builder().zoneFile("forged.test.", Signing.OFF, edited).start(dir.resolve("forged-copy"));

    String anchors = "shoal.dnssec.trust_anchors = [\"" + secAnchor + "\", \"" + forgedAnchor + "\"]\n"
        + "shoal.upstreams.default.timeout = 2s\n"
        + "shoal.upstreams.forged { servers = [\"" + forgedCopy.hostPort() + "\"], timeout = 2s }\n"
        + "shoal.profiles.forged { match = [\"forged.test.\"], cache = answers, upstreams = forged }\n";
    shoal = TestNode.start(signer.hostPort(), anchors + "shoal.dnssec.validation = on");
    shoalNta = TestNode.start(signer.hostPort(), anchors + "shoal.dnssec.validation = on\n"
        + "shoal.dnssec.negative_trust_anchors = [\"forged.test\", \"nokey.sec.test\"]");
    shoalLate = TestNode.start(signer.hostPort(), anchors + "shoal.dnssec.validation = on");
    shoalLate.clock.addAndGet(AHEAD.toMillis());

    Map<String, String> forwards = Map.of("sec.test.", signer.hostPort(), "forged.test.", forgedCopy.hostPort());
    List<Path> anchorFiles = List.of(secAnchor, forgedAnchor);
    unbound = UnboundValidator.start(dir.resolve("unbound"), forwards, anchorFiles, List.of(), "sec.test.");
    // Unbound's negative trust anchor (domain-insecure) does not override a trust anchor for the same
    // name, as shoal's does: this one has no anchor for forged.test., which makes that zone insecure.
    unboundNta = UnboundValidator.start(dir.resolve("unbound-nta"), forwards, List.of(secAnchor),
        List.of("domain-insecure: \"forged.test.\"", "domain-insecure: \"nokey.sec.test.\""), "sec.test.");
    String later = DateTimeFormatter.ofPattern("yyyyMMddHHmmss").withZone(ZoneOffset.UTC)
        .format(Instant.now().plus(AHEAD));
    unboundLate = UnboundValidator.start(dir.resolve("unbound-late"), forwards, anchorFiles,
        List.of("val-override-date: \"" + later + "\""), "sec.test.");
  }

  /** The DS of a fresh ECDSA key that is not in {@code zone}: its key tag matches none of the zone's keys. */
  private static DSRecord foreignDs(String zone) throws Exception {
    Name apex = Name.fromString(zone);
    Message keys = signer.ask(apex, Type.DNSKEY);
    Set<Integer> tags = keys.getSection(Section.ANSWER).stream().filter(r -> r instanceof DNSKEYRecord)
        .map(r -> ((DNSKEYRecord) r).getFootprint()).collect(Collectors.toSet());
    assertTrue("knotd serves " + zone + " DNSKEY", !tags.isEmpty());
    KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
    gen.initialize(new ECGenParameterSpec("secp256r1"));
    for (int i = 0; i < 100; i++) {
      DNSKEYRecord key = new DNSKEYRecord(apex, DClass.IN, 300, 257, DNSKEYRecord.Protocol.DNSSEC,
          DNSSEC.Algorithm.ECDSAP256SHA256, gen.generateKeyPair().getPublic());
      if (!tags.contains(key.getFootprint())) {
        return new DSRecord(apex, DClass.IN, 300, DNSSEC.Digest.SHA256, key);
      }
    }
    throw new IllegalStateException("100 random keys all had key tags of " + zone);
  }

  @AfterClass
  public static void stop() throws Exception {
    for (AutoCloseable c : new AutoCloseable[] {shoal, shoalNta, shoalLate, unbound, unboundNta, unboundLate,
        forgedCopy, signer}) {
      if (c != null) {
        c.close();
      }
    }
    if (dir != null) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** What a client sees of a verdict: rcode, AD, and the extended DNS error's code (null: none). */
  record Seen(int rcode, boolean ad, Integer ede) {
    static Seen of(Message m) {
      Integer code = null;
      OPTRecord opt = m.getOPT();
      if (opt != null) {
        for (EDNSOption o : opt.getOptions()) {
          if (o instanceof ExtendedErrorCodeOption e) {
            code = e.getErrorCode();
          }
        }
      }
      return new Seen(m.getRcode(), m.getHeader().getFlag(Flags.AD), code);
    }

    @Override
    public String toString() {
      return Rcode.string(rcode) + (ad ? " AD" : " no-AD") + (ede == null ? "" : " EDE " + ede);
    }
  }

  private static Seen expect(int rcode, boolean ad, Integer ede) {
    return new Seen(rcode, ad, ede);
  }

  /** A query: DO means EDNS with DO set; AD and CD are the header bits. */
  private static Message query(String name, int type, boolean dnssecOk, boolean ad, boolean cd) {
    Message q = DnsClient.query(ids.incrementAndGet(), name, type, null);
    if (dnssecOk) {
      q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    }
    if (ad) {
      q.getHeader().setFlag(Flags.AD);
    }
    if (cd) {
      q.getHeader().setFlag(Flags.CD);
    }
    return q;
  }

  private static Message send(InetSocketAddress to, Message q) throws Exception {
    Message copy = q.clone();
    copy.getHeader().setID(ids.incrementAndGet() & 0xFFFF);
    return DnsClient.udp(to, copy);
  }

  private static InetSocketAddress at(TestNode n) {
    return new InetSocketAddress("127.0.0.1", n.udp().getPort());
  }

  /**
   * Asks shoal and Unbound {@code q}; asserts each saw {@code expected} and returns shoal's reply.
   */
  private static Message both(TestNode s, UnboundValidator u, Message q, Seen expected) throws Exception {
    Message fromShoal = send(at(s), q);
    Message fromUnbound = send(u.address(), q);
    String what = q.getQuestion().getName() + " " + Type.string(q.getQuestion().getType());
    String both = what + ": shoal " + Seen.of(fromShoal) + ", unbound " + Seen.of(fromUnbound);
    assertEquals("shoal, " + both + "\n" + fromShoal, expected, Seen.of(fromShoal));
    assertEquals("unbound, " + both + "\n" + fromUnbound, expected, Seen.of(fromUnbound));
    return fromShoal;
  }

  private static String address(Message m) {
    return m.getSection(Section.ANSWER).stream().filter(r -> r instanceof ARecord)
        .map(r -> ((ARecord) r).getAddress().getHostAddress()).findFirst().orElse(null);
  }

  private static boolean has(Message m, int section, int type) {
    return m.getSection(section).stream().anyMatch(r -> r.getType() == type);
  }

  @Test
  public void aSecureAnswerHasAdForDoAndAdClientsOnly() throws Exception {
    Message m = both(shoal, unbound, query("www.sec.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, true, null));
    assertEquals("192.0.2.1", address(m));
    assertTrue("signatures for a DO client", has(m, Section.ANSWER, Type.RRSIG));
    both(shoal, unbound, query("www.sec.test.", Type.A, false, true, false), expect(Rcode.NOERROR, true, null));
    Message plain = both(shoal, unbound, query("www.sec.test.", Type.A, false, false, false),
        expect(Rcode.NOERROR, false, null));
    assertEquals("192.0.2.1", address(plain));
    // Through the DS in the parent to the NSEC3-signed child.
    assertEquals("192.0.2.3", address(both(shoal, unbound, query("www.n3.sec.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, true, null))));
  }

  @Test
  public void nxdomainAndNodataProvenByNsecHaveAd() throws Exception {
    Message nx = both(shoal, unbound, query("nope.sec.test.", Type.A, true, false, false),
        expect(Rcode.NXDOMAIN, true, null));
    assertTrue("the NSEC proof goes to a DO client", has(nx, Section.AUTHORITY, Type.NSEC));
    Message nodata = both(shoal, unbound, query("www.sec.test.", Type.AAAA, true, false, false),
        expect(Rcode.NOERROR, true, null));
    assertTrue(nodata.getSection(Section.ANSWER).isEmpty());
    assertTrue(has(nodata, Section.AUTHORITY, Type.NSEC));
  }

  @Test
  public void nxdomainAndNodataProvenByNsec3HaveAd() throws Exception {
    Message nx = both(shoal, unbound, query("nope.n3.sec.test.", Type.A, true, false, false),
        expect(Rcode.NXDOMAIN, true, null));
    assertTrue("the NSEC3 proof goes to a DO client", has(nx, Section.AUTHORITY, Type.NSEC3));
    Message nodata = both(shoal, unbound, query("www.n3.sec.test.", Type.TXT, true, false, false),
        expect(Rcode.NOERROR, true, null));
    assertTrue(nodata.getSection(Section.ANSWER).isEmpty());
    assertTrue(has(nodata, Section.AUTHORITY, Type.NSEC3));
    // No proof for a client without DO, but the verdict is the same.
    Message plain = both(shoal, unbound, query("nope2.n3.sec.test.", Type.A, false, true, false),
        expect(Rcode.NXDOMAIN, true, null));
    assertTrue(!has(plain, Section.AUTHORITY, Type.NSEC3));
  }

  @Test
  public void wildcardExpansionsAndEmptyNonTerminalsAreProvenSecure() throws Exception {
    assertEquals("192.0.2.8", address(both(shoal, unbound, query("x.wild.sec.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, true, null))));
    assertEquals("192.0.2.9", address(both(shoal, unbound, query("x.wild.n3.sec.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, true, null))));
    // NODATA at a wildcard expansion, and at an empty non-terminal, proven by NSEC3.
    both(shoal, unbound, query("y.wild.n3.sec.test.", Type.TXT, true, false, false), expect(Rcode.NOERROR, true, null));
    both(shoal, unbound, query("ent.n3.sec.test.", Type.A, true, false, false), expect(Rcode.NOERROR, true, null));
    // A CNAME and its target in one zone.
    assertEquals("192.0.2.1", address(both(shoal, unbound, query("alias.sec.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, true, null))));
  }

  @Test
  public void keysAndMixedCaseNamesValidate() throws Exception {
    both(shoal, unbound, query("sec.test.", Type.DNSKEY, true, false, false), expect(Rcode.NOERROR, true, null));
    both(shoal, unbound, query("n3.sec.test.", Type.DNSKEY, true, false, false), expect(Rcode.NOERROR, true, null));
    // Signatures are over the canonical (lower-case) form, whatever case the client wrote.
    assertEquals("192.0.2.3", address(both(shoal, unbound, query("WwW.N3.sEc.TeSt.", Type.A, true, false, false),
        expect(Rcode.NOERROR, true, null))));
    both(shoal, unbound, query("NoPe.Sec.TEST.", Type.A, true, false, false), expect(Rcode.NXDOMAIN, true, null));
    // NODATA for a DS below a zone's apex, proven by NSEC3.
    both(shoal, unbound, query("www.n3.sec.test.", Type.DS, true, false, false), expect(Rcode.NOERROR, true, null));
  }

  @Test
  public void delegationsAreProvenFromTheParent() throws Exception {
    // The DS set itself, and the proof that an unsigned child has none (NSEC, then NSEC3).
    both(shoal, unbound, query("n3.sec.test.", Type.DS, true, false, false), expect(Rcode.NOERROR, true, null));
    both(shoal, unbound, query("insecure.sec.test.", Type.DS, true, false, false), expect(Rcode.NOERROR, true, null));
    both(shoal, unbound, query("plain.n3.sec.test.", Type.DS, true, false, false), expect(Rcode.NOERROR, true, null));
    // The parent's DS of a child that lacks its key is itself secure; the child's keys are not.
    both(shoal, unbound, query("nokey.sec.test.", Type.DS, true, false, false), expect(Rcode.NOERROR, true, null));
    assertEquals("192.0.2.11", address(both(shoal, unbound, query("www.plain.n3.sec.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, false, null))));
  }

  @Test
  public void aRecordEditedAfterSigningIsServfailWithDnssecBogus() throws Exception {
    // The rest of the copied zone still validates: only the edited RRset is bogus.
    assertEquals("192.0.2.7", address(both(shoal, unbound, query("good.forged.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, true, null))));
    Message m = both(shoal, unbound, query("www.forged.test.", Type.A, true, false, false),
        expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.DNSSEC_BOGUS));
    assertTrue(m.getSection(Section.ANSWER).isEmpty());
  }

  @Test
  public void signaturesPastTheirExpirationAreServfailWithSignatureExpired() throws Exception {
    both(shoalLate, unboundLate, query("www.sec.test.", Type.A, true, false, false),
        expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.SIGNATURE_EXPIRED));
    // A proof of non-existence (no RRSIG in the answer section), the zone's keys now known bad: it is
    // the DNSKEY RRset's signatures that are expired.
    both(shoalLate, unboundLate, query("nope.sec.test.", Type.A, true, false, false),
        expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.SIGNATURE_EXPIRED));
    both(shoalLate, unboundLate, query("sec.test.", Type.DNSKEY, true, false, false),
        expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.SIGNATURE_EXPIRED));
  }

  @Test
  public void aDsWithoutItsDnskeyInTheChildIsServfailWithDnskeyMissing() throws Exception {
    both(shoal, unbound, query("www.nokey.sec.test.", Type.A, true, false, false),
        expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.DNSKEY_MISSING));
    both(shoal, unbound, query("nokey.sec.test.", Type.DNSKEY, true, false, false),
        expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.DNSKEY_MISSING));
    // Another name in the zone, its keys now remembered as bad: shoal still says why; Unbound then
    // says 6 "a previous validation failure" (a documented difference).
    Message q = query("cd.nokey.sec.test.", Type.A, true, false, false);
    assertEquals(expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.DNSKEY_MISSING), Seen.of(send(at(shoal), q)));
    assertEquals(expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.DNSSEC_BOGUS), Seen.of(send(unbound.address(), q)));
    // With checking disabled both hand the answer over, unvalidated.
    assertEquals("192.0.2.6", address(both(shoal, unbound, query("cd.nokey.sec.test.", Type.A, true, false, true),
        expect(Rcode.NOERROR, false, null))));
  }

  @Test
  public void aDsWhoseDigestMatchesNoKeyIsServfailWithDnskeyMissing() throws Exception {
    both(shoal, unbound, query("www.baddigest.sec.test.", Type.A, true, false, false),
        expect(Rcode.SERVFAIL, false, ExtendedErrorCodeOption.DNSKEY_MISSING));
  }

  @Test
  public void aClientWithoutEdnsGetsServfailWithoutOpt() throws Exception {
    Message m = both(shoal, unbound, query("plain.forged.test.", Type.A, false, false, false),
        expect(Rcode.SERVFAIL, false, null));
    assertEquals("no EDNS asked, none given", null, m.getOPT());
  }

  @Test
  public void aSignedAnswerTooBigForTheClientIsTruncatedAndWholeOverTcp() throws Exception {
    Message small = DnsClient.query(ids.incrementAndGet(), "nope3.n3.sec.test.", Type.A, null);
    small.addRecord(new OPTRecord(512, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    Message m = both(shoal, unbound, small, expect(Rcode.NXDOMAIN, true, null));
    assertTrue("TC: the NSEC3 proof does not fit in 512 bytes", m.getHeader().getFlag(Flags.TC));
    Message overTcp = DnsClient.tcp(new InetSocketAddress("127.0.0.1", shoal.tcp().getPort()), small);
    assertEquals(expect(Rcode.NXDOMAIN, true, null), Seen.of(overTcp));
    assertTrue("the whole proof over TCP", has(overTcp, Section.AUTHORITY, Type.NSEC3));
  }

  @Test
  public void checkingDisabledGetsTheBogusAnswerUnvalidated() throws Exception {
    Message m = both(shoal, unbound, query("cd.forged.test.", Type.A, true, false, true),
        expect(Rcode.NOERROR, false, null));
    assertEquals("192.0.2.66", address(m));
    assertTrue("CD echoed", m.getHeader().getFlag(Flags.CD));
  }

  @Test
  public void checkingDisabledOnASecureAnswerLeavesOutAdWhereUnboundSetsIt() throws Exception {
    // RFC 6840 section 5.9 lets a validator that checked anyway set AD on a CD=1 answer; shoal does
    // not validate what a CD=1 client asks, so it cannot say it is secure. A documented difference.
    Message q = query("www.n3.sec.test.", Type.A, true, false, true);
    assertEquals(expect(Rcode.NOERROR, false, null), Seen.of(send(at(shoal), q)));
    assertEquals(expect(Rcode.NOERROR, true, null), Seen.of(send(unbound.address(), q)));
  }

  @Test
  public void anUnsignedChildWithoutDsIsAnsweredWithoutAd() throws Exception {
    Message m = both(shoal, unbound, query("www.insecure.sec.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, false, null));
    assertEquals("192.0.2.5", address(m));
    both(shoal, unbound, query("nope.insecure.sec.test.", Type.A, true, false, false),
        expect(Rcode.NXDOMAIN, false, null));
  }

  @Test
  public void aNegativeTrustAnchorAnswersTheBogusZonesWithoutAd() throws Exception {
    assertEquals("192.0.2.66", address(both(shoalNta, unboundNta, query("www.forged.test.", Type.A, true, false, false),
        expect(Rcode.NOERROR, false, null))));
    assertEquals("192.0.2.6", address(both(shoalNta, unboundNta,
        query("www.nokey.sec.test.", Type.A, true, false, false), expect(Rcode.NOERROR, false, null))));
    // Outside the negative anchors validation goes on.
    both(shoalNta, unboundNta, query("www.sec.test.", Type.A, true, false, false), expect(Rcode.NOERROR, true, null));
  }

  @Test
  public void knotdCountsTheQueriesItReceives() throws Exception {
    long before = signer.queryCount();
    Message direct = signer.ask(Name.fromString("www.sec.test."), Type.A);
    assertEquals(Rcode.NOERROR, Objects.requireNonNull(direct).getRcode());
    assertEquals(before + 1, signer.queryCount());

    // A validated answer shoal holds is answered from its cache: knotd is not asked again.
    Message q = query("counted.wild.sec.test.", Type.A, true, false, false);
    assertTrue(send(at(shoal), q).getHeader().getFlag(Flags.AD));
    long afterMiss = signer.queryCount();
    assertTrue("the miss and its validation asked knotd", afterMiss > before + 1);
    Message hit = send(at(shoal), q);
    assertTrue("AD from the cache", hit.getHeader().getFlag(Flags.AD));
    assertEquals("the hit asked knotd nothing", afterMiss, signer.queryCount());
  }

  @Test
  public void aSecondNameInAProvenRangeIsDeniedWithoutAskingKnotd() throws Exception {
    // Between ns.sec.test. and *.wild.sec.test. in canonical order no name exists; *.sec.test. sorts
    // before alias.sec.test., so the apex's NSEC denies the wildcard. No other case asks in this range.
    Message first = send(at(shoal), query("qa.sec.test.", Type.A, true, false, false));
    assertEquals(expect(Rcode.NXDOMAIN, true, null), Seen.of(first));
    assertTrue("the proof came with the first answer", has(first, Section.AUTHORITY, Type.NSEC));
    double synthesized = shoal.metrics().settled().entrySet().stream()
        .filter(e -> e.getKey().startsWith("shoal_dnssec_synthesized_total") && e.getKey().contains("nxdomain"))
        .mapToDouble(Map.Entry::getValue).sum();
    long afterFirst = signer.queryCount();

    Message second = send(at(shoal), query("qb.sec.test.", Type.A, true, false, false));
    assertEquals(expect(Rcode.NXDOMAIN, true, null), Seen.of(second));
    assertTrue("the kept proof goes with the denial", has(second, Section.AUTHORITY, Type.NSEC)
        && has(second, Section.AUTHORITY, Type.RRSIG) && has(second, Section.AUTHORITY, Type.SOA));
    assertEquals("the second NXDOMAIN in the range asked knotd nothing", afterFirst, signer.queryCount());
    shoal.metrics().await(v -> v >= synthesized + 1, "shoal_dnssec_synthesized_total", "type=\"nxdomain\"");
    // Unbound, aggressive too, says the same of it.
    both(shoal, unbound, query("qc.sec.test.", Type.A, true, false, false), expect(Rcode.NXDOMAIN, true, null));
  }
}
