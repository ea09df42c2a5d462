package io.shoal.study.timeline;

import io.shoal.study.measure.MetricsScrape;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The per-second record of one member's upstream-outage run: what dnsperf saw ({@code dnsperf -S 1
 * -v}, split at its interval marks as in {@link KillTimeline}) beside what the node counted
 * (stale answers and prefetches, read from its metrics endpoint once a second), and the totals of
 * the three phases before, during and after the outage.
 *
 * <p>A second belongs to the outage if any part of it fell between SIGSTOP and SIGCONT. The node's
 * counters between two scrapes are interpolated linearly to the interval marks; shoal publishes
 * its metrics once a second, so a stale answer can show up to a second after dnsperf's.
 */
public final class OutageTimeline {
  /** The chart's file name in the run directory. */
  public static final String PNG = "outage_timeline.png";

  /** The header of outage_timeline.csv, in order. */
  public static final List<String> COLUMNS = List.of(
      "member", "second", "qps", "completed", "noerror", "servfail", "lost", "stale", "prefetches", "upstream_up",
      "outage");

  /** The header of outage_phases.csv, in order. */
  public static final List<String> PHASE_COLUMNS = List.of(
      "member", "phase", "seconds", "completed", "qps", "noerror", "servfail", "lost", "stale", "stale_pct",
      "prefetches");

  /** The phases of a run, in order. */
  public static final List<String> PHASES = List.of("before", "during", "after");

  /**
   * One second of one member's run.
   *
   * @param second the end of the interval, in seconds since dnsperf started (1 for the first)
   * @param completed answers dnsperf received in this second, of any rcode
   * @param lost queries dnsperf gave up on in this second (its -t after they were sent)
   * @param stale answers the node served stale in this second (shoal_stale_answers_total)
   * @param prefetches prefetches the node sent in this second (shoal_prefetches_total)
   * @param upstreamUp shoal_upstream_up of knotd at the end of the second: 1 asked, 0 marked down; null if not read
   * @param outage true if knotd was stopped for any part of this second
   */
  public record Second(String member, int second, double qps, long completed, long noerror, long servfail,
      long lost, long stale, long prefetches, Integer upstreamUp, boolean outage) {

    public List<String> cells() {
      return List.of(member, Integer.toString(second), String.format(Locale.ROOT, "%.1f", qps),
          Long.toString(completed), Long.toString(noerror), Long.toString(servfail), Long.toString(lost),
          Long.toString(stale), Long.toString(prefetches), upstreamUp == null ? "" : upstreamUp.toString(),
          outage ? "1" : "0");
    }

    public static Second fromCells(List<String> c) {
      if (c.size() != COLUMNS.size()) {
        throw new IllegalArgumentException("an outage_timeline.csv row has " + COLUMNS.size() + " cells: " + c);
      }
      return new Second(c.get(0), Integer.parseInt(c.get(1)), Double.parseDouble(c.get(2)), Long.parseLong(c.get(3)),
          Long.parseLong(c.get(4)), Long.parseLong(c.get(5)), Long.parseLong(c.get(6)), Long.parseLong(c.get(7)),
          Long.parseLong(c.get(8)), c.get(9).isEmpty() ? null : Integer.valueOf(c.get(9)), c.get(10).equals("1"));
    }
  }

  /**
   * The totals of one phase of one member's run.
   *
   * @param phase before, during or after the outage
   * @param stalePct stale answers as a share of completed ones, in percent; null if none completed
   */
  public record Phase(String member, String phase, int seconds, long completed, double qps, long noerror,
      long servfail, long lost, long stale, Double stalePct, long prefetches) {

    public List<String> cells() {
      return List.of(member, phase, Integer.toString(seconds), Long.toString(completed),
          String.format(Locale.ROOT, "%.1f", qps), Long.toString(noerror), Long.toString(servfail),
          Long.toString(lost), Long.toString(stale), stalePct == null ? "" : String.format(Locale.ROOT, "%.2f", stalePct),
          Long.toString(prefetches));
    }

    public static Phase fromCells(List<String> c) {
      if (c.size() != PHASE_COLUMNS.size()) {
        throw new IllegalArgumentException("an outage_phases.csv row has " + PHASE_COLUMNS.size() + " cells: " + c);
      }
      return new Phase(c.get(0), c.get(1), Integer.parseInt(c.get(2)), Long.parseLong(c.get(3)),
          Double.parseDouble(c.get(4)), Long.parseLong(c.get(5)), Long.parseLong(c.get(6)), Long.parseLong(c.get(7)),
          Long.parseLong(c.get(8)), c.get(9).isEmpty() ? null : Double.valueOf(c.get(9)), Long.parseLong(c.get(10)));
    }

    /** Queries that got no usable answer: SERVFAIL or none at all. */
    public long failed() {
      return servfail + lost;
    }
  }

  /**
   * The node's counters at one moment of the measured run.
   *
   * @param epochSeconds when the scrape was answered
   * @param upstreamUp shoal_upstream_up of knotd; null if the node has not reported it
   */
  public record Counters(double epochSeconds, double stale, double prefetches, Integer upstreamUp) {

