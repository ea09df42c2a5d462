package io.shoal.bench;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.TtlRules;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * What a miss costs on the way in and a hit on the way out, per answer, single-threaded: the
 * bare scan of an upstream answer, its full validation and rewrite ({@link
 * ScannedAnswer#fromUpstream}: checks, a dnsjava parse and write, no OPT), the cache entry with
 * per-record TTLs, and the render of a hit for an EDNS client.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class UpstreamAnswerBenchmark {
  private static final long NOW = 1_800_000_000_000L;
  private final TtlRules rules = new TtlRules(0, 86_400, 900, 5);
  private byte[] upstream;
  private ScannedAnswer clean;
  private CachedAnswer cached;
  private DnsQuery query;

  /** A typical answer: two A records, an NS, the upstream's OPT and a glue A (143 bytes). */
  @Setup
  public void setUp() throws Exception {
    Name www = Name.fromString("www.example.com.");
    Message m = AnswerCacheBenchmark.response(www);
    m.addRecord(new ARecord(www, DClass.IN, 300, InetAddress.getByName("192.0.2.1")), Section.ANSWER);
    m.addRecord(new ARecord(www, DClass.IN, 300, InetAddress.getByName("192.0.2.2")), Section.ANSWER);
    Name ns = Name.fromString("ns1.example.com.");
    m.addRecord(new NSRecord(Name.fromString("example.com."), DClass.IN, 3600, ns), Section.AUTHORITY);
    m.addRecord(new ARecord(ns, DClass.IN, 3600, InetAddress.getByName("192.0.2.53")), Section.ADDITIONAL);
    m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
    upstream = m.toWire();
    clean = ScannedAnswer.fromUpstream(upstream);
    cached = rules.cachedAnswer(clean, NOW, rules.cacheSeconds(clean));
    Message q = Message.newQuery(Record.newRecord(Name.fromString("WwW.Example.com."), Type.A, DClass.IN));
    q.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
    query = DnsQuery.parse(q.toWire());
  }

  /** The walk a miss did before validation: offsets, smallest TTL, OPT extent. */
  @Benchmark
  public ScannedAnswer scanOnly() throws WireException {
    return ScannedAnswer.scan(upstream);
  }

  /** What a miss does now before caching: full validation, OPT removed, written again by dnsjava. */
  @Benchmark
  public ScannedAnswer fromUpstream() throws WireException {
    return ScannedAnswer.fromUpstream(upstream);
  }

  /** The entry a fill stores: every record's TTL clamped by the rules. */
  @Benchmark
  public CachedAnswer cachedAnswer() {
    return rules.cachedAnswer(clean, NOW, rules.cacheSeconds(clean));
  }

  /** A hit: copy, ID, RD/CD, 0x20 case, TTLs counted down, shoal's OPT appended. */
  @Benchmark
  public byte[] renderHit() {
    return cached.render(query, NOW + 12_345, 1232);
  }
}
