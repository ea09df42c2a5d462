package io.shoal.study.timeline;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The per-second record of a kill test, from the output of {@code dnsperf -S 1 -v} runs against
 * the surviving nodes. dnsperf 2.10's interval lines ({@code <epoch>: <qps>}) carry only a rate,
 * and a stale one for the first interval, so they are used as time marks only: every query line
 * {@code -v} prints between two marks ({@code > RCODE name type latency} for an answer,
 * {@code > T name type} for a query dnsperf gave up on) belongs to that interval. Answers and
 * marks go through one stdio stream, so their order is the order they happened in.
 *
 * <p>A lost query is counted in the second dnsperf gave up on it, which is the query timeout
 * after it was sent. The part after the last mark (the run's last, partial second, and the
 * queries still outstanding when dnsperf stopped) is left out.
 */
public final class KillTimeline {
  /** The chart's file name in the run directory (the CSV is kill_timeline.csv). */
  public static final String PNG = "kill_timeline.png";

  /** The header of kill_timeline.csv, in order. */
  public static final List<String> COLUMNS = List.of(
      "second", "qps", "avg_latency_ms", "completed", "lost", "servfail", "after_kill");

  /** QPS within this share of the pre-kill level counts as recovered. */
  static final double RECOVERED_SHARE = 0.9;

  private static final Pattern MARK = Pattern.compile("^(\\d+\\.\\d+): [0-9.]+$");
  /** An answered query in {@code dnsperf -v} output: its rcode and latency in seconds. */
  public static final Pattern ANSWER = Pattern.compile("^> (\\S+) \\S+ \\S+ ([0-9.]+)$");
  private static final Pattern GAVE_UP = Pattern.compile("^> T \\S+ \\S+$");

  /**
   * The kill itself.
   *
   * @param node the killed node's name, or the names joined by "and"
   * @param pid its process id, or the ids joined by "and"
   * @param atSeconds when it was killed, in seconds since dnsperf started
   * @param targets the nodes dnsperf ran against
   * @param queryTimeout dnsperf's -t
   * @param unreachableAfterSeconds when a survivor first listed the node as unreachable, in seconds
   *     after the kill; null if not seen
   * @param removedAfterSeconds when the node was gone from a survivor's member list, in seconds after
   *     the kill; null if not in time
   * @param servfailCounted SERVFAIL replies the survivors counted ({@code shoal_queries_total}) over the
   *     measured run; null until read
   * @param minority whether the survivors were left a minority: then {@code removedAfterSeconds} is
   *     when the Split Brain Resolver downed the survivor's own membership
   */
  public record Event(String member, String node, String pid, double atSeconds, List<String> targets,
      java.time.Duration queryTimeout, Double unreachableAfterSeconds, Double removedAfterSeconds,
      Long servfailCounted, boolean minority) {

    /** The same event with the survivors' SERVFAIL count, read after the run. */
    public Event withServfailCounted(long n) {
      return new Event(member, node, pid, atSeconds, targets, queryTimeout, unreachableAfterSeconds,
          removedAfterSeconds, n, minority);
    }
  }

  /** One interval of one dnsperf run: what happened up to the mark at {@code endEpochSeconds}. */
  record Interval(double endEpochSeconds, long completed, double latencySumSeconds, long lost, long servfail,
      long noerror) {}

  /**
   * One second of the merged timeline, over every dnsperf run.
   *
   * @param second the end of the interval, in seconds since dnsperf started (1 for the first)
   * @param avgLatencyMs mean latency of the answers received in this second; null if none came
   * @param afterKill true from the second in which the node was killed on
   */
  public record Second(int second, double qps, Double avgLatencyMs, long completed, long lost, long servfail,
      boolean afterKill) {

    public List<String> cells() {
      return List.of(Integer.toString(second), String.format(Locale.ROOT, "%.1f", qps),
          avgLatencyMs == null ? "" : String.format(Locale.ROOT, "%.3f", avgLatencyMs), Long.toString(completed),
          Long.toString(lost), Long.toString(servfail), afterKill ? "1" : "0");
    }

    public static Second fromCells(List<String> c) {
      if (c.size() != COLUMNS.size()) {
        throw new IllegalArgumentException("a kill_timeline.csv row has " + COLUMNS.size() + " cells: " + c);
      }
      return new Second(Integer.parseInt(c.get(0)), Double.parseDouble(c.get(1)),
          c.get(2).isEmpty() ? null : Double.valueOf(c.get(2)), Long.parseLong(c.get(3)), Long.parseLong(c.get(4)),
          Long.parseLong(c.get(5)), c.get(6).equals("1"));
    }
  }

  /**
   * What the kill did, computed from the seconds.
   *
   * @param preKillQps mean QPS of the whole seconds before the kill, the first left out when
   *     there are others (dnsperf ramps up in it); null if the kill came in the first second
   * @param firstBelow the first second, from the kill's on, with QPS below 90% of preKillQps; null if none
   * @param recovered the first second after firstBelow with QPS back within 10%; null if none
   * @param worstLatency the second after the kill with the highest mean latency; null if none answered
   */
  public record Effect(Double preKillQps, Double preKillLatencyMs, Integer killSecond, Integer firstBelow,
      Integer recovered, int lastSecond, long lostAfter, long servfailAfter, int secondsWithFailures,
      Second worstLatency) {

    /** Whole seconds with QPS below 90% of the pre-kill level, counted to the end if it never recovered. */
    public Integer secondsBelow() {
      if (firstBelow == null) {
        return null;
      }
      return (recovered != null ? recovered : lastSecond + 1) - firstBelow;
    }
  }

