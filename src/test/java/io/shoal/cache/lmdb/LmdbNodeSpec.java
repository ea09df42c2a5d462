package io.shoal.cache.lmdb;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import io.shoal.wire.CacheKey;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** A node on the LMDB backend, through real sockets: a warm restart, and a shard that fails. */
public class LmdbNodeSpec extends JUnitSuite {
  private static final AtomicInteger ids = new AtomicInteger(1);

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static String lmdb(Path path, String fill) {
    return String.join("\n",
        "shoal.ingress.fill = " + fill,
        "shoal.caches.answers.backend = lmdb",
        "shoal.caches.answers.lmdb.path = \"" + path + "\"",
        "shoal.caches.answers.lmdb.shard_count = 2",
        "shoal.caches.answers.lmdb.sync = full",
        "shoal.caches.answers.lmdb.map_size = 4MiB");
  }

  private static Message ask(TestNode node, String name, int type) throws Exception {
    return DnsClient.udp(node.udp(), DnsClient.query(ids.getAndIncrement() & 0xFFFF, name, type, null));
  }

  private static long ttl(Message m) {
    return m.getSection(Section.ANSWER).get(0).getTTL();
  }

  @Test
  public void aRestartedNodeAnswersFromItsCacheWithTtlsCountedDown() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(new ARecord(TestAuthServer.name("long.example.test."), DClass.IN, 300, InetAddress.getByName("192.0.2.1")));
      auth.add(new AAAARecord(TestAuthServer.name("long.example.test."), DClass.IN, 300, InetAddress.getByName("2001:db8::1")));
      auth.add(new ARecord(TestAuthServer.name("short.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.2")));
      Path path = tmp.newFolder().toPath().resolve("answers");
      // write-through: a reply means its answer is committed, so the stop below loses nothing.
      String conf = lmdb(path, "write-through");
      long storedAt;
      try (TestNode first = TestNode.start(auth.hostPort(), conf)) {
        storedAt = first.clock.get();
        assertEquals(300, ttl(ask(first, "long.example.test.", Type.A)));
        assertEquals(300, ttl(ask(first, "long.example.test.", Type.AAAA)));
        assertEquals(60, ttl(ask(first, "short.example.test.", Type.A)));
        assertEquals(Rcode.NXDOMAIN, ask(first, "missing.example.test.", Type.A).getRcode());
      }
      assertEquals(1, auth.queries("long.example.test.", Type.A));