    /** The counters of one scrape of the node's metrics. */
    public static Counters of(double epochSeconds, MetricsScrape s) {
      var up = s.sum("shoal_upstream_up");
      return new Counters(epochSeconds, s.sum("shoal_stale_answers_total").orElse(0),
          s.sum("shoal_prefetches_total").orElse(0), up.isPresent() ? (int) Math.round(up.getAsDouble()) : null);
    }
  }

  private OutageTimeline() {}

  /**
   * The seconds of one member's run from its dnsperf output and its scrapes (in time order).
   *
   * @param stopEpoch when knotd was stopped; {@code contEpoch} when it was resumed
   * @param intervalSeconds dnsperf's -S, the length of the first interval
   */
  public static List<Second> of(String member, String dnsperfOutput, List<Counters> scrapes, double stopEpoch,
      double contEpoch, double intervalSeconds) {
    List<KillTimeline.Interval> intervals = KillTimeline.intervals(dnsperfOutput);
    List<Second> out = new ArrayList<>();
    for (int k = 0; k < intervals.size(); k++) {
      KillTimeline.Interval i = intervals.get(k);
      double end = i.endEpochSeconds();
      double start = k == 0 ? end - intervalSeconds : intervals.get(k - 1).endEpochSeconds();
      double length = end - start;
      // cumulative values rounded at each mark, so the seconds add up to the counters' whole change
      long stale = Math.round(at(scrapes, end, Counters::stale)) - Math.round(at(scrapes, start, Counters::stale));
      long prefetches = Math.round(at(scrapes, end, Counters::prefetches))
          - Math.round(at(scrapes, start, Counters::prefetches));
      out.add(new Second(member, k + 1, length > 0 ? i.completed() / length : 0, i.completed(), i.noerror(),
          i.servfail(), i.lost(), Math.max(0, stale), Math.max(0, prefetches), upAt(scrapes, end),
          start < contEpoch && end > stopEpoch));
    }
    return out;
  }

  /** A counter at {@code epoch}, linear between the scrapes around it, held flat outside them. */
  static double at(List<Counters> scrapes, double epoch, java.util.function.ToDoubleFunction<Counters> value) {
    if (scrapes.isEmpty()) {
      return 0;
    }
    Counters first = scrapes.get(0);
    if (epoch <= first.epochSeconds()) {
      return value.applyAsDouble(first);
    }
    for (int j = 1; j < scrapes.size(); j++) {
      Counters a = scrapes.get(j - 1);
      Counters b = scrapes.get(j);
      if (epoch <= b.epochSeconds()) {
        double span = b.epochSeconds() - a.epochSeconds();
        double share = span > 0 ? (epoch - a.epochSeconds()) / span : 1;
        return value.applyAsDouble(a) + share * (value.applyAsDouble(b) - value.applyAsDouble(a));
      }
    }
    return value.applyAsDouble(scrapes.get(scrapes.size() - 1));
  }

  /** The last upstream state read at or before {@code epoch}; null if none was. */
  private static Integer upAt(List<Counters> scrapes, double epoch) {
    Integer up = null;
    for (Counters c : scrapes) {
      if (c.epochSeconds() > epoch) {
        break;
      }
      up = c.upstreamUp() != null ? c.upstreamUp() : up;
    }
    return up;
  }

  /**
   * The three phases of each member's seconds: before the first outage second, the outage
   * seconds, and after the last. The first second is left out of "before" when there are others
   * (dnsperf ramps up in it).
   */
  public static List<Phase> phases(List<Second> seconds) {
    List<Phase> out = new ArrayList<>();
    for (String member : seconds.stream().map(Second::member).distinct().toList()) {
      List<Second> mine = seconds.stream().filter(s -> s.member().equals(member)).toList();
      int first = -1;
      int last = -1;
      for (int i = 0; i < mine.size(); i++) {
        if (mine.get(i).outage()) {
          first = first < 0 ? i : first;
          last = i;
        }
      }
      if (first < 0) {
        out.add(phase(member, "before", mine.subList(Math.min(1, mine.size()), mine.size())));
        continue;
      }
      out.add(phase(member, "before", mine.subList(first >= 2 ? 1 : 0, first)));
      out.add(phase(member, "during", mine.subList(first, last + 1)));
      out.add(phase(member, "after", mine.subList(last + 1, mine.size())));
    }
    return out;
  }

  private static Phase phase(String member, String name, List<Second> seconds) {
    long completed = seconds.stream().mapToLong(Second::completed).sum();
    long stale = seconds.stream().mapToLong(Second::stale).sum();
    double qps = seconds.isEmpty() ? 0 : seconds.stream().mapToDouble(Second::qps).average().orElse(0);
    return new Phase(member, name, seconds.size(), completed, qps,
        seconds.stream().mapToLong(Second::noerror).sum(), seconds.stream().mapToLong(Second::servfail).sum(),
        seconds.stream().mapToLong(Second::lost).sum(), stale, completed == 0 ? null : 100.0 * stale / completed,
        seconds.stream().mapToLong(Second::prefetches).sum());
  }
}
