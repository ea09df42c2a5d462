package io.shoal.bench;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.TtlRules;
import io.shoal.cache.WhenFull;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * What the memory cache holds per answer: fills a fresh cache with N answers as the server
 * stores them (an upstream reply per name, scanned and clamped by the TTL rules), one in ten a
 * CNAME and two addresses, the rest one A record, and prints the used heap after full
 * collections and the resident set (VmRSS) before and after, per answer. Three rounds per size.
 * Run: {@code java -cp target/benchmarks.jar io.shoal.bench.AnswerCacheFootprint [N...]}.
 */
public final class AnswerCacheFootprint {
  private AnswerCacheFootprint() {}

  private static long usedAfterGc() throws InterruptedException {
    Runtime rt = Runtime.getRuntime();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(100);
      used = Math.min(used, rt.totalMemory() - rt.freeMemory());
    }
    return used;
  }

  private static long rssBytes() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    return -1;
  }

  /** The upstream reply for {@code n<i>.bench.test.}, as the server would cache it at {@code now}. */
  static CachedAnswer answer(int i, long now, TtlRules rules) throws Exception {
    Name qname = Name.fromString("n" + i + ".bench.test.");
    Message m = AnswerCacheBenchmark.response(qname);
    Name target = qname;
    if (i % 10 == 0) {
      target = Name.fromString("edge" + (i % 1000) + ".cdn.bench.test.");
      m.addRecord(new CNAMERecord(qname, DClass.IN, 300, target), Section.ANSWER);
      m.addRecord(new ARecord(target, DClass.IN, 60, InetAddress.getByName("192.0.2.2")), Section.ANSWER);
    }
    m.addRecord(new ARecord(target, DClass.IN, 3600, InetAddress.getByAddress(new byte[] {10, 0, (byte) (i >> 8), (byte) i})),
        Section.ANSWER);
    m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
    ScannedAnswer scan = ScannedAnswer.fromUpstream(m.toWire());
    return rules.cachedAnswer(scan, now, rules.cacheSeconds(scan));
  }

  public static void main(String[] args) throws Exception {
    int[] sizes = args.length == 0 ? new int[] {100_000, 1_000_000} : java.util.Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
    TtlRules rules = new TtlRules(0, 86_400, 900, 5);
    long now = System.currentTimeMillis();
    for (int n : sizes) {
      for (int round = 1; round <= 3; round++) {
        long heap0 = usedAfterGc();
        long rss0 = rssBytes();
        MemoryAnswerCache cache = new MemoryAnswerCache("footprint", n, WhenFull.EVICT_ONE, new CacheMetrics("footprint", "memory"));
        long wire = 0;
        for (int i = 0; i < n; i++) {
          CachedAnswer a = answer(i, now, rules);
          wire += a.wire().length;
          cache.fill(CacheKey.of("n" + i + ".bench.test.", Type.A, DClass.IN, 0), a);
        }
        long heap1 = usedAfterGc();
        long rss1 = rssBytes();
        if (cache.size() != n || cache.get(CacheKey.of("n" + (n - 1) + ".bench.test.", Type.A, DClass.IN, 0), now) == null) {
          throw new IllegalStateException("the cache lost answers: " + cache.size() + " of " + n);
        }
        System.out.printf("%,d answers round %d: live heap %d B per answer (wire %d B), RSS growth %d B per answer%n",
            n, round, (heap1 - heap0) / n, wire / n, (rss1 - rss0) / n);
        cache.close();
      }
    }
  }
}
