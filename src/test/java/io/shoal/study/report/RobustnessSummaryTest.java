package io.shoal.study.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.attack.PhaseRow;
import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.Scenario;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** summary.md of a robustness run: offered against answered, and shoal beside unbound phase by phase. */
class RobustnessSummaryTest {
  private static final Scenario CATALOG_SCENARIO = Scenario.load(Path.of("bench", "scenarios", "robustness.conf"));

  private static PhaseRow row(String member, String phase, double qps, double vs, long offered, long completed,
      long lost) {
    return new PhaseRow(member, phase, phase.endsWith("baseline") ? 0 : 1000, phase.endsWith("baseline") ? 0 : 50000,
        qps, vs, 0.5, 1.5, phase.startsWith("tcp") ? null : offered, completed, 0, lost, 100.0, 30L,
        member.equals("unbound") ? Map.of("requestlist_exceeded", 7L) : Map.of(), phase + " attack", null);
  }

  /** The rows with a zone client in every UDP phase, answered as given by phase, of 400 asked. */
  private static List<PhaseRow> withZoneClient(Map<String, PhaseRow.ZoneClientCounts> byMemberAndPhase) {
    return rows().stream().map(r -> new PhaseRow(r.member(), r.phase(), r.attackSent(), r.attackPerSecond(),
        r.honestQps(), r.qpsVsBaseline(), r.avgLatencyMs(), r.p99LatencyMs(), r.honestOffered(), r.honestCompleted(),
        r.honestServfail(), r.honestLost(), r.rssMaxMib(), r.fdsMax(), r.droppedByReason(), r.attackDetail(),
        byMemberAndPhase.get(r.member() + " " + r.phase()))).toList();
  }

  /** Both members through the UDP baseline and the two floods, and the TCP pair, at 10,000 q/s for 20 s. */
  private static List<PhaseRow> rows() {
    List<PhaseRow> rows = new ArrayList<>();
    rows.add(row("shoal-memory", "baseline", 10000, 1.0, 200000, 200000, 0));
    rows.add(row("shoal-memory", "tcp_baseline", 3400, 1.0, 0, 68000, 0));
    rows.add(row("shoal-memory", "miss_flood", 9900, 0.99, 200000, 198000, 0));
    rows.add(row("shoal-memory", "miss_flood_spread", 9800, 0.98, 200000, 196000, 0));
    rows.add(row("unbound", "baseline", 9990, 1.0, 200000, 199800, 0));
    rows.add(row("unbound", "tcp_baseline", 4000, 1.0, 0, 80000, 0));
    rows.add(row("unbound", "miss_flood", 4995, 0.5, 200000, 99900, 1234));
    return rows;
  }

  private static String render(List<PhaseRow> rows) {
    Map<String, String> setups = new LinkedHashMap<>();
    setups.put("shoal-memory", "shoal, memory cache");
    setups.put("unbound", "unbound, 1 thread, ratelimit: 3000");
    return RobustnessSummary.render(new RobustnessSummary.Context(CATALOG_SCENARIO, "2026-12-02T15:00:00Z", false,
        CATALOG_SCENARIO.recipe().load(), setups, Map.of(), new HostFacts("cpu", 2, "linux", "disk"), Map.of(),
        List.of("dnsperf ...")), rows);
  }

  @Test
  void shoalAndUnboundStandSideBySidePhaseByPhaseEachAgainstItsOwnBaseline() {
    String table = RobustnessSummary.sideBySide(rows());
    List<String> lines = table.lines().toList();
    assertEquals("| phase | shoal-memory vs own baseline | shoal-memory answered of offered | shoal-memory lost |"
        + " unbound vs own baseline | unbound answered of offered | unbound lost |", lines.get(0));
    // phases in the order the study runs them, one line each, whatever order the rows came in
    assertEquals("| baseline | 1.000 | 1.0000 | 0 | 1.000 | 0.9990 | 0 |", lines.get(2));
    assertEquals("| tcp_baseline | 1.000 | unpaced | 0 | 1.000 | unpaced | 0 |", lines.get(3));
    assertEquals("| miss_flood | 0.990 | 0.9900 | 0 | 0.500 | 0.4995 | 1234 |", lines.get(4));
    // unbound has no row for this phase: said so, not left blank as if it measured nothing
    assertEquals("| miss_flood_spread | 0.980 | 0.9800 | 0 | not run | | |", lines.get(5));
    assertEquals(6, lines.size());
  }

