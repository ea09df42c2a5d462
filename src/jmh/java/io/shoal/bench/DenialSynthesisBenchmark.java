package io.shoal.bench;

import io.shoal.dnssec.DenialCache;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
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
import org.xbill.DNS.DClass;
import org.xbill.DNS.DNSSEC;
import org.xbill.DNS.NSEC3PARAMRecord;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.NSECRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Type;
import org.xbill.DNS.utils.base32;

/**
 * What RFC 8198 synthesis costs a miss: {@link DenialCache#synthesize} over a zone of
 * {@link #ranges} kept NSEC or NSEC3 ranges (SHA-1, no salt, no extra iterations) for random
 * names that a range covers (the reply written, NXDOMAIN with the proof), and for a name under a
 * zone with no kept ranges, the common miss, which only pays the per-label zone look-up. A hit
 * never calls it. Signatures are not checked there (they were, when the proof was validated), so
 * the records carry placeholder signature bytes.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
@State(Scope.Benchmark)
public class DenialSynthesisBenchmark {
  private static final long NOW = 1_800_000_000_000L;

  @Param({"nsec", "nsec3", "unsigned"})
  public String chain;

  @Param({"10000"})
  public int ranges;

  private DenialCache cache;
  private Name[] names;
  private int next;

  @Setup
  public void setUp() throws Exception {
    Name apex = Name.fromString("bench.example.");
    cache = new DenialCache();
    SOARecord soa = new SOARecord(apex, DClass.IN, 3600, Name.fromString("ns.bench.example."),
        Name.fromString("admin.bench.example."), 1, 3600, 600, 86400, 3600);
    RRSIGRecord soaSig = sig(apex, Type.SOA, apex);
    List<Name> owners = new ArrayList<>();
    owners.add(apex);
    for (int i = 0; i < ranges - 1; i++) {
      owners.add(Name.fromString(String.format("n%07d", i * 2), apex));
    }
    if (chain.equals("nsec3")) {
      NSEC3PARAMRecord params = new NSEC3PARAMRecord(apex, DClass.IN, 0, NSEC3Record.SHA1_DIGEST_ID, 0, 0, new byte[0]);
      base32 hex = new base32(base32.Alphabet.BASE32HEX, false, true);
      TreeMap<String, byte[]> hashes = new TreeMap<>();
      for (Name owner : owners) {
        byte[] h = params.hashName(owner);
        hashes.put(hex.toString(h), h);
      }
      List<String> labels = new ArrayList<>(hashes.keySet());
      for (int i = 0; i < labels.size(); i++) {
        Name owner = new Name(labels.get(i), apex);
        NSEC3Record r = new NSEC3Record(owner, DClass.IN, 3600, NSEC3Record.SHA1_DIGEST_ID, 0, 0, new byte[0],
            hashes.get(labels.get((i + 1) % labels.size())), new int[] {Type.A, Type.RRSIG});
        cache.learn(List.of(soa, soaSig, r, sig(owner, Type.NSEC3, apex)), NOW);
      }
    } else {
      for (int i = 0; i < owners.size(); i++) {
        Name owner = owners.get(i);
        Record r = new NSECRecord(owner, DClass.IN, 3600, owners.get((i + 1) % owners.size()),
            new int[] {Type.A, Type.RRSIG, Type.NSEC});
        cache.learn(List.of(soa, soaSig, r, sig(owner, Type.NSEC, apex)), NOW);
      }
    }
    names = new Name[4096];
    java.util.Random random = new java.util.Random(42);
    for (int i = 0; i < names.length; i++) {
      // Odd numbers fall between the even owners: each is covered by one range.
      String label = String.format("n%07d", 2 * random.nextInt(ranges - 1) + 1);
      names[i] = Name.fromString(label + (chain.equals("unsigned") ? ".www.unsigned-example.com." : ".bench.example."));
    }
    if (!chain.equals("unsigned") && cache.synthesize(names[0], Type.A, true, NOW + 1000) == null) {
      throw new IllegalStateException("the benchmark's names must be covered");
    }
  }

  private static RRSIGRecord sig(Name owner, int covered, Name signer) {
    return new RRSIGRecord(owner, DClass.IN, 3600, covered, DNSSEC.Algorithm.ECDSAP256SHA256, 3600,
        Instant.ofEpochMilli(NOW).plusSeconds(86400), Instant.ofEpochMilli(NOW).minusSeconds(3600), 12345, signer,
        new byte[64]);
  }

  @Benchmark
  public DenialCache.Synthesized synthesize() {
    Name name = names[next++ & (names.length - 1)];
    return cache.synthesize(name, Type.A, true, NOW + 1000);
  }
}
