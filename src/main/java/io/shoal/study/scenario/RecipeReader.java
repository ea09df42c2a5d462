package io.shoal.study.scenario;

import static io.shoal.study.scenario.ScenarioReader.allowOnly;
import static io.shoal.study.scenario.ScenarioReader.positive;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * Reads and checks a scenario's {@code recipe} block: the zone, queries, shoal settings, dnsperf load,
 * rounds, generated domain list, DNSSEC signing and CPU quota every member is measured under.
 */
final class RecipeReader {

  private static final Set<String> RECIPE = Set.of(
      "zone", "stub_ttl", "queries", "ingress_workers", "fill", "max_entries", "when_full", "shard_count",
      "map_size", "sync_interval", "upstream_workers", "jvm_options", "dnsperf", "quick", "rounds", "policy_list",
      "dnssec", "cpu_quota", "cpu_period", "cpu_quota_from", "latency_percentiles",
      "turns");
  /** Rounds a scenario may ask for: each one runs every member again. */
  static final int MAX_ROUNDS = 9;
  /** Rounds of a side-by-side scenario ({@code turns = slices}): each is one short dnsperf run per member. */
  static final int MAX_SLICES = 40;
  private static final Set<String> QUERIES = Set.of("names", "lines", "seed");
  private static final Set<String> DNSPERF = Set.of("clients", "outstanding", "threads", "duration", "warmup",
      "honest_qps", "honest_outstanding");
  private static final Set<String> QUICK = Set.of("duration", "warmup");
  private static final Set<String> POLICY_LIST = Set.of("names", "quick_names", "seed");

  private RecipeReader() {
  }

  /** The recipe in {@code r}, the scenario's {@code recipe} block; the error names the key at fault. */
  static Recipe read(Config r) {
    allowOnly(r, "recipe.", RECIPE);
    Config q = r.getConfig("queries");
    allowOnly(q, "recipe.queries.", QUERIES);
    Config d = r.getConfig("dnsperf");
    allowOnly(d, "recipe.dnsperf.", DNSPERF);
    Config quick = r.getConfig("quick");
    allowOnly(quick, "recipe.quick.", QUICK);

    String zone = r.getString("zone");
    LoadSettings load = new LoadSettings(
        positive(d, "clients"), positive(d, "outstanding"), positive(d, "threads"),
        d.getDuration("duration"), d.getDuration("warmup"), null);
    if (load.duration().compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("recipe.dnsperf.duration: at least 1s (dnsperf -l counts seconds)");
    }
    boolean sideBySide = sideBySide(r);
    int rounds = r.hasPath("rounds") ? r.getInt("rounds") : 1;
    int maxRounds = sideBySide ? MAX_SLICES : MAX_ROUNDS;
    if (rounds < 1 || rounds > maxRounds) {
      throw new IllegalArgumentException("recipe.rounds: from 1 to " + maxRounds
          + (sideBySide ? " with turns = slices" : "") + ", is " + rounds);
    }
    return new Recipe(
        zone,
        r.getDuration("stub_ttl"),
        new QueryFile(zone, positive(q, "names"), positive(q, "lines"), q.getLong("seed")),
        positive(r, "ingress_workers"),
        r.getString("fill"),
        r.getLong("max_entries"),
        r.getString("when_full"),
        positive(r, "shard_count"),
        r.getBytes("map_size"),
        r.getDuration("sync_interval"),
        positive(r, "upstream_workers"),
        List.copyOf(r.getStringList("jvm_options")),
        load,
        load.shortened(quick.getDuration("duration"), quick.getDuration("warmup")),
        rounds,
        r.hasPath("policy_list") ? policyList(r.getConfig("policy_list")) : null,
        r.hasPath("dnssec") ? Signing.from(r.getConfig("dnssec")) : null,
        cpuQuota(r),
        cpuPeriod(r),
        cpuQuotaAfterWarmup(r),
        r.hasPath("latency_percentiles") && r.getBoolean("latency_percentiles"),
        sideBySide);
  }

  /**
   * recipe.turns: {@code runs} (the default: each round starts, warms up, measures and stops every
   * member in turn) or {@code slices} (every member started and warmed up once, then measured in
   * turns of recipe.dnsperf.duration, all of them running meanwhile).
   */
  private static boolean sideBySide(Config r) {
    if (!r.hasPath("turns")) {
      return false;
    }
    return switch (r.getString("turns")) {
      case "runs" -> false;
      case "slices" -> true;
      default -> throw new IllegalArgumentException("recipe.turns: runs (each round starts, measures and stops every "
          + "member in turn) or slices (members started once, then measured in short turns side by side), is '"
          + r.getString("turns") + "'");
    };
  }

  private static PolicyList policyList(Config p) {
    allowOnly(p, "recipe.policy_list.", POLICY_LIST);
    int names = positive(p, "names");
    int quickNames = p.hasPath("quick_names") ? positive(p, "quick_names") : names;
    return new PolicyList(names, quickNames, p.getLong("seed"));
  }

  /** recipe.cpu_quota: CPUs per shoal process, above 0 and at most 64; null when not set. */
  private static Double cpuQuota(Config r) {
    if (!r.hasPath("cpu_quota")) {
      return null;
    }
    double q = r.getDouble("cpu_quota");
    if (!(q >= 0.01) || q > 64) {
      throw new IllegalArgumentException("recipe.cpu_quota: CPUs per shoal process, from 0.01 to 64, is " + q);
    }
    return q;
  }

  /**
   * recipe.cpu_period: the CFS period of each quota, from 1 ms to 1 s with at least 1 ms of CPU in
   * it; the kernel's 100 ms when not set.
   */
  private static Duration cpuPeriod(Config r) {
    if (!r.hasPath("cpu_period")) {
      return io.shoal.study.host.CpuQuota.DEFAULT_PERIOD;
    }
    if (!r.hasPath("cpu_quota")) {
      throw new IllegalArgumentException("recipe.cpu_period: the period of recipe.cpu_quota, which is not set");
    }
    Duration period = r.getDuration("cpu_period");
    try {
      io.shoal.study.host.CpuQuota.checkedPeriod(r.getDouble("cpu_quota"), period);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("recipe.cpu_period: " + e.getMessage(), e);
    }
    return period;
  }

  /**
   * recipe.cpu_quota_from: {@code start} (the default: the JVM starts under its quota) or
   * {@code measured} (the quota applies from the measured run on, after the warm-up).
   */
  private static boolean cpuQuotaAfterWarmup(Config r) {
    if (!r.hasPath("cpu_quota_from")) {
      return false;
    }
    if (!r.hasPath("cpu_quota")) {
      throw new IllegalArgumentException("recipe.cpu_quota_from: says when recipe.cpu_quota applies, which is not set");
    }
    return switch (r.getString("cpu_quota_from")) {
      case "start" -> false;
      case "measured" -> true;
      default -> throw new IllegalArgumentException("recipe.cpu_quota_from: start (the JVM starts under its quota) or"
          + " measured (after the warm-up), is '" + r.getString("cpu_quota_from") + "'");
    };
  }
}
