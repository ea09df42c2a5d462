package io.shoal.study.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.attack.PhaseRow;
import io.shoal.study.measure.ProcessCpu;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The study's CSV files: results.csv's fixed header and format, and a lossless round trip of rows. */
class StudyCsvTest {

  static ResultRow shoalRow(String member, String sync, double qps, double hitRate, Double fillMs) {
    return new ResultRow(member, sync, "write-behind", qps, 1.25, 1000, 990, 10, 8, hitRate, 495L, 495L,
        fillMs, 495L, 0.005, 400L, null, null);
  }

  static ResultRow peerRow(String member, double qps, double hitRate) {
    return new ResultRow(member, null, null, qps, 0.5, 2000, 2000, 0, 2, hitRate, 900L, 1100L,
        null, null, null, null, null, null);
  }

  /** The same row with {@code cpuSeconds} of CPU over its completed queries. */
  static ResultRow withCpu(ResultRow r, double cpuSeconds) {
    return new ResultRow(r.member(), r.lmdbSync(), r.runtime(), r.achievedQps(), r.avgLatencyMs(), r.sent(),
        r.completed(), r.lost(), r.workers(), r.hitRatePct(), r.cacheHits(), r.cacheMisses(), r.fillMeanMs(),
        r.fillSamples(), r.evictionMeanMs(), r.evictionSamples(), cpuSeconds,
        ProcessCpu.microsPerQuery(cpuSeconds, r.completed()));
  }

  @Test
  void headerIsTheSixteenAgreedColumnsInOrderThenCpu() {
    String header = StudyCsv.RESULTS.render(List.of()).lines().findFirst().orElseThrow();
    assertEquals("member,lmdb_sync,runtime,achieved_qps,avg_latency_ms,sent,completed,lost,workers,"
        + "hit_rate_pct,cache_hits,cache_misses,fill_mean_ms,fill_samples,eviction_mean_ms,eviction_samples,"
        + "cpu_seconds,cpu_us_per_query", header);
  }

  @Test
  void nonLmdbMembersShowADashAndPeersLeaveShoalColumnsEmpty() {
    List<String> lines = StudyCsv.RESULTS.render(List.of(
        withCpu(shoalRow("memory", null, 20000.04, 50.123, 0.02), 0.0124), peerRow("unbound", 30000, 49.5)))
        .lines().toList();
    assertEquals("memory,-,write-behind,20000.0,1.250,1000,990,10,8,50.12,495,495,0.0200,495,0.0050,400,0.01,12.53",
        lines.get(1));
    assertEquals("unbound,-,-,30000.0,0.500,2000,2000,0,2,49.50,900,1100,,,,,,", lines.get(2));
  }

  @Test
  void rowsSurviveARoundTrip() {
    List<ResultRow> rows = List.of(withCpu(shoalRow("lmdb-full", "full", 12345.6, 49.87, 0.4321), 3.5),
        peerRow("odd,name", 1.0, 0.0));
    List<ResultRow> back = StudyCsv.RESULTS.parse(StudyCsv.RESULTS.render(rows));
    assertEquals(2, back.size());
    assertEquals("full", back.get(0).lmdbSync());
    assertEquals(12345.6, back.get(0).achievedQps(), 1e-9);
    assertEquals(0.4321, back.get(0).fillMeanMs(), 1e-9);
    assertEquals(3.5, back.get(0).cpuSeconds(), 1e-9);
    assertEquals(3535.35, back.get(0).cpuMicrosPerQuery(), 1e-9);
    assertEquals(null, back.get(1).cpuMicrosPerQuery());
    assertEquals("odd,name", back.get(1).member());
    assertEquals(null, back.get(1).fillMeanMs());
  }

  @Test
  void quotingAndLineEndsAreThoseOfTheHandWrittenFilesBeforeIt() {
    String text = StudyCsv.RESULTS.render(List.of(peerRow("odd,\"name\"", 1.0, 0.0)));
    assertEquals(String.join(",", ResultRow.COLUMNS) + "\n"
        + "\"odd,\"\"name\"\"\",-,-,1.0,0.500,2000,2000,0,2,0.00,900,1100,,,,,,\n", text);
    assertEquals("odd,\"name\"", StudyCsv.RESULTS.parse(text).get(0).member());
  }

