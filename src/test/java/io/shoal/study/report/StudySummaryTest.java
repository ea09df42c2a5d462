package io.shoal.study.report;

import static io.shoal.study.report.StudyCsvTest.peerRow;
import static io.shoal.study.report.StudyCsvTest.shoalRow;
import static io.shoal.study.report.StudyCsvTest.withCpu;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.measure.DnsperfReportTest;
import io.shoal.study.timeline.KillTimeline;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The "At a glance" lines: computed from the rows, relative to the baseline member. */
class StudySummaryTest {

  @Test
  void thePageSaysTheRecipesJvmOptionsAndWhatAMemberAddsToThem() {
    io.shoal.study.scenario.Scenario s = io.shoal.study.scenario.Scenario.from("t", com.typesafe.config.ConfigFactory
        .parseString(io.shoal.study.scenario.MinimalRecipe.with("jvm_options = [\"-Xmx64m\"]")
            + "members = [{ name = a, kind = shoal }, { name = c1, kind = shoal, jvm_options = [\"-XX:TieredStopAtLevel=1\"] }]"));
    StringBuilder page = new StringBuilder();
    StudySummary.appendJvmOptions(page, s);
    assertEquals("- shoal JVM options: -Xmx64m\n- c1 adds: -XX:TieredStopAtLevel=1\n", page.toString());
  }

  @Test
  void slowerMembersAreSaidToCostAPercentageOfTheBaselinesQps() {
    List<String> lines = StudySummary.atAGlance(List.of(
        shoalRow("memory", null, 20000, 50.1, 0.02),
        shoalRow("lmdb-full", "full", 12600, 49.8, 0.35)), "memory", Map.of());
    assertEquals("memory (baseline): ~20,000 qps, hit rate 50.1%, fill mean 0.0200 ms.", lines.get(0));
    assertEquals("lmdb-full costs about 37% QPS versus memory (~12,600 vs ~20,000 qps); "
        + "hit rate 49.8% vs 50.1%; fill mean 0.350 ms vs 0.0200 ms.", lines.get(1));
  }

  @Test
  void fasterAndEqualMembersAreSaidSo() {
    List<String> lines = StudySummary.atAGlance(List.of(
        peerRow("unbound", 31000, 49.5),
        shoalRow("shoal-memory", null, 20000, 50.0, 0.02),
        peerRow("dnsmasq", 20040, 48.0)), "shoal-memory", Map.of());
    assertEquals("shoal-memory (baseline): ~20,000 qps, hit rate 50.0%, fill mean 0.0200 ms.", lines.get(0));
    assertEquals("unbound is about 55% faster than shoal-memory (~31,000 vs ~20,000 qps); hit rate 49.5% vs 50.0%.",
        lines.get(1));
    assertEquals("dnsmasq matches shoal-memory on QPS within 1% (~20,000 vs ~20,000 qps); hit rate 48.0% vs 50.0%.",
        lines.get(2));
  }

  @Test
  void moreThanDoubleIsSaidAsAMultiple() {
    List<String> lines = StudySummary.atAGlance(List.of(
        shoalRow("shoal-memory", null, 1937.1, 42.2, 0.0137), peerRow("unbound", 32107.0, 49.3)), "shoal-memory", Map.of());
    assertEquals("unbound reaches about 16.6x the QPS of shoal-memory (~32,100 vs ~1,940 qps); "
        + "hit rate 49.3% vs 42.2%.", lines.get(1));
  }

  @Test
  void aMissingBaselineFallsBackToTheFirstRowAndSaysSo() {
    List<String> lines = StudySummary.atAGlance(List.of(
        shoalRow("lmdb-full", "full", 1000, 40, 1.0), shoalRow("lmdb-none", "none", 1500, 41, 0.5)), "memory", Map.of());
    assertTrue(lines.get(0).contains("memory has no row"), lines.get(0));
    assertTrue(lines.get(2).startsWith("lmdb-none is about 50% faster than lmdb-full"), lines.get(2));
  }

