package io.shoal.cache.lmdb;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import org.junit.Assert;
import static org.junit.Assert.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shoal.cache.CachedAnswer;
import io.shoal.testing.StoredAnswers;
import io.shoal.wire.CacheKey;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.AfterClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.lmdbjava.ByteBufferProxy;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.Dbi;
import org.lmdbjava.Env;
import org.lmdbjava.Txn;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Type;

/** The offline view of a cache directory: stat, dump, look-up, check, flush, and what it refuses. */
public class CacheDirectorySpec extends JUnitSuite {
  private static final ActorTestKit testKit = CacheFixture.testKit("CacheDirectorySpec");

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  /** 40 live names, www in three types and with DO, and 5 answers that expired an hour ago. */
  private static Map<CacheKey, CachedAnswer> sample(long now) {
    Map<CacheKey, CachedAnswer> answers = new LinkedHashMap<>();
    for (int i = 0; i < 40; i++) {
      String name = "n" + i + ".example.test.";
      answers.put(StoredAnswers.key(name, Type.A), StoredAnswers.answer(name, Type.A, 1 + i % 3, 3600, now));
    }
    for (int type : new int[] {Type.A, Type.AAAA, Type.TXT}) {
      answers.put(StoredAnswers.key("www.example.test.", type), StoredAnswers.answer("www.example.test.", type, 2, 600, now));
    }
    answers.put(CacheKey.of("www.example.test.", Type.A, DClass.IN, CacheKey.FLAG_DO),
        StoredAnswers.answer("www.example.test.", Type.A, 1, 600, now));
    for (int i = 0; i < 5; i++) {
      String name = "old" + i + ".example.test.";
      answers.put(StoredAnswers.key(name, Type.A), StoredAnswers.answer(name, Type.A, 1, 3600, now - 7_200_000));
    }
    return answers;
  }