  @Test
  void heldConnectionsSurviveARoundTrip() {
    PhaseRow holders = new PhaseRow("shoal-memory", "dot_holders", 2600, 236.4, 4100.0, 0.97, 1.9, 8.5, null, 41000,
        0, 0, 301.0, 1090L, java.util.Map.of("tls_handshake_timeout", 1300L), "1300 idle TCP connections", null,
        new PhaseRow.Held(2600, 1300, 5.2));
    String text = StudyCsv.ROBUSTNESS.render(List.of(holders));
    assertTrue(text.lines().toList().get(1).endsWith(",2600,1300,5.200"), text);
    assertEquals(List.of(holders), StudyCsv.ROBUSTNESS.parse(text));
    // none closed: no median, an empty cell
    PhaseRow none = new PhaseRow("unbound", "doh_holders", 1300, 118.0, 900.0, 0.5, 1.9, 8.5, null, 9000, 0, 0,
        30.0, 1400L, java.util.Map.of(), "1300 idle TCP connections", null, new PhaseRow.Held(1300, 0, null));
    assertTrue(StudyCsv.ROBUSTNESS.render(List.of(none)).lines().toList().get(1).endsWith(",1300,0,"));
    assertEquals(List.of(none), StudyCsv.ROBUSTNESS.parse(StudyCsv.ROBUSTNESS.render(List.of(none))));
  }

  @Test
  void aFileWithAnotherHeaderIsRejected() {
    assertThrows(IllegalArgumentException.class, () -> StudyCsv.RESULTS.parse("member,qps\nx,1\n"));
  }

  @Test
  void robustnessRowsSurviveARoundTripWithTheirDropsByReason() {
    PhaseRow malformed = new PhaseRow("shoal-memory", "malformed_udp", 80000, 19999.5, 9500.0, 0.95, 2.5, 12.25,
        40000L, 38000, 0, 3, 312.5, 150L, java.util.Map.of("response", 10L, "malformed", 40L),
        "malformed UDP: 80000 packets, in 4 s", new PhaseRow.ZoneClientCounts(400, 380, 15, 1, 4));
    PhaseRow unread = new PhaseRow("unbound", "tcp_baseline", 0, 0, 20000.0, 1.0, 2.0, null, null, 60000, 0, 0, null,
        null, java.util.Map.of(), "no attack", null);
    String text = StudyCsv.ROBUSTNESS.render(List.of(unread, malformed));
    assertEquals(String.join(",", PhaseRow.COLUMNS), text.lines().findFirst().orElseThrow());
    assertEquals("shoal-memory,malformed_udp,80000,19999.5,9500.0,0.950,2.500,12.250,40000,38000,0.9500,0,3,312.5,"
        + "150,50,malformed=40 response=10,\"malformed UDP: 80000 packets, in 4 s\",400,380,15,4,1,,,",
        text.lines().toList().get(2));
    // an unpaced phase has nothing offered as such, and no zone client: empty cells, not zeros
    assertEquals("unbound,tcp_baseline,0,0.0,20000.0,1.000,2.000,,,60000,,0,0,,,0,,no attack,,,,,,,,",
        text.lines().toList().get(1));
    // the zone client's columns come after the ones readers of earlier files know, in the same order
    assertEquals("attack_detail", PhaseRow.COLUMNS.get(17));
    assertEquals(List.of("zone_client_asked", "zone_client_answered", "zone_client_servfail", "zone_client_no_reply",
        "zone_client_other"), PhaseRow.COLUMNS.subList(18, 23));
    assertEquals(List.of("held_opened", "held_closed_by_server", "held_close_median_s"),
        PhaseRow.COLUMNS.subList(23, PhaseRow.COLUMNS.size()));
    List<PhaseRow> back = StudyCsv.ROBUSTNESS.parse(text);
    assertEquals(List.of(unread, malformed), back);
    assertEquals(50, back.get(1).droppedTotal());
    assertEquals(0.95, back.get(1).answeredOfOffered(), 1e-12);
    assertEquals(null, back.get(0).answeredOfOffered());
    assertEquals(0.95, back.get(1).zoneClient().answeredOfAsked(), 1e-12);
    // a file written before the held_* columns were appended is read with them empty
    String older = String.join(",", PhaseRow.COLUMNS.subList(0, 23)) + "\n"
        + "unbound,tcp_baseline,0,0.0,20000.0,1.000,2.000,,,60000,,0,0,,,0,,no attack,,,,,\n";
    assertEquals(List.of(unread), StudyCsv.ROBUSTNESS.parse(older));
    // counts that do not add up to what was asked are not a row
    assertThrows(IllegalArgumentException.class, () -> new PhaseRow.ZoneClientCounts(10, 5, 5, 0, 1));
  }
}