  @Test
  void cpuPerQueryIsComparedWithTheBaselines() {
    List<String> lines = StudySummary.atAGlance(List.of(
        withCpu(shoalRow("memory", null, 20000, 50.1, 0.02), 0.0124),
        withCpu(peerRow("unbound", 31000, 49.5), 0.007),
        peerRow("dnsmasq", 20000, 48.0)), "memory", Map.of());
    assertEquals("memory (baseline): ~20,000 qps, hit rate 50.1%, fill mean 0.0200 ms, CPU 12.5 us per query.",
        lines.get(0));
    assertEquals("unbound is about 55% faster than memory (~31,000 vs ~20,000 qps); hit rate 49.5% vs 50.1%; "
        + "CPU per query 0.28x memory's (3.5 us vs 12.5 us).", lines.get(1));
    // a member without a CPU reading says nothing about CPU rather than a zero
    assertEquals("dnsmasq matches memory on QPS within 1% (~20,000 vs ~20,000 qps); hit rate 48.0% vs 50.1%.",
        lines.get(2));
  }

  @Test
  void heavyLossIsPointedOut() {
    ResultRow lossy = new ResultRow("lossy", null, "write-behind", 900, 9, 1000, 900, 100, 8, 50.0, 1L, 1L,
        null, null, null, null, null, null);
    List<String> lines = StudySummary.atAGlance(List.of(shoalRow("memory", null, 1000, 50, 0.02), lossy), "memory", Map.of());
    assertTrue(lines.stream().anyMatch(l -> l.equals(
        "lossy lost 100 of 1000 queries (10.0%): its QPS understates what it answered in time.")), lines.toString());
  }

  private static ClusterRow clusterRow(String member, int nodes, boolean cluster, double qps, long completed,
      long upstream, Double overheadMs) {
    return new ClusterRow(member, nodes, cluster, qps, 1.0, completed, completed, 0, upstream,
        ResultRow.fairHitRatePct(upstream, completed), 10L, 10L, 50.0, cluster ? 6L : null, cluster ? 0L : null,
        cluster ? 0L : null, cluster ? 0L : null, overheadMs, null, null, null, null, null, null, null, null, null, null);
  }

  /** A row of a capacity study: 30 s runs, CPU seconds and dnsperf's CPU seconds given. */
  private static ClusterRow capacityRow(String member, String group, int nodes, boolean cluster, double qps,
      long upstream, double cpuSeconds, double loadCpuSeconds, double p99) {
    long completed = Math.round(qps * 30);
    return new ClusterRow(member, nodes, cluster, qps, 1.0, completed, completed, 0, upstream,
        ResultRow.fairHitRatePct(upstream, completed), 10L, 10L, 50.0, cluster ? 0L : null, cluster ? 0L : null,
        cluster ? 0L : null, cluster ? 0L : null, null, cpuSeconds, cpuSeconds * 1e6 / completed, group, 0.25, p99,
        loadCpuSeconds, null, null, null, null);
  }

  @Test
  void aCapacityLineSaysHowMuchOfTheNodesCpuTheJitCompilerTook() {
    ClusterRow one = capacityRow("hit-1", "hit", 1, false, 10000, 0, 8.0, 3.0, 20.0);
    ClusterRow compiling = new ClusterRow(one.member(), 1, false, one.achievedQps(), one.avgLatencyMs(), one.sent(),
        one.completed(), one.lost(), one.upstreamQueries(), one.fairHitRatePct(), one.cacheHits(), one.cacheMisses(),
        one.cacheHitRatePct(), null, null, null, null, null, one.cpuSeconds(), one.cpuMicrosPerQuery(), one.group(),
        one.cpuQuota(), one.p99LatencyMs(), one.loadCpuSeconds(), null, null, null, 2.0);
    String line = StudySummary.clusterAtAGlance(List.of(compiling)).get(0);
    assertTrue(line.contains("of their quota, 25% of that in JIT compiler threads;"), line);
    assertFalse(StudySummary.clusterAtAGlance(List.of(one)).get(0).contains("JIT"));
  }

