package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.SignedZoneServer;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * One node's DNSSEC denial proof serves every node: two clustered nodes in front of a signed
 * zone; once either has validated an NXDOMAIN, both hold its NSEC ranges and deny other names in
 * them on their own, without a query upstream or to each other.
 */
public class DenialSharingSpec extends JUnitSuite {
  private static final int NODES = 2;
  private static final AtomicInteger ids = new AtomicInteger();
  private static SignedZoneServer zone;
  private static Path dir;
  private static final List<TestNode> nodes = new ArrayList<>();

  @BeforeClass
  public static void formCluster() throws Exception {
    zone = new SignedZoneServer("shared.test.");
    for (String owner : List.of("a", "c", "e", "g", "i", "k", "m")) {
      zone.addA(owner + ".shared.test.", "192.0.2.1");
    }
    zone.sign();
    dir = Files.createTempDirectory("shoal-denial-sharing");
    Path anchor = zone.writeAnchor(dir);
    TestCluster cluster = TestCluster.of(NODES);
    for (int i = 0; i < NODES; i++) {
      nodes.add(TestNode.start(zone.hostPort(), String.join("\n",
          cluster.node(i, "node-" + i),
          "shoal.dnssec.validation = on",
          "shoal.dnssec.trust_anchors = [\"" + anchor + "\"]")));
    }
    TestCluster.awaitRing(nodes, NODES, 90);
  }

  @AfterClass
  public static void stop() throws Exception {
    for (TestNode n : nodes) {
      n.close();
    }
    zone.close();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private static Message ask(TestNode node, String name) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet() & 0xFFFF, name, Type.A, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    return DnsClient.udp(node.udp(), q);
  }

  private static double value(TestNode node, String metric, int label) {
    return Metrics.value(node.metrics().scrape(), metric, "node=\"node-" + label + "\"");
  }

  private static boolean everyNodeHoldsRanges() {
    try {
      for (int k = 0; k < NODES; k++) {
        if (value(nodes.get(k), "shoal_dnssec_denial_ranges", k) < 1) {
          return false;
        }
      }
      return true;
    } catch (IllegalStateException slowScrape) {
      return false; // a scrape that timed out on a busy machine: ask again until the deadline
    }
  }

  @Test
  public void aProofOneNodeValidatedDeniesNamesOnEveryNodeWithoutAQuery() throws Exception {
    // The first proof may be published before the nodes' topic subscriptions have met (the
    // receptionist gossips them); each try asks about a range not yet proven.
    String proven = null;
    for (String name : List.of("b", "d", "f", "h", "j")) {
      Message m = ask(nodes.get(0), name + ".shared.test.");
      assertEquals(Rcode.NXDOMAIN, m.getRcode());
      assertTrue("validated secure", m.getHeader().getFlag(Flags.AD));
      if (Await.until(Duration.ofSeconds(15), DenialSharingSpec::everyNodeHoldsRanges)) {
        proven = name;
        break;
      }
    }
    assertTrue("every node holds the ranges of a proof only one of them validated", proven != null);
    int upstream = zone.queries();
    for (int k = 0; k < NODES; k++) {
      TestNode node = nodes.get(k);
      Map<String, Double> before = node.metrics().settled();
      Message m = ask(node, proven + "x" + k + ".shared.test.");
      assertEquals(Rcode.NXDOMAIN, m.getRcode());
      assertTrue("AD", m.getHeader().getFlag(Flags.AD));
      assertTrue("the NSEC proof", m.getSection(Section.AUTHORITY).stream().anyMatch(r -> r.getType() == Type.NSEC));
      assertEquals("no query upstream from node-" + k, upstream, zone.queries());
      Map<String, Double> after = node.metrics().settled();
      String synthesized = "shoal_dnssec_synthesized_total";
      String[] labels = {"node=\"node-" + k + "\"", "type=\"nxdomain\""};
      assertEquals("node-" + k + " denied it itself, no hop to another node",
          Metrics.value(before, synthesized, labels) + 1, Metrics.value(after, synthesized, labels), 0.0);
    }
  }
}
