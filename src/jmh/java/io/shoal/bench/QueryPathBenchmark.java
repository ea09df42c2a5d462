package io.shoal.bench;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.metrics.CacheMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ScannedAnswer;
import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The reading thread's own work for a warm hit, without the socket: parse the query, pick its
 * profile, look its key up in the memory cache and render the reply into the socket's buffer.
 * That is a hit's user-space cost; the socket's system calls, which cost more, are measured with
 * the server (docs/performance.md, "Where a hit's microseconds go").
 *
 * <p>{@code case}: {@code lower} asks every name as it was cached (what dnsperf and most stubs
 * send); {@code mixed} asks it with its letters' case scrambled (DNS 0x20, as some resolvers do).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
public class QueryPathBenchmark {
  /** Cached names, each with its own answer (so the answer's question is the name asked). */
  private static final int NAMES = 4096;

  @Param({"lower", "mixed"})
  public String letters;

  private byte[][] queries;
  private ProfileTable profiles;
  private final byte[] out = new byte[65535 + 64];
  private long now;
  private int next;

  @Setup(Level.Trial)
  public void fill() throws Exception {
    now = System.currentTimeMillis();
    MemoryAnswerCache cache =
        new MemoryAnswerCache("bench", NAMES * 2, WhenFull.EVICT_ONE, new CacheMetrics("bench", "memory"));
    profiles = new ProfileTable(Map.of(".", new Profile("default", cache, new CacheMetrics("bench", "memory"), null,
        null)));
    queries = new byte[NAMES][];
    for (int i = 0; i < NAMES; i++) {
      String name = "www" + i + ".example.test.";
      Name qname = Name.fromString(name);
      Message answer = AnswerCacheBenchmark.response(qname);
      answer.addRecord(new ARecord(qname, DClass.IN, 3600, InetAddress.getByName("192.0.2.1")), Section.ANSWER);
      answer.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
      ScannedAnswer scan = ScannedAnswer.fromUpstream(answer.toWire());
      String asked = letters.equals("mixed") ? scrambled(name, i) : name;
      Message query = Message.newQuery(Record.newRecord(Name.fromString(asked), Type.A, DClass.IN));
      query.getHeader().setID(i & 0xFFFF);
      queries[i] = query.toWire();
      cache.fill(DnsQuery.parse(queries[i]).key(), CachedAnswer.of(scan, now, now + scan.minTtl() * 1000L))
          .toCompletableFuture().join();
    }
  }

  /** {@code name} with every other letter upper-cased, starting at a letter that depends on {@code seed}. */
  private static String scrambled(String name, int seed) {
    StringBuilder b = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      b.append((i + seed) % 2 == 0 ? Character.toUpperCase(c) : c);
    }
    return b.toString();
  }

  /** One warm hit: parse, profile, look-up, render; returns the reply's length. */
  @Benchmark
  public int hit() throws BadQuery {
    DnsQuery query = DnsQuery.parse(queries[next++ & (NAMES - 1)]);
    Profile profile = profiles.match(query.key());
    CachedAnswer answer = profile.cache().get(query.key(), now);
    return answer.renderInto(query, now, 512, out);
  }
}