  @Test
  void capacityLinesCompareEachWorkloadWithItsOwnSingleNode() {
    List<String> lines = StudySummary.clusterAtAGlance(List.of(
        capacityRow("hit-1", "hit", 1, false, 10000, 0, 7.5, 3.0, 20.0),
        capacityRow("hit-cluster-3", "hit", 3, true, 25000, 0, 21.0, 9.0, 40.0),
        capacityRow("churn-1", "churn", 1, false, 5000, 75000, 7.5, 1.5, 30.0),
        capacityRow("churn-independent-3", "churn", 3, false, 15000, 225000, 22.5, 4.5, 30.0),
        capacityRow("churn-cluster-3", "churn", 3, true, 11000, 30000, 22.5, 3.3, 60.0)));
    assertEquals(List.of(
        "hit: hit-1 (1 node, 0.25 CPU each): ~10,000 qps at 25.0 us of CPU per answered query; the nodes used 100% "
            + "of their quota; p99 latency 20.000 ms; its dnsperf process used 0.10 CPU, 10.0 us per answered query.",
        "hit: hit-cluster-3 (3 nodes, cluster, 0.25 CPU each): 2.50x the QPS of hit-1 (goal 2.4x: met); 1.12x the "
            + "CPU per answered query (28.0 vs 25.0 us) (goal at most 1.1x: not met); the nodes used 93% of their "
            + "quota; p99 latency 40.000 ms; its 3 dnsperf processes (one per node) used 0.30 CPU, 0.10 per node, 12.0 "
            + "us per answered query.",
        "churn-cluster-3 sent 90.9 upstream queries per 1,000 answered vs 500.0 for churn-independent-3: 5.5x fewer "
            + "(goal: about 3x fewer, the node count); 30000 vs 225000 upstream queries in all, hit rate 90.9% vs "
            + "50.0%."),
        lines.subList(0, 3));
    assertTrue(lines.get(4).startsWith("churn: churn-independent-3 (3 nodes, 0.25 CPU each): 3.00x the QPS of "
        + "churn-1; 1.00x the CPU"), lines.get(4));
    assertTrue(lines.get(5).startsWith("churn: churn-cluster-3 (3 nodes, cluster, 0.25 CPU each): 2.20x the QPS of "
        + "churn-1 (goal 2.4x: not met)"), lines.get(5));
    assertEquals(6, lines.size(), lines.toString());
  }

  /** {@link #capacityRow} for a cluster paced at {@code perNode} qps per dnsperf, with its owner lookups' quantiles. */
  private static ClusterRow pacedRow(String member, double qps, Double p50, Double p90, int perNode) {
    ClusterRow r = capacityRow(member, "churn", 3, true, qps, 0, 18.0, 2.7, 5.0);
    return new ClusterRow(r.member(), r.nodes(), r.cluster(), r.achievedQps(), r.avgLatencyMs(), r.sent(),
        r.completed(), r.lost(), r.upstreamQueries(), r.fairHitRatePct(), r.cacheHits(), r.cacheMisses(),
        r.cacheHitRatePct(), 6000L, 0L, 0L, 0L, null, r.cpuSeconds(), r.cpuMicrosPerQuery(), r.group(),
        r.cpuQuota(), r.p99LatencyMs(), r.loadCpuSeconds(), p50, p90, perNode, r.jitCpuSeconds());
  }

