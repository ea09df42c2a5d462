package io.shoal.study.attack;

import io.shoal.study.timeline.KillTimeline;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.stream.Collectors;

/**
 * One phase of a robustness run, as a row of robustness.csv: what the attack sent, what the
 * honest clients (dnsperf) got meanwhile and against the baseline phase, what the zone client got,
 * and what it cost the server (largest RSS and descriptor count, packets dropped by reason).
 *
 * @param member the member measured (each member runs every phase, compared with its own baseline)
 * @param attackSent packets sent, or TCP connections opened; 0 for the baseline
 * @param qpsVsBaseline honestQps over the baseline phase's; null if the baseline completed nothing
 * @param p99LatencyMs the 99th percentile of the honest answers' latency; null if none came
 * @param honestOffered queries the honest clients were to send at their fixed rate (honest_qps x
 *     the phase's seconds); null when they ran as fast as answers came, so nothing was offered as such
 * @param honestServfail honest queries answered SERVFAIL
 * @param honestLost honest queries dnsperf gave up on (no answer within its timeout)
 * @param rssMaxMib the server's largest VmRSS over the phase; null if /proc could not be read
 * @param fdsMax the server's most open descriptors over the phase; null if /proc could not be read
 * @param droppedByReason the phase's increase of the server's own count of what it turned away, per
 *     reason, only reasons that grew: shoal_dropped_total for shoal, requestlist and ip-ratelimit
 *     counters for unbound
 * @param zoneClient what the {@link ZoneClient} asking new names of the flooded zone got; null when
 *     it did not run (the TCP phases, unpaced honest clients, or zone_client_qps = 0)
 * @param held the connections a TCP attack held and what the server did with them; null for a
 *     phase without one
 */
