package io.shoal.study.scenario;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Set;

/**
 * The upstream-outage test of a scenario: each member's answers are first filled one name at a
 * time, evenly over {@code fillSpread}, so they expire spread over the TTL as a long-running
 * cache's do; then, under load with per-second statistics, knotd is stopped (SIGSTOP) {@code after}
 * into the measured run and resumed (SIGCONT) {@code length} later.
 *
 * @param quickAfter when to stop knotd in a --quick run
 * @param quickLength how long the outage lasts in a --quick run
 * @param queryTimeout dnsperf's -t: a query unanswered this long counts as lost, as for a stub resolver
 */
public record OutagePlan(Duration fillSpread, Duration after, Duration length, Duration quickAfter,
    Duration quickLength, Duration queryTimeout) {

  private static final Set<String> KEYS = Set.of(
      "fill_spread", "after", "length", "quick_after", "quick_length", "query_timeout");

  /** When knotd is stopped, in seconds into the measured run. */
  public Duration after(boolean quick) {
    return quick ? quickAfter : after;
  }

  /** How long knotd stays stopped. */
  public Duration length(boolean quick) {
    return quick ? quickLength : length;
  }

  /**
   * Reads a scenario's {@code outage} block; every window must fit the measured run it belongs to
   * with at least a second before and after, and the error names the key at fault.
   */
  static OutagePlan from(Config c, Duration stubTtl, LoadSettings load, LoadSettings quick) {
    ScenarioReader.allowOnly(c, "outage.", KEYS);
    Duration spread = c.getDuration("fill_spread");
    if (spread.isNegative() || spread.compareTo(stubTtl) >= 0) {
      // names filled more than a TTL apart would expire before the last one is asked
      throw new IllegalArgumentException("outage.fill_spread: from 0s to less than recipe.stub_ttl ("
          + stubTtl.toSeconds() + "s), is " + spread);
    }
    Duration timeout = c.hasPath("query_timeout") ? c.getDuration("query_timeout") : Duration.ofSeconds(2);
    if (timeout.compareTo(Duration.ofSeconds(1)) < 0 || timeout.toMillis() % 1000 != 0) {
      throw new IllegalArgumentException("outage.query_timeout: whole seconds, at least 1s (dnsperf -t counts "
          + "seconds), is " + timeout);
    }
    Duration after = c.getDuration("after");
    Duration length = c.getDuration("length");
    window("after", "length", "recipe.dnsperf.duration", after, length, load.duration());
    Duration quickAfter = c.hasPath("quick_after") ? c.getDuration("quick_after") : after;
    Duration quickLength = c.hasPath("quick_length") ? c.getDuration("quick_length") : length;
    window("quick_after", "quick_length", "recipe.quick.duration", quickAfter, quickLength, quick.duration());
    return new OutagePlan(spread, after, length, quickAfter, quickLength, timeout);
  }

  private static void window(String afterKey, String lengthKey, String durationKey, Duration after,
      Duration length, Duration duration) {
    if (after.compareTo(Duration.ofSeconds(2)) < 0) {
      throw new IllegalArgumentException("outage." + afterKey + ": at least 2s (one second to measure before the "
          + "outage, after dnsperf's first), is " + after);
    }
    if (length.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("outage." + lengthKey + ": at least 1s, is " + length);
    }
    if (after.plus(length).plus(Duration.ofSeconds(1)).compareTo(duration) > 0) {
      throw new IllegalArgumentException("outage." + afterKey + " + outage." + lengthKey + ": must end at least 1s "
          + "before " + durationKey + " (" + duration.toSeconds() + "s) ends, so the recovery is measured");
    }
  }
}