  @Test
  void aPacedClusterIsNotComparedWithOneNodeAsACapacityAndItsOwnerLookupsMeetTheirGoalOrNot() {
    List<String> lines = StudySummary.clusterAtAGlance(List.of(
        capacityRow("churn-1", "churn", 1, false, 5000, 75000, 7.5, 1.5, 30.0),
        capacityRow("churn-cluster-3", "churn", 3, true, 11000, 30000, 22.5, 3.3, 60.0),
        pacedRow("churn-cluster-3-paced", 8800, 0.5, 2.0, 2933)));
    assertEquals("churn-cluster-3-paced: owner lookups over the measured run took at most 0.500 ms at the median "
        + "and at most 2.000 ms at p90 (bucket bounds of shoal_cluster_remote_lookup_seconds, all nodes' histograms "
        + "summed); paced at 2933 qps per node: the load it was offered, not a capacity figure (goal p90 at most "
        + "5.000 ms: met).", lines.get(0));
    assertTrue(lines.get(2).startsWith("churn: churn-cluster-3 (3 nodes, cluster, 0.25 CPU each): 2.20x the QPS of "
        + "churn-1 (goal 2.4x: not met)"), lines.get(2));
    // no capacity verdict for the paced member: its QPS is what it was offered
    assertEquals("churn: churn-cluster-3-paced (3 nodes, cluster, 0.25 CPU each): 1.76x the QPS of churn-1 (paced "
        + "at 2933 qps per node: the load it was offered, not a capacity figure); 1.36x the CPU per answered query "
        + "(68.2 vs 50.0 us); the nodes used 80% of their quota; p99 latency 5.000 ms; its 3 dnsperf processes "
        + "(one per node) used 0.09 CPU, 0.03 per node, 10.2 us per answered query.", lines.get(3));
    assertEquals(4, lines.size(), lines.toString());
    List<String> slow = StudySummary.clusterAtAGlance(List.of(pacedRow("p", 8800, 2.0, 10.0, 2933)));
    assertTrue(slow.get(0).endsWith("at most 10.000 ms at p90 (bucket bounds of shoal_cluster_remote_lookup_seconds, "
        + "all nodes' histograms summed); paced at 2933 qps per node: the load it was offered, not a capacity figure "
        + "(goal p90 at most 5.000 ms: not met)."), slow.get(0));
    // an unpaced cluster's lookups are reported without the goal, which is for a cluster below its capacity
    ClusterRow saturated = capacityRow("c", "churn", 3, true, 11000, 0, 22.5, 3.3, 60.0);
    ClusterRow timed = new ClusterRow(saturated.member(), 3, true, 11000, 1.0, 330000, 330000, 0, 0, 100.0, 10L,
        10L, 50.0, 6000L, 0L, 0L, 0L, null, null, null, "churn", 0.25, null, null, 10.0, Double.POSITIVE_INFINITY, null, null);
    assertEquals(List.of("c: owner lookups over the measured run took at most 10.000 ms at the median and at most "
        + "more than the last bucket at p90 (bucket bounds of shoal_cluster_remote_lookup_seconds, all nodes' "
        + "histograms summed)."), StudySummary.clusterAtAGlance(List.of(timed)));
  }

  @Test
  void aPacedMembersLineAgainstTheBaselineSaysItsQpsIsNoCapacity() {
    List<String> lines = StudySummary.atAGlance(List.of(
        shoalRow("churn-1", null, 5000, 50.0, 0.02),
        shoalRow("churn-cluster-3-paced", null, 8800, 99.0, 0.02)), "churn-1",
        Map.of("churn-cluster-3-paced", new io.shoal.study.scenario.Pace("churn-cluster-3", 0.8)));
    assertEquals("churn-cluster-3-paced is about 76% faster than churn-1 (~8,800 vs ~5,000 qps; paced at 0.8x "
        + "churn-cluster-3's QPS, the load it was offered, not a capacity figure); hit rate 99.0% vs 50.0%; fill mean "
        + "0.0200 ms vs 0.0200 ms.", lines.get(1));
  }

  @Test
  void clusterLinesCompareUpstreamQueriesPerAnsweredQueryAndQpsWithOneNode() {
    List<String> lines = StudySummary.clusterAtAGlance(List.of(
        clusterRow("memory", 1, false, 20000, 600000, 300000, null),
        clusterRow("independent-3", 3, false, 36000, 1080000, 540000, null),
        clusterRow("cluster-3", 3, true, 30000, 900000, 160000, 0.3456)));
    assertEquals("cluster-3 sent 177.8 upstream queries per 1,000 answered vs 500.0 for independent-3: 2.8x fewer "
        + "(goal: about 3x fewer, the node count); 160000 vs 540000 upstream queries in all, hit rate 82.2% vs 50.0%.",
        lines.get(0));
    assertEquals("independent-3 (3 nodes) reaches 1.80x the QPS of memory (1 node): ~36,000 vs ~20,000 qps.",
        lines.get(1));
    assertEquals("cluster-3 (3 nodes, cluster) reaches 1.50x the QPS of memory (1 node): ~30,000 vs ~20,000 qps.",
        lines.get(2));
    assertEquals("cluster-3: asking the owner node adds about 0.346 ms to a query (under the 1.000 ms goal on "
        + "loopback; idle probe, see \"Remote-lookup overhead\").", lines.get(3));
    assertEquals(4, lines.size());
  }

