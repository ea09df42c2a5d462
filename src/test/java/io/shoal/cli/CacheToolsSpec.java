package io.shoal.cli;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import com.typesafe.config.ConfigFactory;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.lmdb.LmdbAnswerCache;
import io.shoal.cache.lmdb.SyncMode;
import io.shoal.cache.CacheSettings;
import io.shoal.testing.ShoalCli;
import io.shoal.testing.ShoalCli.Run;
import io.shoal.testing.StoredAnswers;
import io.shoal.wire.CacheKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Type;

/** {@code shoal cache stat|dump|check|flush --path} as an operator types them: output and exit status. */
public class CacheToolsSpec extends JUnitSuite {
  private static final ActorTestKit testKit = ActorTestKit.create("CacheToolsSpec", ConfigFactory.load());

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  private static Run shoal(String... args) {
    return ShoalCli.run(args);
  }

  /** A closed cache of 4 shards: www in A and AAAA, 20 other names, 2 of them expired. */
  private Path cache(String name) throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    long now = System.currentTimeMillis();
    Map<CacheKey, CachedAnswer> answers = new LinkedHashMap<>();
    answers.put(StoredAnswers.key("www.example.test.", Type.A), StoredAnswers.answer("www.example.test.", Type.A, 2, 600, now));
    answers.put(StoredAnswers.key("www.example.test.", Type.AAAA),
        StoredAnswers.answer("www.example.test.", Type.AAAA, 1, 600, now));
    for (int i = 0; i < 20; i++) {
      String n = "h" + i + ".example.test.";
      answers.put(StoredAnswers.key(n, Type.A), StoredAnswers.answer(n, Type.A, 1, 3600, i < 2 ? now - 7_200_000 : now));
    }
    StoredAnswers.fill(testKit, StoredAnswers.settings(name, path, 4, SyncMode.FULL), answers);
    return path;
  }

  @Test
  public void everyCacheSubcommandHasHelp() {
    for (String sub : List.of("flush", "stat", "dump", "check")) {
      Run r = shoal("cache", sub, "--help");
      assertEquals(r.err(), 0, r.status());
      assertTrue(r.out(), r.out().contains("Usage: shoal cache " + sub));
      assertTrue(r.out(), r.out().contains("--help"));
    }
    Run r = shoal("cache", "--help");
    assertEquals(0, r.status());
    for (String sub : List.of("flush", "stat", "dump", "check")) {
      assertTrue(r.out(), r.out().contains("  " + sub + "  "));
    }
  }

  @Test
  public void statShowsEveryShardAndTheTotals() throws Exception {
    Path path = cache("tools-stat");
    Run r = shoal("cache", "stat", "--path", path.toString());
    assertEquals(r.err(), 0, r.status());
    assertTrue(r.out(), r.out().contains("layout  format=1 key_hash=crc32 shard_count=4"));
    assertTrue(r.out(), r.out().contains("in use  no"));
    for (int i = 0; i < 4; i++) {
      assertTrue(r.out(), r.out().lines().anyMatch(l -> l.matches("shard-0\\d +\\d+ +\\d+ +\\d+ +16777216 +\\d+ +\\d+\\.\\d% +\\d+ +\\d+")));
    }
    String total = r.out().lines().filter(l -> l.startsWith("total")).findFirst().orElseThrow();
    // no expiry-index entries: a node keeps the expiry order in memory
    assertTrue(total, total.matches("total +22 +2 +0 +67108864 +\\d+ +\\d+\\.\\d%"));
  }

  @Test
  public void dumpPrintsOneLinePerAnswer() throws Exception {
    Path path = cache("tools-dump");
    Run all = shoal("cache", "dump", "--path", path.toString());
    assertEquals(all.err(), 0, all.status());
    assertEquals(all.out(), 22, all.out().lines().count());
    assertTrue(all.out(), all.out().lines().anyMatch(l ->
        l.matches("www\\.example\\.test\\. A IN - \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z (600|599) \\d+")));
    assertEquals(all.out(), 2, all.out().lines().filter(l -> l.contains(" expired ")).count());

    Run www = shoal("cache", "dump", "--path", path.toString(), "--name", "WWW.example.test", "--verbose");
    assertEquals(www.err(), 0, www.status());
    assertTrue(www.out(), www.out().contains("www.example.test. AAAA IN -"));
    assertTrue("the answer in presentation format:\n" + www.out(), www.out().contains(";; ANSWERS:"));
    assertTrue(www.out(), www.out().lines().anyMatch(l -> l.matches("    www\\.example\\.test\\.\\s+600\\s+IN\\s+A\\s+198\\.51\\..*")));
    assertFalse(www.out(), www.out().contains("h1.example.test."));

    Run two = shoal("cache", "dump", "--path", path.toString(), "--limit", "2");
    assertEquals(2, two.out().lines().count());
    assertEquals(2, shoal("cache", "dump", "--path", path.toString(), "--limit", "-1").status());
  }

  @Test
  public void checkIsCleanOrListsTheProblemsAndExitsOne() throws Exception {
    Path path = cache("tools-check");
    Run clean = shoal("cache", "check", "--path", path.toString());
    assertEquals(clean.out() + clean.err(), 0, clean.status());
    assertTrue(clean.out(), clean.out().contains(": 4 shards, 22 answers (2 expired)"));
    assertTrue(clean.out(), clean.out().contains("clean"));

    Path shard = path.resolve("shard-02");
    Files.delete(shard.resolve("data.mdb"));
    Run broken = shoal("cache", "check", "--path", path.toString());
    assertEquals(broken.out(), 1, broken.status());
    assertTrue(broken.out(), broken.out().contains("1 problem:\n  shard-02: has no data.mdb"));
    Run stat = shoal("cache", "stat", "--path", path.toString());
    assertEquals(1, stat.status());
    assertTrue(stat.out(), stat.out().contains("shard-02  has no data.mdb"));
  }

  @Test
  public void checkReportsATruncatedShardAndExitsOneInsteadOfCrashing() throws Exception {
    Path path = cache("tools-truncated");
    Path data = path.resolve("shard-01").resolve("data.mdb");
    long size = Files.size(data);
    try (var channel = java.nio.channels.FileChannel.open(data, java.nio.file.StandardOpenOption.WRITE)) {
      channel.truncate(size / 2);
    }
    // In this JVM: were the file mapped as it is, the SIGBUS would end the test run, not fail a test.
    Run check = shoal("cache", "check", "--path", path.toString());
    assertEquals(check.out() + check.err(), 1, check.status());
    assertTrue(check.out(), check.out().contains("1 problem:\n  shard-01: data.mdb is " + size / 2
        + " bytes but its meta page says"));
    assertTrue(check.out(), check.out().contains("truncated"));
    Run stat = shoal("cache", "stat", "--path", path.toString());
    assertEquals(1, stat.status());
    assertTrue(stat.out(), stat.out().contains("shard-01  data.mdb is"));
  }

  @Test
  public void flushOfflineNeedsANameOrAll() throws Exception {
    Path path = cache("tools-flush");
    String dir = path.toString();
    Run none = shoal("cache", "flush", "--path", dir);
    assertEquals(2, none.status());
    assertTrue(none.err(), none.err().contains("name the NAME to remove, or pass --all"));
    assertEquals(2, shoal("cache", "flush", "--path", dir, "--all", "www.example.test").status());
    assertEquals(2, shoal("cache", "flush", "--path", dir, "--admin", "127.0.0.1:8559", "www.example.test").status());
    assertEquals(2, shoal("cache", "flush", "--path", dir, "--type", "BOGUS", "www.example.test").status());
    assertEquals(2, shoal("cache", "flush", "--path", dir, "bad..name").status());
    assertEquals(2, shoal("cache", "flush", "--all").status());
    assertEquals("nothing was removed by the refusals", 22, shoal("cache", "dump", "--path", dir).out().lines().count());

    Run a = shoal("cache", "flush", "--path", dir, "--type", "aaaa", "WWW.example.test");
    assertEquals(a.err(), 0, a.status());
    assertTrue(a.out(), a.out().contains("removed 1 answers for WWW.example.test type AAAA from " + dir));
    assertEquals(1, shoal("cache", "dump", "--path", dir, "--name", "www.example.test").out().lines().count());

    Run all = shoal("cache", "flush", "--path", dir, "--all");
    assertEquals(all.err(), 0, all.status());
    assertTrue(all.out(), all.out().contains("removed all 21 answers from " + dir));
    assertEquals(0, shoal("cache", "check", "--path", dir).status());
    assertEquals("", shoal("cache", "dump", "--path", dir).out());
  }

  @Test
  public void directoriesTheToolsCannotUseExitTwo() throws Exception {
    Path root = tmp.newFolder().toPath();
    for (String sub : List.of("stat", "dump", "check")) {
      Run r = shoal("cache", sub, "--path", root.resolve("absent").toString());
      assertEquals(2, r.status());
      assertTrue(r.err(), r.err().contains("no such directory"));
      Run notCache = shoal("cache", sub, "--path", root.toString());
      assertEquals(2, notCache.status());
      assertTrue(notCache.err(), notCache.err().contains("is not a shoal cache: it has no shoal-cache.properties"));
    }
    assertEquals(2, shoal("cache", "flush", "--path", root.toString(), "--all").status());

    Path path = cache("tools-open");
    CacheSettings settings = StoredAnswers.settings("tools-open-again", path, 4, SyncMode.FULL);
    try (LmdbAnswerCache open = StoredAnswers.open(testKit, settings)) {
      for (String[] args : List.of(new String[] {"cache", "check", "--path", path.toString()},
          new String[] {"cache", "flush", "--path", path.toString(), "--all"},
          new String[] {"cache", "stat", "--path", path.toString()})) {
        Run r = shoal(args);
        assertEquals(r.err(), 2, r.status());
        assertTrue(r.err(), r.err().contains("is already open in this process"));
      }
      open.fill(StoredAnswers.key("late.example.test.", Type.A),
          StoredAnswers.answer("late.example.test.", Type.A, 1, 60, System.currentTimeMillis()))
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    assertEquals(23, shoal("cache", "dump", "--path", path.toString()).out().lines().count());
  }
}
