package io.shoal.admin;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.shoal.testing.ShoalCli;
import io.shoal.testing.ShoalCli.Run;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Await;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * {@code shoal cache dump} prints a running node's answers with their remaining TTLs, and {@code
 * shoal cache load} puts them into another node, which then answers them without its upstream.
 */
public class CacheDumpLoadSpec extends JUnitSuite {
  private static final String WWW = "www.example.test.";
  private static final String DEEP = "host.sub.example.test.";
  private static final String MISSING = "missing.example.test.";
  private static final AtomicInteger IDS = new AtomicInteger(4000);

  private static TestAuthServer auth;
  private static TestNode first;
  private static TestNode second;
  private static Path dir;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA(WWW);
    auth.addA(DEEP);
    first = TestNode.start(auth.hostPort(), "");
    second = TestNode.start(auth.hostPort(), "");
    dir = Files.createTempDirectory("shoal-dump");
  }

  @AfterClass
  public static void stop() throws Exception {
    first.close();
    second.close();
    auth.close();
  }

  private static Message ask(TestNode node, String name) throws Exception {
    return DnsClient.udp(node.udp(), DnsClient.query(IDS.incrementAndGet(), name, Type.A, null));
  }

  private static Run shoal(String... args) {
    return ShoalCli.run(args);
  }

  private static String[] through(TestNode node, String... args) {
    List<String> all = new java.util.ArrayList<>(List.of(args));
    all.addAll(List.of("--admin", "127.0.0.1:" + node.server.adminAddress().getPort(),
        "--token-file", node.adminTokenFile().toString()));
    return all.toArray(String[]::new);
  }

  /** The TTL of {@code name}'s A record in a dump, or -1 when it has none. */
  private static long dumpedTtl(String dump, String name) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\s+(\\d+)\\s+IN\\s+A\\s").matcher(dump);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  @Test
  public void aDumpLoadedIntoAFreshNodeIsAnsweredFromItsCache() throws Exception {
    assertEquals(Rcode.NOERROR, ask(first, WWW).getRcode());
    assertEquals(Rcode.NOERROR, ask(first, DEEP).getRcode());
    assertEquals(Rcode.NXDOMAIN, ask(first, MISSING).getRcode());

    Run fresh = shoal(through(first, "cache", "dump"));
    assertEquals(fresh.err(), 0, fresh.status());
    assertTrue(fresh.out(), fresh.out().startsWith("; shoal-dump v1 dumped="));
    assertTrue(fresh.out(), fresh.out().contains("; shoal-answer " + MISSING + " A IN key=- rcode=NXDOMAIN"));
    assertTrue(fresh.out(), fresh.out().strip().endsWith("; end entries=3"));
    assertEquals(fresh.out(), 60, dumpedTtl(fresh.out(), WWW));

    // The TTLs go down with the node's clock.
    first.advanceSeconds(10);
    Run aged = shoal(through(first, "cache", "dump"));
    assertEquals(aged.err(), 0, aged.status());
    assertEquals(aged.out(), 50, dumpedTtl(aged.out(), WWW));
    assertEquals(aged.out(), 50, dumpedTtl(aged.out(), DEEP));
    Path file = dir.resolve("answers.zone");
    Files.writeString(file, aged.out());

    Run under = shoal(through(first, "cache", "dump", "--name-suffix", "SUB.example.test"));
    assertEquals(under.err(), 0, under.status());
    assertEquals(under.out(), 50, dumpedTtl(under.out(), DEEP));
    assertEquals(under.out(), -1, dumpedTtl(under.out(), WWW));
    assertTrue(under.out(), under.out().strip().endsWith("; end entries=1"));

    // 25 seconds after the dump: the NXDOMAIN (30 s, 20 left at the dump) has expired, the A records have 25 left.
    second.clock.set(first.clock.get());
    second.advanceSeconds(25);
    int wwwAsked = auth.queries(WWW, Type.A);
    int deepAsked = auth.queries(DEEP, Type.A);
    int missingAsked = auth.queries(MISSING, Type.A);
    Run load = shoal(through(second, "cache", "load", file.toString()));
    assertEquals(load.err(), 0, load.status());
    JsonNode summary = new ObjectMapper().readTree(load.out());
    assertEquals(load.out(), 2, summary.get("filled").asInt());
    assertEquals(load.out(), 1, summary.get("expired").asInt());

    Message www = ask(second, WWW);
    assertEquals(Rcode.NOERROR, www.getRcode());
    long ttl = www.getSection(Section.ANSWER).get(0).getTTL();
    assertTrue("TTL " + ttl, ttl <= 25 && ttl >= 24);
    assertEquals(Rcode.NOERROR, ask(second, DEEP).getRcode());
    assertEquals("answered from the loaded cache", wwwAsked, auth.queries(WWW, Type.A));
    assertEquals("answered from the loaded cache", deepAsked, auth.queries(DEEP, Type.A));
    assertEquals(Rcode.NXDOMAIN, ask(second, MISSING).getRcode());
    assertEquals("the expired answer was not loaded", missingAsked + 1, auth.queries(MISSING, Type.A));
  }

  @Test
  public void anLmdbNodeDumpsWhatItsShardsCommitted() throws Exception {
    Path path = Files.createTempDirectory("shoal-dump-lmdb");
    String conf = String.join("\n",
        "shoal.caches.answers.backend = lmdb",
        "shoal.caches.answers.lmdb.path = \"" + path + "\"",
        "shoal.caches.answers.lmdb.shard_count = 2",
        "shoal.caches.answers.lmdb.map_size = 4MiB");
    try (TestNode lmdb = TestNode.start(auth.hostPort(), conf)) {
      assertEquals(Rcode.NOERROR, ask(lmdb, WWW).getRcode());
      assertEquals(Rcode.NOERROR, ask(lmdb, DEEP).getRcode());
      lmdb.advanceSeconds(7);
      // Write-behind: the answers reach the shards within the commit window.
      Run dump = Await.value(Duration.ofSeconds(10), () -> shoal(through(lmdb, "cache", "dump")),
          r -> r.out().contains("; end entries=2"));
      assertEquals(dump.err(), 0, dump.status());
      assertEquals(dump.out(), 53, dumpedTtl(dump.out(), WWW));
      assertEquals(dump.out(), 53, dumpedTtl(dump.out(), DEEP));
    }
  }

  @Test
  public void aTextThatIsNotADumpIsRefused() throws Exception {
    Path file = dir.resolve("not-a-dump.zone");
    Files.writeString(file, "www.example.test. 60 IN A 192.0.2.1\n");
    Run load = shoal(through(second, "cache", "load", file.toString()));
    assertEquals(load.out(), 2, load.status());
    assertTrue(load.err(), load.err().contains("not a shoal cache dump"));
  }

  @Test
  public void anAnswerThatDoesNotParseIsReportedAndTheRestLoaded() throws Exception {
    Path file = dir.resolve("damaged.zone");
    long now = second.clock.get();
    Files.writeString(file, "; shoal-dump v1 dumped=" + now + "\n"
        + "; shoal-answer bad.example.test. A IN key=- rcode=NOERROR flags=qr,rd,ra expires=" + (now + 60_000) + "\n"
        + "; answer\n"
        + "bad.example.test.\t60\tIN\tA\tnot-an-address\n"
        + "; shoal-answer good.example.test. A IN key=- rcode=NOERROR flags=qr,rd,ra expires=" + (now + 60_000) + "\n"
        + "; answer\n"
        + "good.example.test.\t60\tIN\tA\t192.0.2.99\n"
        + "; end entries=2\n");
    Run load = shoal(through(second, "cache", "load", file.toString()));
    assertEquals(load.err(), 1, load.status());
    JsonNode summary = new ObjectMapper().readTree(load.out());
    assertEquals(load.out(), 1, summary.get("filled").asInt());
    assertEquals(load.out(), 1, summary.get("unreadable").asInt());
    assertEquals(load.out(), 2, summary.get("problems").get(0).get("line").asInt());
    Message good = ask(second, "good.example.test.");
    assertEquals(Rcode.NOERROR, good.getRcode());
    assertEquals("192.0.2.99", good.getSection(Section.ANSWER).get(0).rdataToString());
    assertFalse("never asked upstream", auth.queries("good.example.test.", Type.A) > 0);
  }
}
