package io.shoal.cache;

import static io.shoal.wire.Messages.name;
import static io.shoal.wire.Messages.wire;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.shoal.wire.Messages;
import io.shoal.wire.Rcode;
import io.shoal.wire.ScannedAnswer;
import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** How long {@link TtlRules} lets each kind of upstream answer live in the cache. */
class TtlRulesTest {
  /** The embedded defaults: min 0s, max 1d, negative 15m, servfail 5s. */
  private static final TtlRules DEFAULTS = new TtlRules(0, 86_400, 900, 5);

  private static ScannedAnswer positive(long... ttls) throws Exception {
    Message m = Messages.response(1, "www.example.com.", Type.A, Rcode.NOERROR);
    int i = 1;
    for (long ttl : ttls) {
      m.addRecord(new ARecord(name("www.example.com."), DClass.IN, ttl, InetAddress.getByName("192.0.2." + i++)), Section.ANSWER);
    }
    // DO in the OPT TTL field is 32768: it must never count as a TTL.
    m.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    return ScannedAnswer.scan(wire(m));
  }

  private static ScannedAnswer negative(int rcode, int qtype, long soaTtl, long soaMinimum) throws Exception {
    Message m = Messages.response(1, "www.example.com.", qtype, rcode);
    m.addRecord(
        new SOARecord(name("example.com."), DClass.IN, soaTtl, name("ns1.example.com."),
            name("hostmaster.example.com."), 1, 7200, 900, 1209600, soaMinimum),
        Section.AUTHORITY);
    return ScannedAnswer.scan(wire(m));
  }

  private static ScannedAnswer bare(int rcode) throws Exception {
    return ScannedAnswer.scan(wire(Messages.response(1, "www.example.com.", Type.A, rcode)));
  }

  @Test
  void positiveAnswerLivesForItsSmallestTtl() throws Exception {
    assertEquals(60, DEFAULTS.cacheSeconds(positive(300, 60, 120)));
  }

  @Test
  void positiveTtlIsRaisedToMinTtl() throws Exception {
    assertEquals(120, new TtlRules(120, 86_400, 900, 5).cacheSeconds(positive(300, 60)));
  }

  @Test
  void positiveTtlIsLoweredToMaxTtl() throws Exception {
    assertEquals(30, new TtlRules(0, 30, 900, 5).cacheSeconds(positive(300, 60)));
  }

  @Test
  void ttlInsideTheBoundsIsKept() throws Exception {
    assertEquals(60, new TtlRules(10, 100, 900, 5).cacheSeconds(positive(300, 60)));
  }

  @Test
  void zeroTtlIsNotCached() throws Exception {
    assertEquals(0, DEFAULTS.cacheSeconds(positive(300, 0)));
  }

  @Test
  void zeroTtlIsCachedForMinTtlWhenOneIsSet() throws Exception {
    assertEquals(10, new TtlRules(10, 86_400, 900, 5).cacheSeconds(positive(0)));
  }

  @Test
  void nxdomainLivesForTheSmallerOfSoaTtlAndMinimum() throws Exception {
    assertEquals(300, DEFAULTS.cacheSeconds(negative(Rcode.NXDOMAIN, Type.A, 3600, 300)));
    assertEquals(100, DEFAULTS.cacheSeconds(negative(Rcode.NXDOMAIN, Type.A, 100, 300)));
  }

  @Test
  void nodataLivesForTheSmallerOfSoaTtlAndMinimum() throws Exception {
    assertEquals(300, DEFAULTS.cacheSeconds(negative(Rcode.NOERROR, Type.AAAA, 3600, 300)));
    assertEquals(100, DEFAULTS.cacheSeconds(negative(Rcode.NOERROR, Type.AAAA, 100, 300)));
  }

  @Test
  void negativeTtlIsCappedByNegativeTtl() throws Exception {
    TtlRules rules = new TtlRules(0, 86_400, 60, 5);

    assertEquals(60, rules.cacheSeconds(negative(Rcode.NXDOMAIN, Type.A, 3600, 300)));
    assertEquals(60, rules.cacheSeconds(negative(Rcode.NOERROR, Type.AAAA, 3600, 300)));
  }

  @Test
  void negativeTtlZeroDisablesNegativeCaching() throws Exception {
    assertEquals(0, new TtlRules(0, 86_400, 0, 5).cacheSeconds(negative(Rcode.NXDOMAIN, Type.A, 3600, 300)));
  }

  @Test
  void nxdomainWithoutSoaIsNotCached() throws Exception {
    assertEquals(0, DEFAULTS.cacheSeconds(bare(Rcode.NXDOMAIN)));
  }

  @Test
  void nodataWithoutSoaIsNotCached() throws Exception {
    // A referral-like NOERROR: an NS in authority but no SOA to say how long "no data" holds.
    Message m = Messages.response(1, "www.example.com.", Type.AAAA, Rcode.NOERROR);
    m.addRecord(new NSRecord(name("example.com."), DClass.IN, 3600, name("ns1.example.com.")), Section.AUTHORITY);

    assertEquals(0, DEFAULTS.cacheSeconds(ScannedAnswer.scan(wire(m))));
  }

  @Test
  void servfailLivesForServfailTtl() throws Exception {
    assertEquals(5, DEFAULTS.cacheSeconds(bare(Rcode.SERVFAIL)));
    assertEquals(0, new TtlRules(0, 86_400, 900, 0).cacheSeconds(bare(Rcode.SERVFAIL)));
  }

  @Test
  void refusedIsNotCached() throws Exception {
    assertEquals(0, DEFAULTS.cacheSeconds(bare(Rcode.REFUSED)));
  }

  @Test
  void refusedIsNotCachedEvenWithMinTtl() throws Exception {
    assertEquals(0, new TtlRules(30, 86_400, 900, 5).cacheSeconds(bare(Rcode.REFUSED)));
  }

  @Test
  void truncatedAnswerIsNotCached() throws Exception {
    Message m = Messages.response(1, "www.example.com.", Type.A, Rcode.NOERROR);
    m.getHeader().setFlag(Flags.TC);
    m.addRecord(new ARecord(name("www.example.com."), DClass.IN, 300, InetAddress.getByName("192.0.2.1")), Section.ANSWER);

    assertEquals(0, DEFAULTS.cacheSeconds(ScannedAnswer.scan(wire(m))));
    assertEquals(0, new TtlRules(30, 86_400, 900, 5).cacheSeconds(ScannedAnswer.scan(wire(m))));
  }

  @Test
  void settingsDurationsAreUsedInSeconds() throws Exception {
    CacheSettings settings = new CacheSettings(
        "answers", CacheSettings.Backend.MEMORY, 10, WhenFull.EVICT_ONE, Duration.ofSeconds(10),
        Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofSeconds(3), null);
    TtlRules rules = new TtlRules(settings);

    assertEquals(60, rules.cacheSeconds(positive(300)));
    assertEquals(10, rules.cacheSeconds(positive(1)));
    assertEquals(120, rules.cacheSeconds(negative(Rcode.NXDOMAIN, Type.A, 3600, 3600)));
    assertEquals(3, rules.cacheSeconds(bare(Rcode.SERVFAIL)));
  }
}