  @Test
  public void statDumpAndCheckReadWhatTheCacheStored() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    long now = System.currentTimeMillis();
    Map<CacheKey, CachedAnswer> answers = sample(now);
    StoredAnswers.fill(testKit, StoredAnswers.settings("dir-read", path, 4, SyncMode.FULL), answers);

    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.SHARED_READ)) {
      assertFalse(dir.inUse().isPresent());
      assertEquals(4, dir.shardCount());
      assertEquals("4", dir.layout().getProperty("shard_count"));
      List<CacheDirectory.ShardStat> stats = dir.stat(now);
      assertEquals(4, stats.size());
      assertEquals(answers.size(), stats.stream().mapToLong(CacheDirectory.ShardStat::entries).sum());
      assertEquals("a node keeps its expiry order in memory, not in LMDB",
          0, stats.stream().mapToLong(CacheDirectory.ShardStat::indexed).sum());
      assertEquals(5, stats.stream().mapToLong(CacheDirectory.ShardStat::expired).sum());
      for (CacheDirectory.ShardStat s : stats) {
        assertNull(s.error());
        assertEquals("the map size the node configured", 16L << 20, s.mapSize());
        assertTrue(s.mapUsed() > 0 && s.mapUsed() < s.mapSize());
        assertTrue(s.lastTxnId() > 0);
      }

      List<CacheDirectory.Entry> all = new ArrayList<>();
      assertEquals(answers.size(), dir.dump(null, Long.MAX_VALUE, all::add));
      for (CacheDirectory.Entry e : all) {
        assertNotNull(e.key());
        assertEquals(LmdbAnswerCache.shardOf(e.key(), 4), e.shard());
        assertArrayEquals(answers.get(e.key()).wire(), e.answer().wire());
        assertEquals(answers.get(e.key()).expiresAtMillis(), e.answer().expiresAtMillis());
      }
      assertEquals(3, dir.dump(null, 3, e -> { }));
      List<CacheDirectory.Entry> www = new ArrayList<>();
      dir.dump("WWW.Example.Test", Long.MAX_VALUE, www::add);
      assertEquals("every type and flag of that name, and nothing else", 4, www.size());
      assertTrue(www.stream().allMatch(e -> e.key().name().equals("www.example.test.")));

      CacheKey k = StoredAnswers.key("n7.example.test.", Type.A);
      assertArrayEquals(answers.get(k).wire(), dir.answer(k).wire());
      assertNull(dir.answer(StoredAnswers.key("absent.example.test.", Type.A)));
    }
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_READ)) {
      CacheDirectory.CheckReport report = dir.check(now);
      assertTrue(report.problems().toString(), report.clean());
      assertEquals(answers.size(), report.entries());
      assertEquals(5, report.expired());
      assertTrue(report.notes().isEmpty());
    }
  }

  /**
   * A node builds its expiry order from every entry when it opens a shard: an entry too short
   * to be an answer is deleted there rather than failing the shard at every open.
   */
  @Test
  public void aNodeOpensAShardHoldingEntriesTooShortToBeAnswers() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    long now = System.currentTimeMillis();
    Map<CacheKey, CachedAnswer> answers = sample(now);
    StoredAnswers.fill(testKit, StoredAnswers.settings("dir-short", path, 2, SyncMode.FULL), answers);
    try (RawShard raw = new RawShard(LmdbAnswerCache.shardDirectory(path, 0))) {
      raw.putRaw(new byte[] {0, 0, 1}, new byte[30], 0);
      raw.putRaw(keyIn(0, "short").bytes(), new byte[4], 0);
    }
    try (LmdbAnswerCache cache = StoredAnswers.open(testKit, StoredAnswers.settings("dir-short", path, 2, SyncMode.FULL))) {
      CacheShardSpec.awaitShardOpen(cache, 0);
      assertEquals("every answer, and neither damaged entry", answers.size(), cache.size());
      CacheKey k = StoredAnswers.key("n7.example.test.", Type.A);
      assertArrayEquals(answers.get(k).wire(), cache.get(k, now).wire());
    }
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_READ)) {
      assertTrue(dir.check(now).problems().toString(), dir.check(now).clean());
    }
  }

  @Test
  public void checkListsEveryKindOfDamage() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    long now = System.currentTimeMillis();
    Map<CacheKey, CachedAnswer> answers = sample(now);
    StoredAnswers.fill(testKit, StoredAnswers.settings("dir-damage", path, 2, SyncMode.FULL), answers);
    List<CacheKey> inShard0 = answers.keySet().stream().filter(k -> LmdbAnswerCache.shardOf(k, 2) == 0).toList();
    List<CacheKey> inShard1 = answers.keySet().stream().filter(k -> LmdbAnswerCache.shardOf(k, 2) == 1).toList();
    CacheKey unindexed = inShard0.get(0);
    CacheKey misplaced = inShard1.get(0);
    CacheKey ghost = keyIn(0, "ghost");
    CacheKey garbage = keyIn(0, "garbage");
    CacheKey unscannable = keyIn(0, "unscannable");
    CacheKey offsets = keyIn(0, "offsets");
    CacheKey otherQuestion = keyIn(0, "other");
    byte[] malformed = {3, 'a', 'b', 'c', 9, 0, 1, 0, 1, 0};
    byte[] upperCase = CacheKey.of("upper.example.test.", 1, 1, 0).bytes().clone();
    upperCase[1] = 'U';

    CachedAnswer good = answers.get(inShard0.get(1));
    try (RawShard raw = new RawShard(LmdbAnswerCache.shardDirectory(path, 0))) {
      // The expiry index an older shoal kept in LMDB: check still verifies one where it finds it.
      raw.indexAll();
      raw.deleteIndex(unindexed.bytes(), answers.get(unindexed).expiresAtMillis());
      raw.putIndex(ghost.bytes(), now + 60_000);
      raw.put(misplaced.bytes(), answers.get(misplaced));
      raw.putRaw(garbage.bytes(), new byte[30], 0);
      byte[] truncatedWire = Arrays.copyOf(good.wire(), good.wire().length - 3);
      raw.put(unscannable.bytes(), new CachedAnswer(truncatedWire, new int[0], -1, -1, now, now + 60_000));
      raw.put(offsets.bytes(), new CachedAnswer(good.wire(), new int[] {12}, -1, -1, now, now + 60_000));
      raw.put(otherQuestion.bytes(), good);
      raw.put(malformed, good);
      raw.put(upperCase, good);
    }
    Files.createDirectories(path.resolve("shard-07"));

    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_READ)) {
      CacheDirectory.CheckReport report = dir.check(now);
      String all = String.join("\n", report.problems());
      assertFalse(report.clean());
      assertContains(all, "shard-07: a shard directory beyond shard_count 2");
      assertContains(all, "shard-00: " + unindexed.name() + " A IN -: no expiry index entry");
      assertContains(all, "shard-00: expiry index entry for " + ghost.name() + " A IN -: no such answer");
      assertContains(all, misplaced.name() + " A IN -: belongs in shard-01 by its key hash");
      assertContains(all, garbage.name() + " A IN -: value of 30 bytes does not decode");
      assertContains(all, unscannable.name() + " A IN -: answer does not scan");
      assertContains(all, offsets.name() + " A IN -: stored TTL offsets do not match");
      assertContains(all, otherQuestion.name() + " A IN -: the answer is for another question");
      assertContains(all, "key 0x03616263090001000100: malformed key");
      assertTrue(all, report.problems().stream().anyMatch(p -> p.contains("key 0x05557070") && p.contains("malformed key")));
    }

    // A shard that is gone is a problem for check and stops flush before it writes anything.
    try (var files = Files.list(LmdbAnswerCache.shardDirectory(path, 1))) {
      for (Path f : files.toList()) {
        Files.delete(f);
      }
    }
    Files.delete(LmdbAnswerCache.shardDirectory(path, 1));
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_WRITE)) {
      assertContains(String.join("\n", dir.check(now).problems()), "shard-01: missing");
      assertEquals("missing", dir.stat(now).get(1).error());
      CacheDirectoryException e = Assert.assertThrows(CacheDirectoryException.class, dir::flushAll);
      assertContains(e.getMessage(), "nothing was removed");
      assertNotNull(dir.answer(inShard0.get(1)));
    }
  }

  @Test
  public void damagedDataFilesAreReportedBeforeLmdbMapsThem() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    long now = System.currentTimeMillis();
    StoredAnswers.fill(testKit, StoredAnswers.settings("dir-truncated", path, 3, SyncMode.FULL), sample(now));
    Path truncated = LmdbAnswerCache.shardDirectory(path, 0).resolve("data.mdb");
    long size = Files.size(truncated);
    try (var channel = java.nio.channels.FileChannel.open(truncated, java.nio.file.StandardOpenOption.WRITE)) {
      channel.truncate(size / 2);
    }
    Files.write(LmdbAnswerCache.shardDirectory(path, 1).resolve("data.mdb"), new byte[0]);

    // Mapped as it is, shard-00 would be a SIGBUS that kills this JVM; here it is a problem listed.
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_READ)) {
      CacheDirectory.CheckReport report = dir.check(now);
      String all = String.join("\n", report.problems());
      assertContains(all, "shard-00: data.mdb is " + size / 2 + " bytes but its meta page says");
      assertContains(all, "truncated");
      assertContains(all, "shard-01: data.mdb is empty (0 bytes): not an LMDB file");
      assertEquals(all, 2, report.problems().size());
      assertTrue("the intact shard was read", report.entries() > 0);
      assertContains(dir.stat(now).get(0).error(), "truncated");
    }
  }

  @Test
  public void flushRemovesANameOrEverythingAndTheCacheOpensAfterwards() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    long now = System.currentTimeMillis();
    Map<CacheKey, CachedAnswer> answers = sample(now);
    var settings = StoredAnswers.settings("dir-flush", path, 4, SyncMode.PERIODIC);
    StoredAnswers.fill(testKit, settings, answers);

    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_WRITE)) {
      assertEquals("A, with and without DO", 2, dir.flushName("WWW.example.test", Type.A));
      assertNull(dir.answer(StoredAnswers.key("www.example.test.", Type.A)));
      assertNotNull(dir.answer(StoredAnswers.key("www.example.test.", Type.AAAA)));
      assertEquals(2, dir.flushName("www.example.test.", 0));
      assertEquals(0, dir.flushName("www.example.test.", 0));
      assertTrue(dir.check(now).problems().toString(), dir.check(now).clean());
      assertEquals(answers.size() - 4, dir.stat(now).stream().mapToLong(CacheDirectory.ShardStat::entries).sum());
    }
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_WRITE)) {
      assertEquals(answers.size() - 4, dir.flushAll());
      assertEquals(0, dir.stat(now).stream().mapToLong(CacheDirectory.ShardStat::entries).sum());
      assertTrue(dir.check(now).clean());
    }
    try (LmdbAnswerCache cache = StoredAnswers.open(testKit, settings)) {
      for (int shard = 0; shard < 4; shard++) {
        CacheShardSpec.awaitShardOpen(cache, shard);
      }
      assertEquals(0, cache.size());
      CacheKey k = StoredAnswers.key("n1.example.test.", Type.A);
      assertTrue(CacheFixture.await(cache.fill(k, answers.get(k))));
      assertNotNull(cache.get(k, now));
    }
  }

  @Test
  public void anOpenCacheKeepsOthersOutAndItsLockIsPrivate() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    var settings = StoredAnswers.settings("dir-lock", path, 2, SyncMode.NONE);
    try (LmdbAnswerCache cache = StoredAnswers.open(testKit, settings)) {
      CacheShardSpec.awaitShardOpen(cache, 0);
      CacheShardSpec.awaitShardOpen(cache, 1);
      for (CacheDirectory.Access access : CacheDirectory.Access.values()) {
        CacheDirectoryException e = Assert.assertThrows(CacheDirectoryException.class, () -> CacheDirectory.open(path, access));
        assertEquals(CacheInUseException.Holder.THIS_PROCESS, e.inUse().orElseThrow().holder());
        assertContains(e.getMessage(), "already open in this process");
      }
      CacheInUseException second = Assert.assertThrows(CacheInUseException.class, () -> StoredAnswers.open(testKit, settings));
      assertContains(second.getMessage(), path.toString());
      Path lock = path.resolve(CacheLock.LOCK_FILE);
      assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(lock)));
      assertEquals(String.valueOf(ProcessHandle.current().pid()), Files.readString(lock).trim());
    }
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_WRITE)) {
      assertTrue("closing the cache released its directory", dir.check(System.currentTimeMillis()).clean());
    }
  }

  @Test
  public void whatIsNotACacheIsNamed() throws Exception {
    Path root = tmp.newFolder().toPath();
    assertRefused(root.resolve("absent"), "no such directory: " + root.resolve("absent"));
    Path file = Files.writeString(root.resolve("file"), "x");
    assertRefused(file, "not a directory");
    Path empty = Files.createDirectory(root.resolve("empty"));
    assertRefused(empty, "is not a shoal cache: it has no shoal-cache.properties");
    Path layoutOnly = Files.createDirectory(root.resolve("layout-only"));
    Files.writeString(layoutOnly.resolve(AnswerCodec.LAYOUT_FILE), "format=1\nshard_count=2\nkey_hash=crc32\n");
    assertRefused(layoutOnly, "is not a shoal cache: it has no shard-NN directories");
    Path future = Files.createDirectory(root.resolve("future"));
    Files.writeString(future.resolve(AnswerCodec.LAYOUT_FILE), "format=2\nshard_count=2\nkey_hash=xx\n");
    assertRefused(future, "written by an incompatible shoal");
    Path damaged = Files.createDirectory(root.resolve("damaged"));
    Files.writeString(damaged.resolve(AnswerCodec.LAYOUT_FILE), "format=1\nshard_count=zero\nkey_hash=crc32\n");
    assertRefused(damaged, "is damaged: shard_count=zero");
    assertFalse("a read-only look creates nothing", Files.exists(empty.resolve(CacheLock.LOCK_FILE)));
  }

  private static void assertRefused(Path path, String message) {
    for (CacheDirectory.Access access : CacheDirectory.Access.values()) {
      CacheDirectoryException e = Assert.assertThrows(CacheDirectoryException.class, () -> CacheDirectory.open(path, access));
      assertContains(e.getMessage(), message);
      assertFalse(e.inUse().isPresent());
    }
  }

  static void assertContains(String text, String part) {
    assertTrue("expected to find\n  " + part + "\nin\n" + text, text.contains(part));
  }

  /** A key for {@code prefix<n>.example.test.} A that lands in {@code shard} of 2. */
  private static CacheKey keyIn(int shard, String prefix) {
    for (int i = 0; ; i++) {
      CacheKey k = StoredAnswers.key(prefix + i + ".example.test.", Type.A);
      if (LmdbAnswerCache.shardOf(k, 2) == shard) {
        return k;
      }
    }
  }

  /** Writes straight into a closed shard's databases, the way damage would. */
  private static final class RawShard implements AutoCloseable {
    private final Env<ByteBuffer> env;
    private final Dbi<ByteBuffer> answers;
    private final Dbi<ByteBuffer> expiry;

    RawShard(Path dir) {
      env = Env.create(ByteBufferProxy.PROXY_OPTIMAL).setMapSize(0).setMaxDbs(2).open(dir.toFile());
      answers = env.openDbi(AnswerCodec.ANSWERS);
      expiry = env.openDbi(AnswerCodec.EXPIRY);
    }

    void put(byte[] key, CachedAnswer answer) {
      putRaw(key, AnswerCodec.bytes(AnswerCodec.encode(answer, ByteBuffer.allocateDirect(0))), answer.expiresAtMillis());
    }

    void putRaw(byte[] key, byte[] value, long indexedExpiry) {
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        answers.put(txn, direct(key), direct(value));
        expiry.put(txn, indexKey(indexedExpiry, key), ByteBuffer.allocateDirect(0));
        txn.commit();
      }
    }

    void indexAll() {
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        List<byte[]> keys = new ArrayList<>();
        List<Long> expiries = new ArrayList<>();
        try (CursorIterable<ByteBuffer> all = answers.iterate(txn)) {
          for (CursorIterable.KeyVal<ByteBuffer> kv : all) {
            keys.add(AnswerCodec.bytes(kv.key()));
            expiries.add(AnswerCodec.expiresAt(kv.val()));
          }
        }
        for (int i = 0; i < keys.size(); i++) {
          expiry.put(txn, indexKey(expiries.get(i), keys.get(i)), ByteBuffer.allocateDirect(0));
        }
        txn.commit();
      }
    }

    void putIndex(byte[] key, long expiresAt) {
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        expiry.put(txn, indexKey(expiresAt, key), ByteBuffer.allocateDirect(0));
        txn.commit();
      }
    }

    void deleteIndex(byte[] key, long expiresAt) {
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        assertTrue(expiry.delete(txn, indexKey(expiresAt, key)));
        txn.commit();
      }
    }

    private static ByteBuffer indexKey(long expiresAt, byte[] key) {
      return AnswerCodec.indexKey(ByteBuffer.allocateDirect(8 + key.length), expiresAt, key);
    }

    private static ByteBuffer direct(byte[] bytes) {
      return AnswerCodec.direct(bytes);
    }

    @Override
    public void close() {
      env.close();
    }
  }
}
