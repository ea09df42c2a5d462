package io.shoal.study.attack;

import io.shoal.study.host.StudyException;
import io.shoal.study.measure.MetricsScrape;
import io.shoal.study.server.ServerUnderTest;
import io.shoal.study.server.ShoalUnderTest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What a member turned away during a robustness phase: its cumulative refusal counts (shoal's
 * dropped and miss-budget counters, unbound's own) and how much they grew.
 */
final class Refusals {

  private Refusals() {
  }

  /** The server's cumulative counts of what it turned away: shoal's dropped counter, unbound's own. */
  static Map<String, Long> of(ServerUnderTest server, Path audit) throws IOException, StudyException {
    if (server instanceof ShoalUnderTest shoal) {
      return shoalRefusals(shoal.scrape(audit));
    }
    Map<String, Long> counts = server.refusalCounters(audit);
    return counts == null ? Map.of() : counts;
  }

  /** How much each cumulative count grew; counts that did not grow are left out. */
  static Map<String, Long> delta(Map<String, Long> was, Map<String, Long> now) {
    Map<String, Long> delta = new TreeMap<>();
    now.forEach((reason, n) -> {
      long d = n - was.getOrDefault(reason, 0L);
      if (d > 0) {
        delta.put(reason, d);
      }
    });
    return delta;
  }

  /**
   * shoal's cumulative counts of what it turned away: shoal_dropped_total by reason, and misses
   * answered SERVFAIL past a miss budget (shoal_miss_budget_exceeded_total) as miss_budget_BUDGET.
   */
  static Map<String, Long> shoalRefusals(MetricsScrape s) {
    Map<String, Long> counts = dropped(s);
    s.samples().stream().filter(x -> x.name().equals("shoal_miss_budget_exceeded_total")
        && x.labels().containsKey("budget"))
        .forEach(x -> counts.merge("miss_budget_" + x.labels().get("budget"), Math.round(x.value()), Long::sum));
    return counts;
  }

  private static Map<String, Long> dropped(MetricsScrape s) {
    return s.samples().stream().filter(x -> x.name().equals("shoal_dropped_total") && x.labels().containsKey("reason"))
        .collect(Collectors.toMap(x -> x.labels().get("reason"), x -> Math.round(x.value()), Long::sum, TreeMap::new));
  }
}