  @Test
  void theSummarySaysWhatWasOfferedAndWhatAnswered() {
    String md = render(rows());
    assertTrue(md.contains("Honest clients ask at a fixed 10000 queries/s in every UDP phase (dnsperf -Q 10000)"), md);
    assertTrue(md.contains("## Side by side"), md);
    assertTrue(md.contains("| miss_flood | 0.990 | 0.9900 | 0 | 0.500 | 0.4995 | 1234 |"), md);
    assertTrue(md.contains("- unbound miss_flood: honest clients ~5,000 qps, 50.0% of the 200,000 offered answered "
        + "(0.50x baseline)"), md);
    assertTrue(md.contains("| unbound | miss_flood | miss_flood attack | 4995 | 0.500 | 200000 | 0.4995 |"), md);
    // the flood's rate follows the paced rate: 5 x 10,000
    assertTrue(md.contains("- miss_flood: queries for unique names under the zone at 5.0 times the honest clients' "
        + "10000 queries/s (50000/s)"), md);
    assertTrue(md.contains("-Q 10000 -q 5000 (UDP phases)"), md);
    assertTrue(md.contains("A lost query holds one of dnsperf's 5000 outstanding slots (-q)"), md);
    assertTrue(md.contains("- member unbound: unbound, 1 thread, ratelimit: 3000"), md);
    assertTrue(md.contains("requestlist_exceeded=7"), md);
  }

  @Test
  void theZoneClientsShareAnsweredStandsBesideEachMembersFigures() {
    Map<String, PhaseRow.ZoneClientCounts> zone = new LinkedHashMap<>();
    zone.put("shoal-memory baseline", new PhaseRow.ZoneClientCounts(400, 400, 0, 0, 0));
    zone.put("shoal-memory miss_flood", new PhaseRow.ZoneClientCounts(400, 380, 20, 0, 0));
    zone.put("shoal-memory miss_flood_spread", new PhaseRow.ZoneClientCounts(400, 220, 170, 2, 8));
    zone.put("unbound baseline", new PhaseRow.ZoneClientCounts(400, 399, 0, 0, 1));
    zone.put("unbound miss_flood", new PhaseRow.ZoneClientCounts(400, 0, 100, 0, 300));
    List<PhaseRow> rows = withZoneClient(zone);
    List<String> lines = RobustnessSummary.sideBySide(rows).lines().toList();
    assertEquals("| phase | shoal-memory vs own baseline | shoal-memory answered of offered | shoal-memory lost |"
        + " shoal-memory zone client answered of asked | unbound vs own baseline | unbound answered of offered |"
        + " unbound lost | unbound zone client answered of asked |", lines.get(0));
    assertEquals("|---|---:|---:|---:|---:|---:|---:|---:|---:|", lines.get(1));
    assertEquals("| baseline | 1.000 | 1.0000 | 0 | 1.00 (400/400) | 1.000 | 0.9990 | 0 | 1.00 (399/400) |",
        lines.get(2));
    // no zone client beside the honest clients over TCP: said so
    assertEquals("| tcp_baseline | 1.000 | unpaced | 0 | none | 1.000 | unpaced | 0 | none |", lines.get(3));
    assertEquals("| miss_flood | 0.990 | 0.9900 | 0 | 0.95 (380/400) | 0.500 | 0.4995 | 1234 | 0.00 (0/400) |",
        lines.get(4));
    assertEquals("| miss_flood_spread | 0.980 | 0.9800 | 0 | 0.55 (220/400) | not run | | | |", lines.get(5));

    String md = render(rows);
    assertTrue(md.contains("the **zone client**, a downstream resolver asking the attacked zone now and then, asks "
        + "20 new names a second under `bench.test.` from 127.2.0.1"), md);
    assertTrue(md.contains("- shoal-memory miss_flood_spread: honest clients ~9,800 qps"), md);
    assertTrue(md.contains(" lost; the zone client 400 asked: 220 answered, 170 SERVFAIL, 2 other rcodes, 8 no reply;"),
        md);
    // without a zone client in any row (zone_client_qps = 0), the table has no column for it
    assertFalse(RobustnessSummary.sideBySide(rows()).contains("zone client"));
  }

  @Test
  void aSingleMemberRunHasNoSideBySideTable() {
    List<PhaseRow> shoalOnly = rows().stream().filter(r -> r.member().equals("shoal-memory")).toList();
    String md = render(shoalOnly);
    assertFalse(md.contains("## Side by side"), md);
    assertTrue(md.contains("- baseline: honest clients ~10,000 qps, 100.0% of the 200,000 offered answered"), md);
  }

  @Test
  void theChartHasOneSeriesPerMemberAndOneCategoryPerPhase() {
    org.jfree.data.category.DefaultCategoryDataset data = StudyCharts.robustnessData(rows());
    assertEquals(List.of("shoal-memory", "unbound"), data.getRowKeys());
    assertEquals(List.of("baseline", "tcp_baseline", "miss_flood", "miss_flood_spread"), data.getColumnKeys());
    assertEquals(4995.0, data.getValue("unbound", "miss_flood").doubleValue(), 1e-9);
    assertEquals(null, data.getValue("unbound", "miss_flood_spread"));
  }