  @Test
  void refusedOwnerLookupsArePointedOut() {
    ClusterRow refused = new ClusterRow("cluster-3", 3, true, 300, 1.0, 1000, 1000, 0, 500,
        ResultRow.fairHitRatePct(500, 1000), 10L, 10L, 50.0, 0L, 0L, 0L, 40L, null, null, null, null, null, null, null,
        null, null, null, null);
    assertEquals(List.of("cluster-3: 40 remote lookups were refused (the owner's access_control does not allow the "
        + "other nodes; the node went upstream itself)."), StudySummary.clusterAtAGlance(List.of(refused)));
  }

  @Test
  void aClusterThatSendsMoreUpstreamSaysMore() {
    List<String> lines = StudySummary.clusterAtAGlance(List.of(
        clusterRow("independent-3", 3, false, 300, 1000, 500, null),
        clusterRow("cluster-3", 3, true, 300, 1000, 1000, 2.5)));
    assertTrue(lines.get(0).contains("2.0x more (goal: about 3x fewer"), lines.get(0));
    assertTrue(lines.get(1).contains("over the 1.000 ms goal"), lines.get(1));
    assertEquals(List.of(), StudySummary.clusterAtAGlance(List.of()));
  }

  @Test
  void aMinorityKillSaysWhenTheSurvivorWasDowned() {
    KillTimeline.Event kill = new KillTimeline.Event("cluster-3", "node-1 and node-2", "9584 and 9587", 5.0,
        List.of("node-0"), java.time.Duration.ofSeconds(2), 8.8, 30.2, 35L, true);
    assertEquals("node-0 marked node-1 and node-2 unreachable 8.8 s after the kill (from then on it owns every "
        + "name), and, a minority, was downed by the Split Brain Resolver 30.2 s after the kill: its membership "
        + "started over while its DNS side went on answering", StudySummary.departure(kill));
  }

  @Test
  void killLinesFromARecordedKillTest() throws java.io.IOException {
    List<KillTimeline.Second> seconds = KillTimeline.merge(List.of(
        DnsperfReportTest.resource("cluster/dnsperf-kill-node-0.txt"),
        DnsperfReportTest.resource("cluster/dnsperf-kill-node-1.txt")), 1795983062.676, 1.0);
    KillTimeline.Event kill = new KillTimeline.Event("cluster-3", "node-2", "29903", 4.951,
        List.of("node-0", "node-1"), java.time.Duration.ofSeconds(2), 8.742, 30.152, 0L, false);
    List<String> lines = StudySummary.killAtAGlance(kill, seconds);
    assertEquals("Kill test: node-2 of cluster-3 killed with SIGKILL 5.0 s into the run (second 5); before it "
        + "~119 qps at 951.721 ms mean latency.", lines.get(0));
    assertEquals("Kill test: node-2 was marked unreachable 8.7 s after the kill (from then on its names belong to "
        + "the others) and left the cluster 30.2 s after it (downed by the Split Brain Resolver).", lines.get(1));
    assertEquals("Kill test: QPS fell below 90% of the pre-kill level in second 7 and was back within 10% from "
        + "second 9: 2 s slowed down.", lines.get(2));
    assertEquals("Kill test: from the kill on, 1163 queries lost (unanswered after 2 s) and 0 SERVFAIL answers, in "
        + "7 seconds (the survivors counted 0 SERVFAIL replies over the whole run); the slowest second (6) averaged "
        + "822.065 ms.", lines.get(3));
  }

  @Test
  void noRowsSaysSo() {
    assertEquals(List.of("No member produced a result."), StudySummary.atAGlance(List.of(), "memory", Map.of()));
  }

  @Test
  void ratesAreRoundedToThreeSignificantDigits() {
    assertEquals("12,300", StudySummary.approx(12345.6));
    assertEquals("1,540", StudySummary.approx(1539.3));
    assertEquals("123,000", StudySummary.approx(122912.7));
    assertEquals("98", StudySummary.approx(98.2));
    assertEquals("0.5", StudySummary.approx(0.5));
  }