public record PhaseRow(String member, String phase, long attackSent, double attackPerSecond, double honestQps,
    Double qpsVsBaseline, double avgLatencyMs, Double p99LatencyMs, Long honestOffered, long honestCompleted,
    long honestServfail, long honestLost,
    Double rssMaxMib, Long fdsMax, Map<String, Long> droppedByReason, String attackDetail,
    ZoneClientCounts zoneClient, Held held) {

  /** The header of robustness.csv, in order. */
  public static final List<String> COLUMNS = List.of(
      "member", "phase", "attack_sent", "attack_per_second", "honest_qps", "qps_vs_baseline", "avg_latency_ms",
      "p99_latency_ms", "honest_offered", "honest_completed", "answered_of_offered", "honest_servfail", "honest_lost",
      "rss_max_mib", "fds_max", "dropped_total", "dropped_by_reason", "attack_detail",
      // appended, so that readers of the columns before them by position keep working
      "zone_client_asked", "zone_client_answered", "zone_client_servfail", "zone_client_no_reply", "zone_client_other",
      "held_opened", "held_closed_by_server", "held_close_median_s");

  public PhaseRow {
    droppedByReason = Map.copyOf(new TreeMap<>(droppedByReason));
  }

  /** A row without held connections, as every phase but the TCP attacks has. */
  public PhaseRow(String member, String phase, long attackSent, double attackPerSecond, double honestQps,
      Double qpsVsBaseline, double avgLatencyMs, Double p99LatencyMs, Long honestOffered, long honestCompleted,
      long honestServfail, long honestLost, Double rssMaxMib, Long fdsMax, Map<String, Long> droppedByReason,
      String attackDetail, ZoneClientCounts zoneClient) {
    this(member, phase, attackSent, attackPerSecond, honestQps, qpsVsBaseline, avgLatencyMs, p99LatencyMs,
        honestOffered, honestCompleted, honestServfail, honestLost, rssMaxMib, fdsMax, droppedByReason, attackDetail,
        zoneClient, null);
  }

  /**
   * The connections a TCP attack (drip, idle, zero-length or silent holders) opened and what the
   * server did with them.
   *
   * @param opened connects made, reopening included
   * @param closedByServer connections the server closed (the attacker read their end, or a reset)
   * @param closeMedianSeconds the median time from a connect to the server's close of it, as the
   *     attacker saw it (it looks every 200 ms for silent holders, every second otherwise); null if
   *     the server closed none
   */
  public record Held(long opened, long closedByServer, Double closeMedianSeconds) {}

  /**
   * The part of the offered honest queries that were answered (completed over offered); null for
   * a phase whose honest clients were not paced.
   */
  public Double answeredOfOffered() {
    return honestOffered == null || honestOffered == 0 ? null : (double) honestCompleted / honestOffered;
  }

  /** Every packet the phase dropped, whatever the reason. */
  public long droppedTotal() {
    return droppedByReason.values().stream().mapToLong(Long::longValue).sum();
  }

  /** The drops as {@code reason=count} words, reasons sorted; empty when nothing was dropped. */
  public String droppedWords() {
    return new TreeMap<>(droppedByReason).entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
        .collect(Collectors.joining(" "));
  }

  public List<String> cells() {
    List<String> cells = new ArrayList<>(List.of(member, phase, Long.toString(attackSent),
        String.format(Locale.ROOT, "%.1f", attackPerSecond),
        String.format(Locale.ROOT, "%.1f", honestQps), optional(qpsVsBaseline, "%.3f"),
        String.format(Locale.ROOT, "%.3f", avgLatencyMs), optional(p99LatencyMs, "%.3f"),
        honestOffered == null ? "" : Long.toString(honestOffered), Long.toString(honestCompleted),
        optional(answeredOfOffered(), "%.4f"), Long.toString(honestServfail), Long.toString(honestLost),
        optional(rssMaxMib, "%.1f"), fdsMax == null ? "" : Long.toString(fdsMax), Long.toString(droppedTotal()),
        droppedWords(), attackDetail));
    if (zoneClient == null) {
      cells.addAll(List.of("", "", "", "", ""));
    } else {
      cells.addAll(List.of(Long.toString(zoneClient.asked()), Long.toString(zoneClient.answered()),
          Long.toString(zoneClient.servfail()), Long.toString(zoneClient.noReply()),
          Long.toString(zoneClient.other())));
    }
    if (held == null) {
      cells.addAll(List.of("", "", ""));
    } else {
      cells.addAll(List.of(Long.toString(held.opened()), Long.toString(held.closedByServer()),
          optional(held.closeMedianSeconds(), "%.3f")));
    }
    return cells;
  }

  public static PhaseRow fromCells(List<String> c) {
    if (c.size() != COLUMNS.size()) {
      throw new IllegalArgumentException("a robustness.csv row has " + COLUMNS.size() + " cells: " + c);
    }
    Map<String, Long> dropped = new TreeMap<>();
    for (String word : c.get(16).split(" ")) {
      if (!word.isEmpty()) {
        int eq = word.indexOf('=');
        dropped.put(word.substring(0, eq), Long.parseLong(word.substring(eq + 1)));
      }
    }
    // answered_of_offered (10) and dropped_total (15) are derived, not read back
    return new PhaseRow(c.get(0), c.get(1), Long.parseLong(c.get(2)), Double.parseDouble(c.get(3)),
        Double.parseDouble(c.get(4)), decimal(c.get(5)), Double.parseDouble(c.get(6)), decimal(c.get(7)),
        c.get(8).isEmpty() ? null : Long.valueOf(c.get(8)), Long.parseLong(c.get(9)), Long.parseLong(c.get(11)),
        Long.parseLong(c.get(12)), decimal(c.get(13)), c.get(14).isEmpty() ? null : Long.valueOf(c.get(14)), dropped,
        c.get(17), c.get(18).isEmpty() ? null : new ZoneClientCounts(Long.parseLong(c.get(18)),
            Long.parseLong(c.get(19)), Long.parseLong(c.get(20)), Long.parseLong(c.get(22)),
            Long.parseLong(c.get(21))),
        c.get(23).isEmpty() ? null : new Held(Long.parseLong(c.get(23)), Long.parseLong(c.get(24)), decimal(c.get(25))));
  }

  /**
   * What the zone client got in one phase: each query it asked has exactly one outcome.
   *
   * @param asked queries sent
   * @param answered answered NOERROR or NXDOMAIN: an answer from upstream
   * @param servfail answered SERVFAIL, what a miss budget answers
   * @param other answered with any other rcode (REFUSED, FORMERR, ...)
   * @param noReply no reply within 2 s of sending
   */
  public record ZoneClientCounts(long asked, long answered, long servfail, long other, long noReply) {

    public ZoneClientCounts {
      if (answered + servfail + other + noReply != asked) {
        throw new IllegalArgumentException("zone client outcomes " + answered + " + " + servfail + " + " + other
            + " + " + noReply + " do not add up to the " + asked + " asked");
      }
    }

    /** The part of the queries asked that were answered; null when none were asked. */
    public Double answeredOfAsked() {
      return asked == 0 ? null : (double) answered / asked;
    }

    /** The counts in words, e.g. {@code 400 asked: 380 answered, 20 SERVFAIL, 0 other rcodes, 0 no reply}. */
    public String words() {
      return asked + " asked: " + answered + " answered, " + servfail + " SERVFAIL, " + other + " other rcodes, "
          + noReply + " no reply";
    }
  }

  /**
   * What honest clients got in one {@code dnsperf -v} run: the answers it printed one per line,
   * their SERVFAILs and the 99th percentile of their latency in milliseconds (null if none).
   */
  record Honest(long answered, long servfail, Double p99LatencyMs) {

    static Honest of(String verboseOutput) {
      List<Double> latencies = new ArrayList<>();
      long servfail = 0;
      for (String line : verboseOutput.split("\n")) {
        Matcher a = KillTimeline.ANSWER.matcher(line);
        if (a.matches()) {
          latencies.add(Double.parseDouble(a.group(2)));
          if (a.group(1).equals("SERVFAIL")) {
            servfail++;
          }
        }
      }
      if (latencies.isEmpty()) {
        return new Honest(0, servfail, null);
      }
      double[] sorted = latencies.stream().mapToDouble(Double::doubleValue).toArray();
      Arrays.sort(sorted);
      // nearest rank: the smallest latency at or above which 1% of the answers lie
      int rank = (int) Math.ceil(0.99 * sorted.length) - 1;
      return new Honest(sorted.length, servfail, sorted[Math.max(0, rank)] * 1000.0);
    }
  }

  private static String optional(Number v, String format) {
    return v == null ? "" : String.format(Locale.ROOT, format, v);
  }

  private static Double decimal(String cell) {
    return cell.isEmpty() ? null : Double.valueOf(cell);
  }
}