  private KillTimeline() {}

  /** The closed intervals of one {@code dnsperf -S N -v} output, in order. */
  static List<Interval> intervals(String output) {
    List<Interval> out = new ArrayList<>();
    long completed = 0;
    double latency = 0;
    long lost = 0;
    long servfail = 0;
    long noerror = 0;
    for (String line : output.split("\n")) {
      Matcher a = ANSWER.matcher(line);
      if (a.matches()) {
        completed++;
        latency += Double.parseDouble(a.group(2));
        if (a.group(1).equals("SERVFAIL")) {
          servfail++;
        } else if (a.group(1).equals("NOERROR")) {
          noerror++;
        }
        continue;
      }
      if (GAVE_UP.matcher(line).matches()) {
        lost++;
        continue;
      }
      Matcher m = MARK.matcher(line);
      if (m.matches()) {
        out.add(new Interval(Double.parseDouble(m.group(1)), completed, latency, lost, servfail, noerror));
        completed = 0;
        latency = 0;
        lost = 0;
        servfail = 0;
        noerror = 0;
      }
    }
    return out;
  }

  /**
   * The seconds of concurrent runs merged: interval k of every run (they started together) is
   * second k + 1; QPS and counts are added, latency is the mean over all answers of that second.
   * The first run's marks place the kill.
   *
   * @param intervalSeconds dnsperf's -S, the length of each run's first interval
   */
  public static List<Second> merge(List<String> outputs, double killEpochSeconds, double intervalSeconds) {
    List<List<Interval>> runs = outputs.stream().map(KillTimeline::intervals).toList();
    int count = runs.stream().mapToInt(List::size).min().orElse(0);
    List<Second> out = new ArrayList<>();
    for (int k = 0; k < count; k++) {
      double qps = 0;
      long completed = 0;
      double latency = 0;
      long lost = 0;
      long servfail = 0;
      for (List<Interval> run : runs) {
        Interval i = run.get(k);
        double length = k == 0 ? intervalSeconds : i.endEpochSeconds() - run.get(k - 1).endEpochSeconds();
        qps += length > 0 ? i.completed() / length : 0;
        completed += i.completed();
        latency += i.latencySumSeconds();
        lost += i.lost();
        servfail += i.servfail();
      }
      // the kill happened before this second ended: it is the kill's second or a later one
      boolean afterKill = killEpochSeconds < runs.get(0).get(k).endEpochSeconds();
      out.add(new Second(k + 1, qps, completed == 0 ? null : latency / completed * 1000.0, completed, lost, servfail,
          afterKill));
    }
    return out;
  }

  /** When the kill happened, in seconds since the first run started (from its first mark). */
  public static double killAtSeconds(String firstOutput, double killEpochSeconds, double intervalSeconds) {
    List<Interval> run = intervals(firstOutput);
    if (run.isEmpty()) {
      return Double.NaN;
    }
    return killEpochSeconds - (run.get(0).endEpochSeconds() - intervalSeconds);
  }

  /** What the kill did to QPS, latency and failures, from the merged seconds. */
  public static Effect effect(List<Second> seconds) {
    int kill = -1;
    for (int i = 0; i < seconds.size(); i++) {
      if (seconds.get(i).afterKill()) {
        kill = i;
        break;
      }
    }
    int last = seconds.isEmpty() ? 0 : seconds.get(seconds.size() - 1).second();
    if (kill < 0) {
      return new Effect(null, null, null, null, null, last, 0, 0, 0, null);
    }
    List<Second> before = seconds.subList(kill >= 2 ? 1 : 0, kill);
    Double preQps = before.isEmpty() ? null : before.stream().mapToDouble(Second::qps).average().orElse(0);
    long preCompleted = before.stream().mapToLong(Second::completed).sum();
    double preLatencySum = before.stream().filter(s -> s.avgLatencyMs() != null)
        .mapToDouble(s -> s.avgLatencyMs() * s.completed()).sum();
    Double preLatency = preCompleted == 0 ? null : preLatencySum / preCompleted;

    Integer firstBelow = null;
    Integer recovered = null;
    long lost = 0;
    long servfail = 0;
    int failing = 0;
    Second worst = null;
    for (int i = kill; i < seconds.size(); i++) {
      Second s = seconds.get(i);
      lost += s.lost();
      servfail += s.servfail();
      if (s.lost() + s.servfail() > 0) {
        failing++;
      }
      if (s.avgLatencyMs() != null && (worst == null || s.avgLatencyMs() > worst.avgLatencyMs())) {
        worst = s;
      }
      if (preQps != null) {
        boolean within = s.qps() >= RECOVERED_SHARE * preQps;
        if (firstBelow == null && !within) {
          firstBelow = s.second();
        } else if (firstBelow != null && recovered == null && within) {
          recovered = s.second();
        }
      }
    }
    return new Effect(preQps, preLatency, seconds.get(kill).second(), firstBelow, recovered, last, lost, servfail,
        failing, worst);
  }
}
