package io.shoal.testing;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.cache.lmdb.LmdbAnswerCache;
import io.shoal.cache.lmdb.SyncMode;
import io.shoal.cache.CacheSettings;
import io.shoal.cache.lmdb.LmdbSettings;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/**
 * Real DNS answers as a cache stores them (built with dnsjava, scanned like upstream answers), and
 * LMDB caches filled with them: what the offline tools and the crash tests read back.
 */
public final class StoredAnswers {
  private StoredAnswers() {}

  public static CacheKey key(String name, int type) {
    return CacheKey.of(name, type, DClass.IN, 0);
  }

  /**
   * An upstream-style answer for {@code name}: {@code records} A, AAAA or TXT records whose data
   * follows from the name, so a reader can rebuild it to compare; stored at {@code storedAt} and
   * expiring {@code ttlSeconds} later.
   */
  public static CachedAnswer answer(String name, int type, int records, long ttlSeconds, long storedAt) {
    Message m = new Message(0);
    m.getHeader().setFlag(Flags.QR);
    m.getHeader().setFlag(Flags.RD);
    m.getHeader().setFlag(Flags.RA);
    m.addRecord(Record.newRecord(TestAuthServer.name(name), type, DClass.IN), Section.QUESTION);
    CRC32 crc = new CRC32();
    crc.update(name.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    long seed = crc.getValue();
    for (int i = 0; i < records; i++) {
      m.addRecord(record(name, type, ttlSeconds, seed + i), Section.ANSWER);
    }
    try {
      return CachedAnswer.of(ScannedAnswer.scan(m.toWire()), storedAt, storedAt + ttlSeconds * 1000);
    } catch (WireException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Record record(String name, int type, long ttl, long seed) {
    try {
      return switch (type) {
        case Type.A -> new ARecord(TestAuthServer.name(name), DClass.IN, ttl, InetAddress.getByAddress(new byte[] {
            (byte) 198, (byte) 51, (byte) (seed >> 8), (byte) seed}));
        case Type.AAAA -> new AAAARecord(TestAuthServer.name(name), DClass.IN, ttl, InetAddress.getByAddress(new byte[] {
            0x20, 0x01, 0x0d, (byte) 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, (byte) (seed >> 24), (byte) (seed >> 16),
            (byte) (seed >> 8), (byte) seed}));
        case Type.TXT -> new TXTRecord(TestAuthServer.name(name), DClass.IN, ttl, "seed=" + seed);
        default -> throw new IllegalArgumentException("no test data for type " + Type.string(type));
      };
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  /** LMDB cache settings with room to spare: max_entries 1,000,000, evict_one, 16 MiB maps. */
  public static CacheSettings settings(String name, Path path, int shards, SyncMode sync) {
    return new CacheSettings(name, CacheSettings.Backend.LMDB, 1_000_000, WhenFull.EVICT_ONE, Duration.ZERO,
        Duration.ofDays(1), Duration.ofMinutes(15), Duration.ofSeconds(5),
        new LmdbSettings(path, shards, sync, Duration.ofSeconds(1), 16L << 20, Duration.ZERO, 4096));
  }

  /** Opens an LMDB cache on {@code testKit} the way a node does. */
  public static LmdbAnswerCache open(ActorTestKit testKit, CacheSettings settings) {
    return LmdbAnswerCache.open(spawner(testKit), testKit.system(), settings, new CacheMetrics(settings.name(), "lmdb"),
        LmdbAnswerCache.Tuning.defaults(testKit.system()));
  }

  private static final AtomicInteger SPAWNED = new AtomicInteger();

  /**
   * Spawns cache supervisors on {@code testKit} under names of their own. A closed cache's
   * supervisor answers the close before its parent has seen it stop, so a cache reopened under
   * the same name at once could find the name still taken; the test kit then hands back a
   * stopped actor instead of failing, and the new cache's shards would never start.
   */
  public static LmdbAnswerCache.Spawner spawner(ActorTestKit testKit) {
    return (behavior, name, props) -> testKit.spawn(behavior, name + "-" + SPAWNED.incrementAndGet(), props);
  }

  /** Opens the cache, commits every answer, and closes it again. */
  public static void fill(ActorTestKit testKit, CacheSettings settings, Map<CacheKey, CachedAnswer> answers)
      throws Exception {
    try (LmdbAnswerCache cache = open(testKit, settings)) {
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      answers.forEach((k, a) -> fills.add(cache.fill(k, a)));
      for (CompletionStage<Boolean> f : fills) {
        if (!f.toCompletableFuture().get(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("a fill was dropped");
        }
      }
    }
  }
}