      try (TestNode second = TestNode.start(auth.hostPort(), conf)) {
        // Shards open in the background: a name asked before its shard is open would be a miss.
        assertEquals(0, flushUncached(second));
        second.clock.set(storedAt + 10_000);
        Message a = ask(second, "LONG.example.test.", Type.A);
        assertEquals(Rcode.NOERROR, a.getRcode());
        assertEquals("counted down by the 10 s since the first node stored it", 290, ttl(a));
        assertEquals("the client's spelling of the name", "LONG.example.test.", a.getQuestion().getName().toString());
        Record address = a.getSection(Section.ANSWER).get(0);
        assertEquals("192.0.2.1", ((ARecord) address).getAddress().getHostAddress());
        assertEquals(290, ttl(ask(second, "long.example.test.", Type.AAAA)));
        assertEquals(50, ttl(ask(second, "short.example.test.", Type.A)));
        assertEquals(Rcode.NXDOMAIN, ask(second, "missing.example.test.", Type.A).getRcode());
        for (String[] q : new String[][] {{"long.example.test.", "A"}, {"long.example.test.", "AAAA"},
            {"short.example.test.", "A"}, {"missing.example.test.", "A"}}) {
          assertEquals("the restarted node did not go upstream for " + q[0] + " " + q[1],
              1, auth.queries(q[0], Type.value(q[1])));
        }

        // Expiry is kept across the restart too: at 65 s the 60 s answer is gone, the 300 s one is not.
        second.advanceSeconds(55);
        assertEquals(60, ttl(ask(second, "short.example.test.", Type.A)));
        assertEquals(2, auth.queries("short.example.test.", Type.A));
        assertEquals(235, ttl(ask(second, "long.example.test.", Type.A)));
        assertEquals(1, auth.queries("long.example.test.", Type.A));
      }
    }
  }

  @Test
  public void aTruncatedShardStartsColdWithItsFilesSetAsideAndTheNodeServes() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      String[] inShard = new String[2];
      for (int i = 0; inShard[0] == null || inShard[1] == null; i++) {
        String name = "cut" + i + ".example.test.";
        auth.add(new ARecord(TestAuthServer.name(name), DClass.IN, 300, InetAddress.getByName("192.0.2." + (i + 1))));
        inShard[LmdbAnswerCache.shardOf(CacheKey.of(name, Type.A, DClass.IN, 0), 2)] = name;
      }
      Path path = tmp.newFolder().toPath().resolve("answers");
      String conf = lmdb(path, "write-through");
      try (TestNode first = TestNode.start(auth.hostPort(), conf)) {
        for (String name : inShard) {
          assertEquals(Rcode.NOERROR, ask(first, name, Type.A).getRcode());
        }
      }
      Path data = LmdbAnswerCache.shardDirectory(path, 1).resolve("data.mdb");
      long size = java.nio.file.Files.size(data);
      try (var channel = java.nio.channels.FileChannel.open(data, java.nio.file.StandardOpenOption.WRITE)) {
        channel.truncate(size / 2);
      }

      try (TestNode second = TestNode.start(auth.hostPort(), conf)) {
        // Shards open in the background: a name asked before its shard is open is a miss. The
        // flush is answered once every shard is up, the damaged one started again cold.
        assertEquals(0, flushUncached(second));
        awaitHit(second, auth, inShard[0]);
        assertEquals("the intact shard stayed warm", 1, auth.queries(inShard[0], Type.A));
        awaitHit(second, auth, inShard[1]);
        assertEquals("the damaged shard started cold: its name went upstream again", 2, auth.queries(inShard[1], Type.A));
        try (var siblings = java.nio.file.Files.list(path)) {
          Path aside = siblings.filter(p -> p.getFileName().toString().startsWith("shard-01.damaged-"))
              .findFirst().orElseThrow(() -> new AssertionError("no shard-01.damaged-* directory in " + path));
          assertEquals("the damaged file was kept as it was", size / 2, java.nio.file.Files.size(aside.resolve("data.mdb")));
        }
        double damaged = io.shoal.testing.Metrics.value(second.metrics().settled(),
            "shoal_lmdb_damaged_shards_total", "cache=\"answers\"", "shard=\"1\"");
        assertTrue("counted: " + damaged, damaged >= 1);
      }
      try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_READ)) {
        assertTrue("the shard's new files are sound", dir.check(System.currentTimeMillis()).clean());
      }
    }
  }

  @Test
  public void whileAShardIsDownItsNamesAreMissesNotErrors() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      String down = null;
      String up = null;
      for (int i = 0; down == null || up == null; i++) {
        String name = "svc" + i + ".example.test.";
        auth.add(new ARecord(TestAuthServer.name(name), DClass.IN, 300, InetAddress.getByName("192.0.2." + (i + 1))));
        int shard = LmdbAnswerCache.shardOf(CacheKey.of(name, Type.A, DClass.IN, 0), 2);
        if (shard == 1 && down == null) {
          down = name;
        } else if (shard == 0 && up == null) {
          up = name;
        }
      }
      String trigger = null;
      for (int i = 0; trigger == null; i++) {
        String name = "trigger" + i + ".example.test.";
        if (LmdbAnswerCache.shardOf(CacheKey.of(name, Type.A, DClass.IN, 0), 2) == 1) {
          trigger = name;
          auth.add(new ARecord(TestAuthServer.name(name), DClass.IN, 300, InetAddress.getByName("192.0.2.250")));
        }
      }
      Path path = tmp.newFolder().toPath().resolve("answers");
      // Shard 1's store fails its next commit once the test sets failNext: a disk gone bad.
      AtomicBoolean failNext = new AtomicBoolean();
      CacheShard.Opener failsOnCue = (settings, metrics) -> settings.shard() != 1
          ? ShardFiles.open(settings, metrics)
          : ShardFiles.open(settings, metrics, (s, env, db, m) -> new ShardStore(s, env, db, m) {
            @Override
            void commit(List<Fill> fills, long nowMillis, Outcome outcome) {
              if (failNext.getAndSet(false)) {
                throw new IllegalStateException("commit to shard 1 failed (injected by LmdbNodeSpec)");
              }
              super.commit(fills, nowMillis, outcome);
            }
          });
      try (TestNode node = TestNode.start(auth.hostPort(), lmdb(path, "write-behind"), failsOnCue)) {
        int downBefore = awaitHit(node, auth, down);
        int upBefore = awaitHit(node, auth, up);

        // Queued answers are served until their commit, even while their shard is down: flush a
        // name that is not cached, which commits everything queued before it, so that the
        // answer is in the environment that is about to fail.
        assertEquals(0, flushUncached(node));
        // One failure, on the commit of a new name's answer: the shard is down for its restart back-off.
        failNext.set(true);
        assertEquals(Rcode.NOERROR, ask(node, trigger, Type.A).getRcode());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int replies = 0;
        while (auth.queries(down, Type.A) == downBefore && System.nanoTime() < deadline) {
          for (String name : new String[] {down, up}) {
            Message m = ask(node, name, Type.A);
            assertEquals("never an error while the shard is down", Rcode.NOERROR, m.getRcode());
            assertEquals(1, m.getSection(Section.ANSWER).size());
            replies++;
          }
          Thread.sleep(10);
        }
        assertTrue("a name of the failed shard was a miss, answered from upstream (" + replies + " replies)",
            auth.queries(down, Type.A) > downBefore);
        assertEquals("the other shard's names stayed hits", upBefore, auth.queries(up, Type.A));

        // Answers are served from the moment they are filled, so a hit alone does not prove the
        // shard is back: a flush is answered only once it has reopened.
        assertEquals(0, flushUncached(node));
        // Once the shard is back, its names are hits again.
        awaitHit(node, auth, down);
      }
    }
  }

  /** Asks until two answers in a row came from the cache; returns the upstream count by then. */
  private static int awaitHit(TestNode node, TestAuthServer auth, String name) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    int before = -1;
    while (System.nanoTime() < deadline) {
      assertEquals(Rcode.NOERROR, ask(node, name, Type.A).getRcode());
      int now = auth.queries(name, Type.A);
      if (now == before) {
        return now;
      }
      before = now;
      Thread.sleep(20);
    }
    throw new AssertionError(name + " never became a hit");
  }

  /**
   * Flushes a name never cached through the node's admin endpoint: answered once every shard is
   * up and has committed what was queued before the flush.
   */
  private static int flushUncached(TestNode node) throws Exception {
    var admin = node.server.adminAddress();
    var request = java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + admin.getPort()
            + "/cache/flush?name=not-cached.example.test."))
        .header(io.shoal.admin.AdminToken.HEADER, node.adminToken())
        .timeout(Duration.ofSeconds(25)).POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build();
    var response = java.net.http.HttpClient.newHttpClient().send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(response.body(), 200, response.statusCode());
    var removed = java.util.regex.Pattern.compile("\"removed_here\":(\\d+)").matcher(response.body());
    assertTrue(response.body(), removed.find());
    return Integer.parseInt(removed.group(1));
  }
}
