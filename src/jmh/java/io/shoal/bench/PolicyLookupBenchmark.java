package io.shoal.bench;

import io.shoal.policy.ResponsePolicy;
import io.shoal.wire.DnsQuery;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * What the response policy adds to a query that it does not match, the common case: with no policy
 * (names = 0: the null check Ingress makes) and with a domain list of a million names (one hash
 * probe per label of the query name). A hit on the list is measured too (an NXDOMAIN reply written).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
@State(Scope.Benchmark)
public class PolicyLookupBenchmark {
  @Param({"0", "1000000"})
  public int names;

  private ResponsePolicy policy;
  private DnsQuery miss;
  private DnsQuery hit;
  /** Distinct unlisted names, so the probes meet cold cache lines as real traffic does. */
  private DnsQuery[] misses;
  private int next;

  @Setup
  public void setUp() throws Exception {
    if (names > 0) {
      Path dir = Files.createTempDirectory("shoal-list");
      Path file = DomainListFootprint.generate(names, dir);
      policy = DomainListFootprint.load(file);
      String listed = Files.readAllLines(file).get(names / 2 + 1);
      hit = query(listed + ".");
      Files.delete(file);
      Files.delete(dir);
    } else {
      hit = query("www.example.com.");
    }
    // Three labels plus the root, like most names asked: three probes.
    miss = query("www.shop-example.com.");
    misses = new DnsQuery[1 << 16];
    java.util.Random random = new java.util.Random(7);
    for (int i = 0; i < misses.length; i++) {
      misses[i] = query("www" + random.nextInt(1000) + ".shop" + i + ".example" + random.nextInt(50) + ".com.");
    }
  }

  private static DnsQuery query(String name) throws Exception {
    return DnsQuery.parse(Message.newQuery(Record.newRecord(Name.fromString(name), Type.A, 1)).toWire());
  }

  @Benchmark
  public byte[] miss() {
    ResponsePolicy p = policy;
    return p == null ? null : p.answer(miss, 512);
  }

  /** A different unlisted name each time (65,536 of them, three labels each). */
  @Benchmark
  public byte[] missVaried() {
    ResponsePolicy p = policy;
    DnsQuery q = misses[next++ & (misses.length - 1)];
    return p == null ? null : p.answer(q, 512);
  }

  /**
   * What {@link #missVaried} costs without the policy's work: reading the next query's name (its
   * label count), which brings the query into the cache as receiving it would.
   */
  @Benchmark
  public int touchVaried() {
    DnsQuery q = misses[next++ & (misses.length - 1)];
    return io.shoal.local.NameIndex.labels(q.packet(), 12);
  }

  @Benchmark
  public byte[] hit() {
    ResponsePolicy p = policy;
    return p == null ? null : p.answer(hit, 512);
  }
}