  /** Both members through the DoT and DoH pairs: shoal closes its holders, unbound (here) keeps them. */
  private static List<PhaseRow> encryptedRows() {
    List<PhaseRow> rows = new ArrayList<>();
    rows.add(held("shoal-memory", "dot_baseline", 4000, 1.0, null));
    rows.add(held("shoal-memory", "dot_holders", 3800, 0.95, new PhaseRow.Held(2600, 1300, 5.2)));
    rows.add(held("shoal-memory", "doh_baseline", 3000, 1.0, null));
    rows.add(held("shoal-memory", "doh_holders", 2400, 0.8, new PhaseRow.Held(2600, 1300, 5.4)));
    rows.add(held("unbound", "dot_baseline", 5000, 1.0, null));
    rows.add(held("unbound", "dot_holders", 2500, 0.5, new PhaseRow.Held(1300, 0, null)));
    return rows;
  }

  private static PhaseRow held(String member, String phase, double qps, double vs, PhaseRow.Held h) {
    return new PhaseRow(member, phase, h == null ? 0 : h.opened(), h == null ? 0 : h.opened() / 14.0, qps, vs, 1.0,
        3.0, null, (long) qps * 10, 0, 0, 250.0, h == null ? 40L : 1100L,
        h != null && h.closedByServer() > 0 ? Map.of("tls_handshake_timeout", h.closedByServer()) : Map.of(),
        h == null ? "no attack" : "0 zero-length + 1300 idle TCP connections", null, h);
  }

  @Test
  void theHoldersTableShowsTheRateAgainstItsOwnStreamsBaselineAndWhatTheServerClosedHowFast() {
    List<String> lines = RobustnessSummary.holdersTable(encryptedRows()).lines().toList();
    assertEquals("| member | phase | honest qps, baseline | honest qps, holders | vs baseline | holders opened | closed by "
        + "server | median s to close | RSS max MiB | fds max | dropped |", lines.get(0));
    assertEquals("| shoal-memory | dot_holders | 4000 | 3800 | 0.950 | 2600 | 1300 | 5.2 | 250.0 | 1100 | "
        + "tls_handshake_timeout=1300 |", lines.get(2));
    assertEquals("| shoal-memory | doh_holders | 3000 | 2400 | 0.800 | 2600 | 1300 | 5.4 | 250.0 | 1100 | "
        + "tls_handshake_timeout=1300 |", lines.get(3));
    // none closed: no median, not a zero
    assertEquals("| unbound | dot_holders | 5000 | 2500 | 0.500 | 1300 | 0 |  | 250.0 | 1100 |  |", lines.get(4));
    assertEquals(5, lines.size());
    // no DoT or DoH phase: no table
    assertEquals("", RobustnessSummary.holdersTable(rows()));
  }

  @Test
  void theSummaryComparesEachHoldersPhaseWithItsOwnBaselineAndSaysWhatTheHoldersDid() {
    String side = RobustnessSummary.sideBySide(encryptedRows());
    assertTrue(side.contains("| dot_holders (vs dot_baseline) | 0.950 | unpaced | 0 | 0.500 | unpaced | 0 |"), side);
    assertTrue(side.contains("| doh_holders (vs doh_baseline) | 0.800 | unpaced | 0 | not run | | |"), side);
    List<String> glance = RobustnessSummary.atAGlance(encryptedRows());
    assertTrue(glance.get(1).startsWith("shoal-memory dot_holders: honest clients ~3,800 qps (0.95x dot_baseline)"),
        glance.get(1));
    assertTrue(glance.get(1).contains("; the attack sent 2600 connections (~186/s), 1300 closed by the server, "
        + "median 5.2 s after the connect;"), glance.get(1));
    assertTrue(glance.get(5).contains("1300 connections (~93/s), 0 closed by the server;"), glance.get(5));
    String md = render(encryptedRows());
    assertTrue(md.contains("## Silent DoT and DoH holders"), md);
    assertTrue(md.contains("In dot_holders and doh_holders, 1300 plain TCP connections"), md);
    assertTrue(md.contains("| shoal-memory | dot_holders | 4000 | 3800 | 0.950 | 2600 | 1300 | 5.2 |"), md);
    assertTrue(md.contains("- dot_holders, doh_holders: 1300 plain TCP connections"), md);
    assertTrue(md.contains("these four phases last 10 s"), md);
    assertFalse(render(rows()).contains("## Silent DoT and DoH holders"));
  }
}