  @Test
  void theTakeawayAndTheRatioTableAreMediansOfTheRoundsAgainstTheBaseline() {
    List<RoundRow> rounds = List.of(
        new RoundRow(1, row("unbound", 100, 8.0)), new RoundRow(1, row("fast", 200, 2.0)), new RoundRow(1, row("lean", 90, 1.0)),
        new RoundRow(2, row("unbound", 100, 8.0)), new RoundRow(2, row("fast", 120, 4.0)), new RoundRow(2, row("lean", 80, 2.0)),
        new RoundRow(3, row("unbound", 200, 8.0)), new RoundRow(3, row("fast", 300, 3.0)), new RoundRow(3, row("lean", 100, 1.0)));
    List<ResultRow> median = List.of(row("unbound", 100, 8.0), row("fast", 200, 2.0), row("lean", 90, 1.0));
    List<RatioGlance.Ratio> ratios = RatioGlance.ratios(median, rounds, "unbound");
    assertEquals(List.of("fast", "lean"), ratios.stream().map(RatioGlance.Ratio::member).toList());
    assertEquals(1.5, ratios.get(0).qps(), 1e-9);
    assertEquals(1.2, ratios.get(0).qpsLow(), 1e-9);
    assertEquals(0.375, ratios.get(0).cpu(), 1e-9);
    assertEquals("Beside unbound, fast answered the most: 1.50x its QPS (median of 3 rounds, 1.20x to 2.00x) at 0.38x "
        + "its CPU per query; lean spent the least CPU per query, 0.13x unbound's.",
        RatioGlance.takeaway(ratios, "unbound", java.util.Set.of(), List.of()));
    // a paced member's QPS is what it was offered: never "the most"
    assertTrue(RatioGlance.takeaway(ratios, "unbound", java.util.Set.of("fast"), List.of()).startsWith("Beside unbound, lean answered"));
    String table = RatioGlance.table(ratios, "unbound", java.util.Set.of(), List.of());
    assertTrue(table.contains("| fast | 1.50x | 1.20x–2.00x (3 rounds) | 0.38x | 0.25x–0.50x (3 rounds) |"), table);
    // one round: the ratio of the median rows, "one run"
    List<RatioGlance.Ratio> single = RatioGlance.ratios(median, List.of(), "unbound");
    assertEquals(2.0, single.get(0).qps(), 1e-9);
    assertTrue(RatioGlance.table(single, "unbound", java.util.Set.of(), List.of()).contains("| fast | 2.00x | one run |"));
  }

  @Test
  void withManyRoundsTheSpreadAlsoGivesTheMiddleHalfOfThem() {
    // nine rounds: b answers 0.5x to 1.3x of a, in steps of 0.1x; CPU the other way round
    List<RoundRow> rounds = new java.util.ArrayList<>();
    for (int i = 0; i < 9; i++) {
      rounds.add(new RoundRow(i + 1, row("a", 1000, 2.0)));
      rounds.add(new RoundRow(i + 1, row("b", 500 + 100 * i, 2.0 * (1.3 - 0.1 * i))));
    }
    List<RatioGlance.Ratio> ratios = RatioGlance.ratios(List.of(row("a", 1000, 2.0), row("b", 900, 2.0)), rounds, "a");
    assertEquals(0.9, ratios.get(0).qps(), 1e-9);
    String table = RatioGlance.table(ratios, "a", java.util.Set.of(), List.of());
    assertTrue(table.contains("| b | 0.90x | 0.50x–1.30x (9 rounds; middle half 0.70x–1.10x) | 0.90x | "
        + "0.50x–1.30x (9 rounds; middle half 0.70x–1.10x) |"), table);
    assertEquals(0.75, RatioGlance.quantile(List.of(1.0, 0.5), 0.5), 1e-9);
  }

