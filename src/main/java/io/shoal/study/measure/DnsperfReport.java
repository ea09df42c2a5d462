package io.shoal.study.measure;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The statistics block dnsperf prints at the end of a run. */
public record DnsperfReport(
    long sent, long completed, long lost, double runSeconds, double queriesPerSecond, double avgLatencySeconds) {

  private static final Pattern SENT = Pattern.compile("Queries sent:\\s+(\\d+)");
  private static final Pattern COMPLETED = Pattern.compile("Queries completed:\\s+(\\d+)");
  private static final Pattern LOST = Pattern.compile("Queries lost:\\s+(\\d+)");
  private static final Pattern RUN_TIME = Pattern.compile("Run time \\(s\\):\\s+([0-9.]+)");
  private static final Pattern QPS = Pattern.compile("Queries per second:\\s+([0-9.]+)");
  private static final Pattern LATENCY = Pattern.compile("Average Latency \\(s\\):\\s+([0-9.]+)");

  /**
   * Reads dnsperf's output (stdout and stderr together). Fails when the statistics block is
   * missing, which means dnsperf stopped before measuring anything (bad flags, unreadable file).
   */
  public static DnsperfReport parse(String output) {
    return new DnsperfReport(
        whole(output, SENT), whole(output, COMPLETED), whole(output, LOST),
        decimal(output, RUN_TIME), decimal(output, QPS),
        // dnsperf leaves out the latency line when nothing completed.
        find(output, LATENCY).map(Double::parseDouble).orElse(0.0));
  }

  /**
   * Concurrent runs, one per node of a member, as one: queries sent, completed and lost and the
   * queries per second added up, the average latency weighted by each run's completed queries
   * (the mean over every completed query), the run time the longest of them.
   */
  public static DnsperfReport sumOver(List<DnsperfReport> runs) {
    if (runs.isEmpty()) {
      throw new IllegalArgumentException("no dnsperf run to sum");
    }
    long sent = 0;
    long completed = 0;
    long lost = 0;
    double qps = 0;
    double runSeconds = 0;
    double latencyTotal = 0;
    for (DnsperfReport r : runs) {
      sent += r.sent;
      completed += r.completed;
      lost += r.lost;
      qps += r.queriesPerSecond;
      runSeconds = Math.max(runSeconds, r.runSeconds);
      latencyTotal += r.avgLatencySeconds * r.completed;
    }
    return new DnsperfReport(sent, completed, lost, runSeconds, qps, completed == 0 ? 0.0 : latencyTotal / completed);
  }

  /** The average latency in milliseconds, as the CSV reports it. */
  public double avgLatencyMillis() {
    return avgLatencySeconds * 1000.0;
  }

  private static long whole(String text, Pattern p) {
    return Long.parseLong(required(text, p));
  }

  private static double decimal(String text, Pattern p) {
    return Double.parseDouble(required(text, p));
  }

  private static String required(String text, Pattern p) {
    return find(text, p).orElseThrow(() -> new IllegalArgumentException(
        "dnsperf output has no '" + p.pattern().replace("\\", "").replaceAll("[(+].*", "").trim()
            + "' line; did dnsperf run? Output was:\n" + tail(text)));
  }

  private static Optional<String> find(String text, Pattern p) {
    Matcher m = p.matcher(text);
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  private static String tail(String text) {
    return text.length() <= 2000 ? text : "..." + text.substring(text.length() - 2000);
  }
}
