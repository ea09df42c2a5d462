package io.shoal.study.timeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.DnsperfReportTest;
import io.shoal.study.report.StudyCsv;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The kill test's per-second timeline, on the output of two real {@code dnsperf -S 1 -v -t 2}
 * runs against node-0 and node-1 of a 3-node cluster (a quick cluster_kill run on a busy 2-core
 * host) while node-2 was killed at epoch 1795983062.676. The expected numbers were computed
 * from the same files independently of this code.
 */
class KillTimelineTest {
  private static final double KILLED_AT = 1795983062.676;

  private static List<String> outputs() throws IOException {
    return List.of(DnsperfReportTest.resource("cluster/dnsperf-kill-node-0.txt"),
        DnsperfReportTest.resource("cluster/dnsperf-kill-node-1.txt"));
  }

  @Test
  void intervalMarksSplitTheQueryLines() throws IOException {
    String node0 = outputs().get(0);
    List<KillTimeline.Interval> intervals = KillTimeline.intervals(node0);
    // a 12 s run prints 11 marks; what follows the last is the run's end, left out
    assertEquals(11, intervals.size());
    assertEquals(1795983058.724957, intervals.get(0).endEpochSeconds(), 1e-6);
    long completed = intervals.stream().mapToLong(KillTimeline.Interval::completed).sum();
    long lost = intervals.stream().mapToLong(KillTimeline.Interval::lost).sum();
    DnsperfReport total = DnsperfReport.parse(node0);
    assertTrue(completed <= total.completed() && lost <= total.lost(), completed + " " + lost);
    // -v prints one line per answer and per query given up on: together they are dnsperf's totals
    long answerLines = node0.lines().filter(l -> l.matches("> \\S+ \\S+ \\S+ [0-9.]+")).count();
    long gaveUpLines = node0.lines().filter(l -> l.matches("> T \\S+ \\S+")).count();
    assertEquals(total.completed(), answerLines);
    assertEquals(total.lost(), gaveUpLines);
  }

  @Test
  void theRunsAreMergedSecondBySecond() throws IOException {
    List<KillTimeline.Second> s = KillTimeline.merge(outputs(), KILLED_AT, 1.0);
    assertEquals(11, s.size());
    assertEquals(new KillTimeline.Second(1, 566.0, s.get(0).avgLatencyMs(), 566, 0, 0, false), s.get(0));
    assertEquals(164.853, s.get(0).avgLatencyMs(), 0.001);
    assertEquals(118.961, s.get(1).qps(), 0.001);
    assertEquals(1246.305, s.get(1).avgLatencyMs(), 0.001);
    assertEquals(269, s.get(2).lost());
    assertFalse(s.get(3).afterKill());
    // killed 4.95 s after the start: the fifth second holds the kill
    assertTrue(s.get(4).afterKill());
    assertEquals(137.801, s.get(4).qps(), 0.001);
    assertEquals(212, s.get(4).lost());
    assertEquals(93.891, s.get(6).qps(), 0.001);
    assertEquals(232.436, s.get(10).qps(), 0.001);
    assertTrue(s.stream().allMatch(x -> x.servfail() == 0));
    assertEquals(4.951, KillTimeline.killAtSeconds(outputs().get(0), KILLED_AT, 1.0), 0.001);
  }

  @Test
  void theEffectOfTheKill() throws IOException {
    KillTimeline.Effect e = KillTimeline.effect(KillTimeline.merge(outputs(), KILLED_AT, 1.0));
    // seconds 2 to 4: the first second (ramp-up) is left out
    assertEquals((118.961 + 97.246 + 139.870) / 3, e.preKillQps(), 0.001);
    assertEquals(5, e.killSecond());
    assertEquals(7, e.firstBelow());
    assertEquals(9, e.recovered());
    assertEquals(2, e.secondsBelow());
    assertEquals(212 + 105 + 196 + 181 + 190 + 122 + 157, e.lostAfter());
    assertEquals(0, e.servfailAfter());
    assertEquals(7, e.secondsWithFailures());
    assertEquals(6, e.worstLatency().second());
    assertEquals(11, e.lastSecond());
  }

  @Test
  void csvRoundTripKeepsWhatTheSummaryNeeds() throws IOException {
    List<KillTimeline.Second> s = KillTimeline.merge(outputs(), KILLED_AT, 1.0);
    String text = StudyCsv.KILL_TIMELINE.render(s);
    assertEquals("second,qps,avg_latency_ms,completed,lost,servfail,after_kill",
        text.lines().findFirst().orElseThrow());
    assertEquals("5,137.8,619.293,138,212,0,1", text.lines().toList().get(5));
    List<KillTimeline.Second> back = StudyCsv.KILL_TIMELINE.parse(text);
    assertEquals(KillTimeline.effect(s).recovered(), KillTimeline.effect(back).recovered());
    assertEquals(KillTimeline.effect(s).firstBelow(), KillTimeline.effect(back).firstBelow());
  }

  private static List<KillTimeline.Second> seconds(double[] qps, int killSecond) {
    List<KillTimeline.Second> out = new ArrayList<>();
    for (int i = 0; i < qps.length; i++) {
      out.add(new KillTimeline.Second(i + 1, qps[i], 1.0, (long) qps[i], 0, 0, i + 1 >= killSecond));
    }
    return out;
  }

  @Test
  void noDipNeverRecoveredAndAKillInTheFirstSecond() {
    KillTimeline.Effect flat = KillTimeline.effect(seconds(new double[] {50, 100, 100, 95, 99, 100}, 4));
    assertEquals(100.0, flat.preKillQps(), 1e-9);
    assertNull(flat.firstBelow());
    assertNull(flat.secondsBelow());

    KillTimeline.Effect stuck = KillTimeline.effect(seconds(new double[] {50, 100, 100, 100, 40, 60, 80}, 4));
    assertEquals(5, stuck.firstBelow());
    assertNull(stuck.recovered());
    assertEquals(3, stuck.secondsBelow()); // seconds 5, 6 and 7, to the end

    KillTimeline.Effect early = KillTimeline.effect(seconds(new double[] {100, 10, 100}, 1));
    assertNull(early.preKillQps());
    assertEquals(1, early.killSecond());

    KillTimeline.Effect never = KillTimeline.effect(seconds(new double[] {100, 100}, 9));
    assertNull(never.killSecond());
  }
}
