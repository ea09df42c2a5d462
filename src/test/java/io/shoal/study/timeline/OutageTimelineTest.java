package io.shoal.study.timeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.study.report.OutageSummary;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.scenario.MinimalRecipe;
import io.shoal.study.scenario.Scenario;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An outage run's seconds and phases, from a hand-written {@code dnsperf -S 1 -v} output and
 * scrapes whose expected numbers are worked out in the comments.
 */
class OutageTimelineTest {
  // three closed seconds ending at 101, 102 and 103, then a partial one that is left out
  private static final String DNSPERF = String.join("\n",
      "[Status] Sending queries (to 127.0.0.1:5300)",
      "> NOERROR n1.bench.test A 0.001000",
      "> NOERROR n2.bench.test A 0.001000",
      "> NOERROR n3.bench.test A 0.001000",
      "101.000000: 3.000000",
      "> NOERROR n1.bench.test A 1.800000",
      "> SERVFAIL n2.bench.test A 0.000500",
      "> SERVFAIL n3.bench.test A 0.000500",
      "> T n4.bench.test A",
      "102.000000: 3.000000",
      "> NOERROR n1.bench.test A 0.001000",
      "> NOERROR n2.bench.test A 0.001000",
      "103.000000: 2.000000",
      "> NOERROR n3.bench.test A 0.001000",
      "");
  // stale 0 at 100.5, 2 at 101.5 and after: 1 at 101 (halfway), 2 at 102 and 103
  private static final List<OutageTimeline.Counters> SCRAPES = List.of(
      new OutageTimeline.Counters(100.5, 0, 10, 1),
      new OutageTimeline.Counters(101.5, 2, 10, 0),
      new OutageTimeline.Counters(102.5, 2, 14, 1));

  @Test
  void secondsCountRcodesLostAndInterpolatedCounters() {
    List<OutageTimeline.Second> s = OutageTimeline.of("m", DNSPERF, SCRAPES, 101.2, 101.8, 1.0);
    assertEquals(3, s.size());
    assertEquals(List.of(3L, 3L, 2L), s.stream().map(OutageTimeline.Second::completed).toList());
    assertEquals(List.of(3L, 1L, 2L), s.stream().map(OutageTimeline.Second::noerror).toList());
    assertEquals(List.of(0L, 2L, 0L), s.stream().map(OutageTimeline.Second::servfail).toList());
    assertEquals(List.of(0L, 1L, 0L), s.stream().map(OutageTimeline.Second::lost).toList());
    assertEquals(List.of(1L, 1L, 0L), s.stream().map(OutageTimeline.Second::stale).toList());
    // prefetches: 10 until 101.5, then 12 at 102 and 14 from 102.5
    assertEquals(List.of(0L, 2L, 2L), s.stream().map(OutageTimeline.Second::prefetches).toList());
    // the outage (101.2 to 101.8) lies inside the second second only
    assertEquals(List.of(false, true, false), s.stream().map(OutageTimeline.Second::outage).toList());
    assertEquals(List.of(1, 0, 1), s.stream().map(OutageTimeline.Second::upstreamUp).toList());
  }

  @Test
  void phasesSplitAtTheOutageSecondsAndSurviveTheCsv() {
    List<OutageTimeline.Second> seconds = StudyCsv.OUTAGE_TIMELINE.parse(StudyCsv.OUTAGE_TIMELINE.render(
        OutageTimeline.of("m", DNSPERF, SCRAPES, 101.2, 101.8, 1.0)));
    List<OutageTimeline.Phase> phases = StudyCsv.OUTAGE_PHASES.parse(StudyCsv.OUTAGE_PHASES.render(
        OutageTimeline.phases(seconds)));
    assertEquals(OutageTimeline.PHASES, phases.stream().map(OutageTimeline.Phase::phase).toList());
    OutageTimeline.Phase during = phases.get(1);
    assertEquals(1, during.seconds());
    assertEquals(3, during.completed());
    assertEquals(2, during.servfail());
    assertEquals(1, during.lost());
    assertEquals(3, during.failed());
    assertEquals(1, during.stale());
    assertEquals(33.33, during.stalePct(), 0.01);
    assertEquals(2, phases.get(2).completed());
    assertEquals(0, phases.get(2).stale());
  }

  @Test
  void aRunWithoutScrapesHasNoStaleAnswersAndNoUpstreamState() {
    List<OutageTimeline.Second> s = OutageTimeline.of("m", DNSPERF, List.of(), 200, 201, 1.0);
    assertTrue(s.stream().allMatch(x -> x.stale() == 0 && x.upstreamUp() == null));
    assertFalse(s.stream().anyMatch(OutageTimeline.Second::outage));
    assertEquals(List.of("before"), OutageTimeline.phases(s).stream().map(OutageTimeline.Phase::phase).toList());
    assertNull(OutageTimeline.phases(List.of()).stream().findFirst().orElse(null));
  }

  @Test
  void atAGlanceStatesTheStaleShareTheFailuresAndWhenKnotdWasMarkedDown() {
    Scenario s = Scenario.from("t", ConfigFactory.parseString(
        MinimalRecipe.with("stub_ttl = 10s", "max_entries = 8", "dnsperf.duration = 20s", "quick.duration = 8s")
        + "members = [{ name = m, kind = shoal, config { prefetch.enabled = off } }]\n"
        + "outage { fill_spread = 5s, after = 5s, length = 5s, quick_after = 2s, quick_length = 3s }"));
    List<OutageTimeline.Second> seconds = OutageTimeline.of("m", DNSPERF, SCRAPES, 101.2, 101.8, 1.0);
    List<String> lines = OutageSummary.atAGlance(s, OutageTimeline.phases(seconds), seconds);
    assertEquals(1, lines.size(), lines.toString());
    String m = lines.get(0);
    assertTrue(m.startsWith("m (serve-stale on, prefetch off): in the 1 s that overlapped the outage 3 answers"), m);
    assertTrue(m.contains("1 of them stale (33.3%), 2 SERVFAIL, 1 lost; over the run 2 SERVFAIL and 4 prefetches"), m);
    assertTrue(m.endsWith("marked down for 1 s (seconds 2 to 2; knotd was stopped in seconds 2 to 2)."), m);
  }
}
