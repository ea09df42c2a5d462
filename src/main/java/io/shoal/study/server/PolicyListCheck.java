package io.shoal.study.server;

import io.shoal.study.host.StudyException;
import io.shoal.study.measure.MetricsScrape;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The check, before a shoal member is measured, that it loaded the run's generated domain list:
 * listed names get the list's reply and are counted in shoal_policy_hits_total.
 */
public final class PolicyListCheck {
  private static final String POLICY_HITS = "shoal_policy_hits_total";

  private PolicyListCheck() {
  }

  /**
   * Asks for each of {@code listed} (names of the run's generated domain list) once and checks
   * that the list answered it: the reply its action gives, and one more count in
   * shoal_policy_hits_total for the list. Asking for the first and the last name of the file shows
   * that shoal read all of it. What was asked and seen goes to {@code audit}.
   *
   * @throws StudyException saying what was not as expected: the member would be measured without its list
   */
  public static void confirm(ShoalUnderTest node, List<String> listed, String action, Path audit)
      throws StudyException, IOException {
    String list = io.shoal.study.scenario.PolicyList.FILE;
    StringBuilder seen = new StringBuilder("# " + list + " (" + action + "): each listed name asked once\n");
    double hits = node.scrape(audit.resolveSibling("policy-check-before.txt"))
        .sum(POLICY_HITS, "list", list);
    for (String name : listed) {
      org.xbill.DNS.Message reply = DnsProbe.query(node.address(), name + ".", org.xbill.DNS.Type.A,
          org.xbill.DNS.DClass.IN);
      String got = reply == null ? "no reply" : org.xbill.DNS.Rcode.string(reply.getRcode())
          + (reply.getSection(org.xbill.DNS.Section.ANSWER).isEmpty() ? ", no answer" : ", an answer");
      seen.append(name).append(": ").append(got).append('\n');
      String expected = switch (action) {
        case "nxdomain" -> "NXDOMAIN, no answer";
        case "nodata" -> "NOERROR, no answer";
        case "refuse" -> "REFUSED, no answer";
        default -> "no reply";
      };
      if (!got.equals(expected)) {
        Files.writeString(audit, seen, StandardCharsets.UTF_8);
        throw new StudyException(node.label() + " did not apply its domain list " + list + ": " + name + " got " + got
            + ", expected " + expected + " (see " + audit.getFileName() + ")");
      }
    }
    // Kamon publishes counters on a timer: wait for the asks to be counted.
    long deadline = System.nanoTime() + ShoalUnderTest.SCRAPE_TIMEOUT.toNanos();
    double counted = 0;
    while (System.nanoTime() < deadline) {
      counted = MetricsScrape.parse(node.scrape()).sum(POLICY_HITS, "list", list) - hits;
      if (counted >= listed.size()) {
        break;
      }
      try {
        Thread.sleep(ShoalUnderTest.METRICS_POLL.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StudyException("interrupted while reading " + POLICY_HITS, e);
      }
    }
    seen.append(String.format(java.util.Locale.ROOT, "%s{list=\"%s\"}: %.0f more%n", POLICY_HITS, list, counted));
    Files.writeString(audit, seen, StandardCharsets.UTF_8);
    if (counted < listed.size()) {
      throw new StudyException(node.label() + ": " + POLICY_HITS + "{list=\"" + list + "\"} counted " + (long) counted
          + " of the " + listed.size() + " listed names asked (see " + audit.getFileName() + ")");
    }
  }
}
