package io.shoal.admin;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.ShoalProcess;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * {@code POST /cache/load} over the real admin endpoint: bounded replies with true counts for
 * dumps of many bad answers, a full cache whose live answers stay, answers whose records do not
 * belong to their name refused, and a dump of a few hundred thousand answers streamed through a
 * node with a small heap.
 */
public class CacheLoadLimitsSpec extends JUnitSuite {
  private static final AtomicInteger IDS = new AtomicInteger(9000);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  /** Far more than ten problems, with their names and reasons, would take. */
  private static final int BOUNDED_REPLY = 8192;

  private static TestAuthServer auth;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
  }

  @AfterClass
  public static void stop() throws Exception {
    auth.close();
  }

  private static Message ask(InetSocketAddress server, String name) throws Exception {
    return DnsClient.udp(server, DnsClient.query(IDS.incrementAndGet() & 0xFFFF, name, Type.A, null));
  }

  /** Asks until the name is a hit (the upstream not asked again): it is in the cache. */
  private static void cached(InetSocketAddress server, String name) throws Exception {
    assertTrue(name + " never became a hit", Await.until(Duration.ofSeconds(10), () -> {
      try {
        int before = auth.queries(name, Type.A);
        return ask(server, name).getRcode() == Rcode.NOERROR && auth.queries(name, Type.A) == before;
      } catch (Exception e) {
        return false;
      }
    }));
  }

  /** A dump of {@code n} answers made by {@code answer} (index to text) as they are read, never held whole. */
  private static InputStream dump(long dumped, int n, IntFunction<String> answer) {
    return new InputStream() {
      private byte[] chunk = ("; shoal-dump v1 dumped=" + dumped + "\n").getBytes(StandardCharsets.UTF_8);
      private int at;
      private int next;

      @Override
      public int read() {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
      }

      @Override
      public int read(byte[] b, int off, int len) {
        while (at == chunk.length) {
          if (next > n) {
            return -1;
          }
          chunk = (next < n ? answer.apply(next) : "; end entries=" + n + "\n").getBytes(StandardCharsets.UTF_8);
          next++;
          at = 0;
        }
        int k = Math.min(len, chunk.length - at);
        System.arraycopy(chunk, at, b, off, k);
        at += k;
        return k;
      }
    };
  }

  /** An A answer for {@code name} with address {@code address}, expiring {@code ttl} seconds after {@code now}. */
  private static String aAnswer(String name, String address, long now, long ttl) {
    return "; shoal-answer " + name + " A IN key=- rcode=NOERROR flags=qr,rd,ra expires=" + (now + ttl * 1000) + "\n"
        + "; answer\n" + name + "\t" + ttl + "\tIN\tA\t" + address + "\n";
  }

  private static HttpResponse<String> load(int adminPort, String token, InputStream body) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/cache/load"))
        .timeout(Duration.ofMinutes(10))
        .header(AdminToken.HEADER, token)
        .header("Content-Type", "text/plain; charset=utf-8")
        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> body))
        .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode load(TestNode node, InputStream body) throws Exception {
    HttpResponse<String> r = load(node.server.adminAddress().getPort(), node.adminToken(), body);
    assertEquals(r.body(), 200, r.statusCode());
    return JSON.readTree(r.body());
  }

  @Test
  public void aDumpOfManyUnreadableAnswersGetsABoundedReplyWithTrueCounts() throws Exception {
    try (TestNode node = TestNode.start(auth.hostPort(), "")) {
      long now = node.clock.get();
      int n = 50_000;
      HttpResponse<String> r = load(node.server.adminAddress().getPort(), node.adminToken(),
          dump(now, n, i -> aAnswer("bad" + i + ".example.test.", "not-an-address-" + i, now, 60)));
      assertEquals(r.body(), 200, r.statusCode());
      assertTrue("reply of " + r.body().length() + " characters", r.body().length() < BOUNDED_REPLY);
      JsonNode summary = JSON.readTree(r.body());
      assertEquals(r.body(), n, summary.get("read").asLong());
      assertEquals(r.body(), n, summary.get("unreadable").asLong());
      assertEquals(r.body(), 0, summary.get("filled").asLong());
      JsonNode problems = summary.get("problems");
      assertEquals(r.body(), 10, problems.size());
      assertEquals(r.body(), n - 10, summary.get("problems_not_shown").asLong());
      // Each answer is three lines after the header: the first starts on line 2, the second on 5.
      assertEquals(r.body(), 2, problems.get(0).get("line").asLong());
      assertEquals(r.body(), 5, problems.get(1).get("line").asLong());
      assertEquals(r.body(), "bad0.example.test.", problems.get(0).get("name").asText());
      assertEquals(r.body(), "unreadable", problems.get(0).get("kind").asText());
    }
  }

  /** Loads 300 answers into a cache of 100 holding 20 live ones: 80 go in, the live ones stay. */
  private static void aLoadBeyondMaxEntriesKeepsTheLiveAnswers(String conf, String prefix) throws Exception {
    try (TestNode node = TestNode.start(auth.hostPort(), "shoal.caches.answers.max_entries = 100\n" + conf)) {
      for (int i = 0; i < 20; i++) {
        auth.addA(prefix + "live" + i + ".example.test.");
        cached(node.udp(), prefix + "live" + i + ".example.test.");
      }
      long now = node.clock.get();
      // Longer-lived than the live answers: evict_one would have thrown out the live ones first.
      JsonNode summary = load(node, dump(now, 300, i -> aAnswer(prefix + "loaded" + i + ".example.test.",
          "198.51.100." + (i % 250 + 1), now, 3600)));
      for (int i = 0; i < 20; i++) {
        String live = prefix + "live" + i + ".example.test.";
        int asked = auth.queries(live, Type.A);
        Message m = ask(node.udp(), live);
        assertEquals(Rcode.NOERROR, m.getRcode());
        assertEquals("192.0.2.7", m.getSection(Section.ANSWER).get(0).rdataToString());
        assertEquals(live + " still answered from the cache after the load", asked, auth.queries(live, Type.A));
      }
      assertEquals(summary.toString(), 300, summary.get("read").asLong());
      assertEquals(summary.toString(), 80, summary.get("filled").asLong());
      assertEquals(summary.toString(), 220, summary.get("no_room").asLong());
      assertEquals(summary.toString(), 0, summary.get("not_stored").asLong());
      // The cache holds the 20 live answers and the 80 loaded ones: its dump says so.
      HttpResponse<String> d = HTTP.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + node.server.adminAddress().getPort() + "/cache/dump"))
          .timeout(Duration.ofSeconds(30)).header(AdminToken.HEADER, node.adminToken()).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      assertTrue(d.body(), d.body().strip().endsWith("; end entries=100"));
      assertEquals(d.body(), 80, d.body().split("; shoal-answer " + prefix + "loaded", -1).length - 1);
      assertEquals(d.body(), 20, d.body().split("; shoal-answer " + prefix + "live", -1).length - 1);
    }
  }

  @Test
  public void aMemoryCacheFullOfLiveAnswersKeepsThemAndSaysHowManyFitted() throws Exception {
    aLoadBeyondMaxEntriesKeepsTheLiveAnswers("", "m");
  }

  @Test
  public void anLmdbCacheFullOfLiveAnswersKeepsThemAndSaysHowManyFitted() throws Exception {
    Path path = Files.createTempDirectory("shoal-load-lmdb");
    aLoadBeyondMaxEntriesKeepsTheLiveAnswers(String.join("\n",
        "shoal.caches.answers.backend = lmdb",
        "shoal.caches.answers.lmdb.path = \"" + path + "\"",
        "shoal.caches.answers.lmdb.shard_count = 2",
        "shoal.caches.answers.lmdb.map_size = 4MiB"), "l");
  }

  @Test
  public void answersWhoseRecordsDoNotBelongToTheirNameAreRefusedAndCounted() throws Exception {
    auth.addA("www.example.test.");
    try (TestNode node = TestNode.start(auth.hostPort(), "")) {
      long now = node.clock.get();
      long expires = now + 300_000;
      String text = "; shoal-dump v1 dumped=" + now + "\n"
          // Line 2: the poisoned answer, another name's record under www.example.test.
          + "; shoal-answer www.example.test. A IN key=- rcode=NOERROR flags=qr,rd,ra expires=" + expires + "\n"
          + "; answer\n"
          + "www.victim.test.\t300\tIN\tA\t192.0.2.66\n"
          // Line 5: a CNAME chain that breaks: the A record is not for the CNAME's target.
          + "; shoal-answer chain.example.test. A IN key=- rcode=NOERROR flags=qr,rd,ra expires=" + expires + "\n"
          + "; answer\n"
          + "chain.example.test.\t300\tIN\tCNAME\ttarget.example.test.\n"
          + "other.victim.test.\t300\tIN\tA\t192.0.2.67\n"
          // Line 9: a chain that holds, to a name in another zone.
          + "; shoal-answer alias.example.test. A IN key=- rcode=NOERROR flags=qr,rd,ra expires=" + expires + "\n"
          + "; answer\n"
          + "alias.example.test.\t300\tIN\tCNAME\thost.elsewhere.test.\n"
          + "host.elsewhere.test.\t300\tIN\tA\t192.0.2.68\n"
          // Line 13: a DNAME, its CNAME as the DNAME makes it, and the address.
          + "; shoal-answer www.old.example.test. A IN key=- rcode=NOERROR flags=qr,rd,ra expires=" + expires + "\n"
          + "; answer\n"
          + "old.example.test.\t300\tIN\tDNAME\tnew.example.test.\n"
          + "www.old.example.test.\t300\tIN\tCNAME\twww.new.example.test.\n"
          + "www.new.example.test.\t300\tIN\tA\t192.0.2.69\n"
          // Line 18: a negative answer carrying an NS record for another zone: that record is dropped.
          + "; shoal-answer nx.example.test. A IN key=- rcode=NXDOMAIN flags=qr,rd,ra expires=" + expires + "\n"
          + "; authority\n"
          + "example.test.\t300\tIN\tSOA\tns.example.test. hostmaster.example.test. 1 3600 600 86400 300\n"
          + "victim.test.\t300\tIN\tNS\tns.attacker.test.\n"
          + "; end entries=5\n";
      Metrics metrics = node.metrics();
      double refusedBefore = Metrics.value(metrics.settled(), "shoal_cache_load_answers_total", "outcome=\"refused\"");
      JsonNode summary = load(node, new java.io.ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
      // www.example.test. gets its own address from upstream, never the victim's record.
      Message www = ask(node.udp(), "www.example.test.");
      assertEquals(Rcode.NOERROR, www.getRcode());
      for (Record r : www.getSection(Section.ANSWER)) {
        assertFalse(www.toString(), r.getName().toString().contains("victim") || r.rdataToString().equals("192.0.2.66"));
      }
      assertEquals("192.0.2.7", www.getSection(Section.ANSWER).get(0).rdataToString());

      Message alias = ask(node.udp(), "alias.example.test.");
      assertEquals(alias.toString(), "192.0.2.68", alias.getSection(Section.ANSWER).get(1).rdataToString());
      Message dname = ask(node.udp(), "www.old.example.test.");
      assertEquals(dname.toString(), "192.0.2.69", dname.getSection(Section.ANSWER).get(2).rdataToString());
      Message nx = ask(node.udp(), "nx.example.test.");
      assertEquals(nx.toString(), Rcode.NXDOMAIN, nx.getRcode());
      for (Record r : nx.getSection(Section.AUTHORITY)) {
        assertFalse(nx.toString(), r.getName().toString().contains("victim"));
      }
      assertEquals(nx.toString(), 1, nx.getSection(Section.AUTHORITY).size());
      assertEquals("answered from the load", 0, auth.queries("nx.example.test.", Type.A));
      assertEquals(summary.toString(), 5, summary.get("read").asLong());
      assertEquals(summary.toString(), 2, summary.get("refused").asLong());
      assertEquals(summary.toString(), 3, summary.get("filled").asLong());
      assertEquals(summary.toString(), 1, summary.get("records_dropped").asLong());
      JsonNode problems = summary.get("problems");
      assertEquals(summary.toString(), 2, problems.size());
      assertEquals(summary.toString(), 2, problems.get(0).get("line").asLong());
      assertEquals(summary.toString(), "refused", problems.get(0).get("kind").asText());
      assertTrue(summary.toString(), problems.get(0).get("error").asText().contains("www.victim.test."));
      assertEquals(summary.toString(), 5, problems.get(1).get("line").asLong());
      assertEquals(refusedBefore + 2,
          Metrics.value(metrics.settled(), "shoal_cache_load_answers_total", "outcome=\"refused\""), 0.0);
    }
  }

  @Test
  public void aDumpOfHundredsOfThousandsOfAnswersStreamsThroughASmallHeap() throws Exception {
    int n = 200_000;
    auth.addA("kept.example.test.");
    int adminPort = TestNode.freePort();
    Path token = Files.createTempDirectory("shoal-admin").resolve("admin.token");
    // The node runs in its own JVM with a 256 MiB heap (ShoalProcess).
    ShoalProcess node = ShoalProcess.launch("serve",
        "-Dshoal.listen.udp=127.0.0.1:0", "-Dshoal.listen.tcp=127.0.0.1:0",
        "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(), "-Dshoal.admin.port=" + adminPort,
        "-Dshoal.admin.token_file=" + token, "-Dshoal.metrics.enabled=off",
        "-Dshoal.caches.answers.max_entries=1000");
    try {
      InetSocketAddress udp = node.awaitStarted(60).udp();
      cached(udp, "kept.example.test.");
      long now = System.currentTimeMillis();
      // Every tenth answer does not parse; the others are good, far more than the cache holds.
      HttpResponse<String> r = load(adminPort, AdminToken.read(token), dump(now, n, i -> i % 10 == 0
          ? aAnswer("bad" + i + ".example.test.", "not-an-address-" + i, now, 3600)
          : aAnswer("good" + i + ".example.test.", "198.51.100." + (i % 250 + 1), now, 3600)));
      assertEquals(r.body(), 200, r.statusCode());
      assertTrue("reply of " + r.body().length() + " characters", r.body().length() < BOUNDED_REPLY);
      JsonNode summary = JSON.readTree(r.body());
      assertEquals(r.body(), n, summary.get("read").asLong());
      assertEquals(r.body(), n / 10, summary.get("unreadable").asLong());
      assertEquals(r.body(), 999, summary.get("filled").asLong());
      assertEquals(r.body(), n - n / 10 - 999, summary.get("no_room").asLong());
      assertTrue(node.output(), node.process.isAlive());
      int asked = auth.queries("kept.example.test.", Type.A);
      assertEquals(Rcode.NOERROR, ask(udp, "kept.example.test.").getRcode());
      assertEquals("the live answer stayed", asked, auth.queries("kept.example.test.", Type.A));
      assertFalse(node.output(), node.output().contains("OutOfMemoryError"));
    } finally {
      node.process.destroy();
      node.exit(30);
    }
  }
}