  @Test
  void anAaMemberIsReadAsTheRunsSpreadNotAsAResult() {
    List<RoundRow> rounds = List.of(
        new RoundRow(1, row("memory", 100, 3.0)), new RoundRow(1, row("again", 120, 3.0)), new RoundRow(1, row("lmdb", 90, 3.3)),
        new RoundRow(2, row("memory", 100, 3.0)), new RoundRow(2, row("again", 90, 3.0)), new RoundRow(2, row("lmdb", 100, 3.3)));
    List<ResultRow> median = List.of(row("memory", 100, 3.0), row("again", 90, 3.0), row("lmdb", 90, 3.3));
    List<RatioGlance.Ratio> ratios = RatioGlance.ratios(median, rounds, "memory");
    // the A/A member answered the most (1.05x), but it is the baseline again: lmdb is the result
    assertEquals("Beside memory, lmdb answered the most: 0.95x its QPS (median of 2 rounds, 0.90x to 1.00x) at 1.10x "
        + "its CPU per query. again, the baseline again (same build and configuration), came out at 1.05x its QPS "
        + "(0.90x–1.20x (2 rounds)) and 1.00x its CPU per query: differences of that order are the host's, not the "
        + "members'.", RatioGlance.takeaway(ratios, "memory", java.util.Set.of(), List.of("again")));
    String table = RatioGlance.table(ratios, "memory", java.util.Set.of(), List.of("again"));
    assertTrue(table.contains("| again (A/A: memory again) | 1.05x |"), table);
  }

  @Test
  void thePageOpensWithTheQuestionWhenItMattersAndTheTakeaway() {
    io.shoal.study.scenario.Scenario s = io.shoal.study.scenario.Scenario.load(
        java.nio.file.Path.of("bench", "scenarios", "query_path.conf"));
    List<ResultRow> rows = List.of(row("unbound", 100, 8.0), row("shoal-memory", 200, 2.0));
    String md = StudySummary.render(new StudySummary.Context(s, "2026-12-04T05:31:01Z", false, s.recipe().load(),
        new io.shoal.study.host.HostFacts("cpu", 2, "linux", "disk"), java.util.Map.of(), java.util.Map.of(),
        java.util.Map.of(), List.of("dnsperf ..."), List.of(), java.util.Map.of(), null, null, List.of()), rows);
    assertTrue(md.startsWith("# Study `query_path`\n\n**Question.** " + s.page().question() + "\n\n**When this matters.** "
        + s.page().whenThisMatters() + "\n"), md);
    assertTrue(md.contains("## Takeaway\n\nBeside unbound, shoal-memory answered the most: 2.00x its QPS at 0.25x its CPU "
        + "per query.\n"), md);
    assertTrue(md.contains("| shoal-memory | 2.00x | one run | 0.25x | one run |"), md);
    assertTrue(md.contains("![cpu_per_query.png](cpu_per_query.png)"), md);
    assertTrue(md.contains("## What was varied: the members") && md.contains("## Held constant"), md);
    assertTrue(md.contains("[raw.tar.xz](raw.tar.xz)"), md);
  }

  @Test
  void aGroupedScenarioComparesOnlyTheBaselinesGroupInItsTakeaway() {
    io.shoal.study.scenario.Scenario s = io.shoal.study.scenario.Scenario.load(
        java.nio.file.Path.of("bench", "scenarios", "cluster_capacity.conf"));
    List<ResultRow> rows = List.of(row("hit-1", 100, 8.0), row("hit-cluster-3", 250, 9.0), row("churn-1", 30, 20.0),
        row("churn-cluster-3", 900, 20.0));
    String md = StudySummary.render(new StudySummary.Context(s, "2026-12-03T07:04:25Z", false, s.recipe().load(),
        new io.shoal.study.host.HostFacts("cpu", 2, "linux", "disk"), java.util.Map.of(), java.util.Map.of(),
        java.util.Map.of(), List.of(), List.of(), java.util.Map.of(), null, null, List.of()), rows);
    // churn-cluster-3 has the highest QPS over hit-1, but ran another workload
    assertTrue(md.contains("Beside hit-1, hit-cluster-3 answered the most: 2.50x its QPS at 1.13x its CPU per query. "
        + "(Group hit only; the cluster section compares each group within itself.)"), md);
    assertFalse(md.contains("| churn-cluster-3 | 9.00x"), md);
  }

  private static ResultRow row(String member, double qps, double cpuUs) {
    return new ResultRow(member, null, "-", qps, 1.0, 100, 100, 0, 1, 100.0, 100L, 0L, null, null, null, null, 1.0, cpuUs);
  }
}
