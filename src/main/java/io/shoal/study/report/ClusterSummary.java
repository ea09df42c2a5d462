package io.shoal.study.report;

import io.shoal.study.cluster.RemoteLookupProbe;
import io.shoal.study.host.CpuQuota;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The clustered members in summary.md: the at-a-glance lines (upstream queries against independent
 * nodes, aggregate QPS, the cost of a remote lookup) and the Cluster section, from cluster.csv.
 */
final class ClusterSummary {
  /** Below this a remote lookup counts as cheap on loopback (the cluster's design goal). */
  static final double OVERHEAD_GOAL_MS = 1.0;
  /**
   * The 90th percentile an owner lookup's round trip should stay within on a cluster paced below
   * its capacity (cluster_capacity's paced member). At saturation the nodes queue, and the round
   * trip measures the queue; a paced member's says what a busy but not overloaded cluster adds.
   * 5 ms: the goal at half a node's capacity on a 2-core test host shared by the nodes, their load
   * generators and the upstream (docs/cluster.md).
   */
  static final double PACED_REMOTE_P90_GOAL_MS = 5.0;

  private ClusterSummary() {}

  /**
   * What a cluster scenario is for, one sentence each, from cluster.csv: upstream queries of each
   * cluster against the independent nodes of the same count, aggregate QPS of each multi-node
   * member against the one-node member, and the cost of a remote lookup. Empty without rows.
   */
  static List<String> atAGlance(List<ClusterRow> all) {
    // members are compared within their group (one workload's members); without groups, all at once
    List<String> groups = new ArrayList<>();
    for (ClusterRow r : all) {
      if (!groups.contains(r.group())) {
        groups.add(r.group());
      }
    }
    List<String> out = new ArrayList<>();
    for (String g : groups) {
      List<ClusterRow> rows = all.stream().filter(r -> java.util.Objects.equals(r.group(), g)).toList();
      out.addAll(withinGroup(rows));
      out.addAll(capacity(rows));
    }
    return out;
  }

  /** Goals of the capacity study (docs/cluster-internals.md): QPS of three quota-bound nodes against one. */
  static final double CAPACITY_QPS_GOAL = 2.4;
  /** ... and the CPU a cluster node spends per answered query against a single node's. */
  static final double CAPACITY_CPU_GOAL = 1.1;

  /**
   * The capacity lines of one group whose nodes ran under a CPU quota: QPS and CPU per answered
   * query of each multi-node member against the one-node member, how much of their quota the nodes
   * used, p99 latency, and the CPU the dnsperf processes took beside them. Empty without a quota.
   */
  static List<String> capacity(List<ClusterRow> rows) {
    List<String> out = new ArrayList<>();
    Optional<ClusterRow> single = rows.stream().filter(r -> r.nodes() == 1 && !r.cluster()).findFirst();
    if (single.isEmpty() || single.get().cpuQuota() == null || single.get().achievedQps() <= 0) {
      return out;
    }
    ClusterRow one = single.get();
    String where = one.group() == null ? "" : one.group() + ": ";
    for (ClusterRow r : rows) {
      StringBuilder line = new StringBuilder(where).append(r.member()).append(" (").append(r.nodes())
          .append(r.nodes() == 1 ? " node" : " nodes").append(r.cluster() ? ", cluster" : "")
          .append(String.format(Locale.ROOT, ", %.2f CPU each", r.cpuQuota())).append(")");
      boolean paced = r.maxQpsPerNode() != null;
      if (r != one) {
        double ratio = r.achievedQps() / one.achievedQps();
        line.append(String.format(Locale.ROOT, ": %.2fx the QPS of %s", ratio, one.member()));
        if (paced) {
          // the capacity goals are for members driven to saturation
          line.append(" (").append(pacedNote(r)).append(")");
        } else if (r.cluster()) {
          line.append(String.format(Locale.ROOT, " (goal %.1fx: %s)", CAPACITY_QPS_GOAL,
              ratio >= CAPACITY_QPS_GOAL ? "met" : "not met"));
        }
        if (r.cpuMicrosPerQuery() != null && one.cpuMicrosPerQuery() != null && one.cpuMicrosPerQuery() > 0) {
          double cpu = r.cpuMicrosPerQuery() / one.cpuMicrosPerQuery();
          line.append(String.format(Locale.ROOT, "; %.2fx the CPU per answered query (%.1f vs %.1f us)", cpu,
              r.cpuMicrosPerQuery(), one.cpuMicrosPerQuery()));
          if (r.cluster() && !paced) {
            line.append(String.format(Locale.ROOT, " (goal at most %.1fx: %s)", CAPACITY_CPU_GOAL,
                cpu <= CAPACITY_CPU_GOAL ? "met" : "not met"));
          }
        }
      } else {
        line.append(String.format(Locale.ROOT, ": ~%s qps", StudySummary.approx(r.achievedQps())));
        if (paced) {
          line.append(" (").append(pacedNote(r)).append(")");
        }
        if (r.cpuMicrosPerQuery() != null) {
          line.append(String.format(Locale.ROOT, " at %.1f us of CPU per answered query", r.cpuMicrosPerQuery()));
        }
      }
      Double use = quotaUsePct(r);
      if (use != null) {
        line.append(String.format(Locale.ROOT, "; the nodes used %.0f%% of their quota", use));
      }
      if (r.jitCpuSeconds() != null && r.cpuSeconds() != null && r.cpuSeconds() > 0) {
        line.append(String.format(Locale.ROOT, ", %.0f%% of that in JIT compiler threads",
            100.0 * r.jitCpuSeconds() / r.cpuSeconds()));
      }
      if (r.p99LatencyMs() != null) {
        line.append("; p99 latency ").append(StudySummary.ms(r.p99LatencyMs()));
      }
      if (r.loadCpuSeconds() != null && r.completed() > 0 && r.achievedQps() > 0) {
        line.append(loadCpu(r));
      }
      out.add(line.append('.').toString());
    }
    return out;
  }

  /**
   * What the load generators took beside the nodes: one dnsperf per node, each with the same
   * flags, so the same queries outstanding per node whatever the member; their CPU over the run,
   * per node and per answered query, so a member whose generators ran short of CPU shows.
   */
  static String loadCpu(ClusterRow r) {
    double cpus = r.loadCpuSeconds() / (r.completed() / r.achievedQps());
    double perQuery = r.loadCpuSeconds() * 1e6 / r.completed();
    return r.nodes() == 1
        ? String.format(Locale.ROOT, "; its dnsperf process used %.2f CPU, %.1f us per answered query", cpus, perQuery)
        : String.format(Locale.ROOT, "; its %d dnsperf processes (one per node) used %.2f CPU, %.2f per node, "
            + "%.1f us per answered query", r.nodes(), cpus, cpus / r.nodes(), perQuery);
  }

  /** What a paced row's QPS is: the load it was offered, not what it could serve. */
  static String pacedNote(ClusterRow r) {
    return "paced at " + r.maxQpsPerNode() + " qps per node: " + StudySummary.OFFERED_NOT_CAPACITY;
  }

  /**
   * The owner lookups' round trip over a clustered member's measured run, as bucket bounds, with the
   * goal for a paced member; null without answered lookups.
   */
  static String remoteLookupLatency(ClusterRow r) {
    if (r.remoteLookupP50Ms() == null) {
      return null;
    }
    StringBuilder line = new StringBuilder(r.member()).append(": owner lookups over the measured run took at most ")
        .append(bound(r.remoteLookupP50Ms())).append(" at the median and at most ").append(bound(r.remoteLookupP90Ms()))
        .append(" at p90 (bucket bounds of shoal_cluster_remote_lookup_seconds, all nodes' histograms summed)");
    if (r.maxQpsPerNode() != null) {
      line.append("; ").append(pacedNote(r)).append(String.format(Locale.ROOT, " (goal p90 at most %s: %s)",
          StudySummary.ms(PACED_REMOTE_P90_GOAL_MS), r.remoteLookupP90Ms() <= PACED_REMOTE_P90_GOAL_MS ? "met" : "not met"));
    }
    return line.append('.').toString();
  }

  /** A bucket bound in milliseconds; past the histogram's last finite bucket, said so. */
  private static String bound(double ms) {
    return Double.isInfinite(ms) ? "more than the last bucket" : StudySummary.ms(ms);
  }

  /**
   * The share of their quota the nodes used over the measured run: CPU seconds over nodes x quota x
   * run time (completed / QPS). Near 100% the quota bounded them; well below, something else did
   * (the load generators, or other tenants of the host). Null without a quota or CPU time.
   */
  static Double quotaUsePct(ClusterRow r) {
    if (r.cpuQuota() == null || r.cpuSeconds() == null || r.achievedQps() <= 0 || r.completed() <= 0) {
      return null;
    }
    double runSeconds = r.completed() / r.achievedQps();
    return 100.0 * r.cpuSeconds() / (r.nodes() * r.cpuQuota() * runSeconds);
  }

  /** The lines of one group of members, or of all members when the scenario has no groups. */
  private static List<String> withinGroup(List<ClusterRow> rows) {
    List<String> out = new ArrayList<>();
    Optional<ClusterRow> single = rows.stream().filter(r -> r.nodes() == 1 && !r.cluster()).findFirst();
    for (ClusterRow c : rows) {
      if (!c.cluster()) {
        continue;
      }
      Optional<ClusterRow> independent = rows.stream()
          .filter(r -> !r.cluster() && r.nodes() == c.nodes()).findFirst();
      if (independent.isEmpty()) {
        continue;
      }
      ClusterRow o = independent.get();
      StringBuilder line = new StringBuilder(c.member()).append(" sent ");
      double perC = perThousand(c);
      double perO = perThousand(o);
      if (c.completed() <= 0 || o.completed() <= 0) {
        line.append(c.upstreamQueries()).append(" queries upstream vs ").append(o.upstreamQueries())
            .append(" for ").append(o.member()).append(" (no ratio: a member completed nothing)");
      } else if (perC <= 0) {
        line.append("no query upstream vs ").append(String.format(Locale.ROOT, "%.1f", perO))
            .append(" per 1,000 answered for ").append(o.member());
      } else {
        line.append(String.format(Locale.ROOT, "%.1f", perC)).append(" upstream queries per 1,000 answered vs ")
            .append(String.format(Locale.ROOT, "%.1f", perO)).append(" for ").append(o.member()).append(": ");
        double fewer = perO / perC;
        if (fewer >= 1) {
          line.append(String.format(Locale.ROOT, "%.1f", fewer)).append("x fewer");
        } else {
          line.append(String.format(Locale.ROOT, "%.1f", 1 / fewer)).append("x more");
        }
        line.append(" (goal: about ").append(c.nodes()).append("x fewer, the node count)");
      }
      line.append("; ").append(c.upstreamQueries()).append(" vs ").append(o.upstreamQueries())
          .append(" upstream queries in all");
      if (c.fairHitRatePct() != null && o.fairHitRatePct() != null) {
        line.append(", hit rate ").append(StudySummary.pct(c.fairHitRatePct())).append(" vs ").append(StudySummary.pct(o.fairHitRatePct()));
      }
      out.add(line.append('.').toString());
    }
    // under a quota the capacity lines compare QPS, with the CPU per query beside it
    if (single.isPresent() && single.get().achievedQps() > 0 && single.get().cpuQuota() == null) {
      ClusterRow one = single.get();
      for (ClusterRow r : rows) {
        if (r.nodes() > 1) {
          out.add(r.member() + " (" + r.nodes() + " nodes" + (r.cluster() ? ", cluster" : "") + ") reaches "
              + String.format(Locale.ROOT, "%.2f", r.achievedQps() / one.achievedQps()) + "x the QPS of "
              + one.member() + " (1 node): ~" + StudySummary.approx(r.achievedQps()) + " vs ~" + StudySummary.approx(one.achievedQps())
              + " qps" + (r.maxQpsPerNode() == null ? "" : " (" + pacedNote(r) + ")") + ".");
        }
      }
    }
    for (ClusterRow r : rows) {
      String latency = remoteLookupLatency(r);
      if (latency != null) {
        out.add(latency);
      }
      if (r.remoteLookupOverheadMs() != null) {
        double ms = r.remoteLookupOverheadMs();
        if (ms < 0) {
          // a negative cost is noise: the host slowed the repeat passes more than the owner slowed the first
          out.add(r.member() + ": the remote-lookup probe measured no overhead (" + StudySummary.ms(ms) + ": the first passes "
              + "were faster than the all-local repeat passes, so this host's noise outweighs the cost of asking "
              + "the owner; see \"Remote-lookup overhead\").");
        } else {
          out.add(r.member() + ": asking the owner node adds about " + StudySummary.ms(ms) + " to a query ("
              + (ms < OVERHEAD_GOAL_MS ? "under" : "over") + " the " + StudySummary.ms(OVERHEAD_GOAL_MS)
              + " goal on loopback; idle probe, see \"Remote-lookup overhead\").");
        }
      }
      if (r.remoteLookupsTimeout() != null && r.remoteLookupsTimeout() > 0) {
        out.add(r.member() + ": " + r.remoteLookupsTimeout() + " remote lookups timed out (the owner did not answer "
            + "within owner_timeout; the node went upstream itself).");
      }
      if (r.remoteLookupsRefused() != null && r.remoteLookupsRefused() > 0) {
        out.add(r.member() + ": " + r.remoteLookupsRefused() + " remote lookups were refused (the owner's "
            + "access_control does not allow the other nodes; the node went upstream itself).");
      }
    }
    return out;
  }

  private static double perThousand(ClusterRow r) {
    return r.completed() <= 0 ? 0 : 1000.0 * r.upstreamQueries() / r.completed();
  }

  static String section(StudySummary.Context c) {
    StringBuilder md = new StringBuilder("\n## Cluster\n\n");
    md.append("From `").append(StudyCsv.CLUSTER.file()).append("`: each member summed over its nodes.\n\n");
    md.append("| ").append(String.join(" | ", ClusterRow.COLUMNS)).append(" |\n|");
    for (int i = 0; i < ClusterRow.COLUMNS.size(); i++) {
      md.append(i < 3 ? " --- |" : " ---: |");
    }
    md.append('\n');
    for (ClusterRow r : c.clusterRows()) {
      md.append("| ").append(String.join(" | ", r.cells())).append(" |\n");
    }
    md.append("""

        - `achieved_qps`, `sent`, `completed`, `lost` are the nodes' dnsperf runs added up; `avg_latency_ms` \
        is the mean over every completed query (each node's mean weighted by its completed queries).
        - `upstream_queries` is what knotd received during the measured run, and `fair_hit_rate_pct` is \
        1 - upstream_queries / completed: the same measure as for every other member. In a cluster a \
        non-owner's miss that the owner answers from its cache sends nothing upstream, so it counts as a hit \
        here.
        - `cache_hits` and `cache_misses` are the nodes' own counters added up. They count such a remote \
        lookup twice: a miss on the node the client asked, then a hit (or a miss) on the owner. \
        `cache_hit_rate_pct` = cache_hits / (cache_hits + cache_misses - remote lookups the owner \
        answered): the owner-side lookups are taken out, which leaves one lookup per client query, and a \
        client query counts as a hit if any node's cache answered it. Coalesced misses (queries that joined a \
        fetch already in flight: a miss in the counters, nothing sent upstream) make it lower than the fair \
        rate; timed-out remote lookups make it higher (the asking node went upstream itself, and the owner may \
        have fetched the same name too).
        - `remote_lookups_*` are `shoal_cluster_remote_lookups_total` by outcome over the measured run: \
        `answered` (the owner answered, from its cache or upstream), `timeout` (no usable reply within \
        `owner_timeout`; the node went upstream itself), `failed` (the owner answered SERVFAIL), `refused` (the \
        owner's access control refused the asking node, which went upstream itself).
        - `cpu_seconds` is the user + system CPU time of all the member's node processes over the measured \
        run (from /proc/PID/stat, summed), and `cpu_us_per_query` that time per completed query.
        - `remote_lookup_p50_ms` and `remote_lookup_p90_ms` are the median and 90th percentile of the round \
        trip of the owner lookups answered during the measured run, from `shoal_cluster_remote_lookup_seconds` \
        scraped before and after it, every node's histogram summed. A histogram keeps counts per bucket, so \
        each is the upper bound of the bucket the quantile falls in: at most that long. Empty without answered \
        lookups.
        - `max_qps_per_node` is the -Q each dnsperf of a paced member ran with (`pace`: a share of an earlier \
        member's QPS in the same run, split over the nodes); its QPS is then the load it was offered, not a \
        capacity, and it is measured for its latency. Empty for members driven as fast as they answer.
        """);
    int mostNodes = c.clusterRows().stream().mapToInt(ClusterRow::nodes).max().orElse(1);
    md.append("\nAggregate QPS can only grow with the node count where the host has a core for each node, ")
        .append("its dnsperf and knotd; this host has ").append(c.host().cores()).append(" for up to ")
        .append(mostNodes).append(" nodes, ").append(mostNodes).append(" dnsperf processes and knotd. ")
        .append("Upstream queries and hit rates do not depend on the cores.\n");
    if (c.clusterRows().stream().anyMatch(r -> r.cpuQuota() != null)) {
      md.append("""

          Capacity: every shoal process ran under a CPU quota of its own (`cpu_quota`, a cgroup CFS quota \
          per process, as a Kubernetes CPU limit bounds a pod), so the nodes compare as machines of that \
          size would, as long as the host has the quotas plus the load generators to give. The quota share \
          used is `cpu_seconds` / (nodes x `cpu_quota` x run time): near 100%% the quota bounded the nodes; \
          well below it, something else did (the dnsperf processes, `load_cpu_seconds`, share the host's \
          cores). `p99_latency_ms` is the 99th percentile over every completed query of the member's dnsperf \
          runs (their -v per-query lines); a quota-bound process stalls for the rest of a %s CFS period \
          (`cpu_period`) once its quota is spent, which shows in the tail. Loopback stands in for the \
          network between machines: an owner lookup here costs no wire time.
          """.formatted(CpuQuota.periodText(c.scenario().recipe().cpuPeriod())));
    }
    md.append("\nCharts: ");
    for (String f : StudyCharts.CLUSTER_FILES) {
      md.append("[").append(f).append("](").append(f).append(") ");
    }
    md.append("\n");
    if (!c.probes().isEmpty()) {
      md.append("\n### Remote-lookup overhead\n\n");
      md.append("""
          Measured after the member's run, with no other load, one query at a time (dnsperf -c 1 -q 1), \
          on %d names that are not in the query file, in %d batches. Per batch: node-0 is asked once for \
          each name, so each is then in its owner's cache; node-1 is asked for each once (first pass: its \
          own names are local hits, the others remote lookups), then once more (repeat pass: all local \
          hits). node-1's `shoal_cluster_remote_lookups_total` over the probe counts the first passes' \
          remote lookups. Overhead = (first-pass mean - repeat-pass mean) x first-pass queries / remote \
          lookups: the extra latency per remote lookup, measured on the same node, names and client a moment \
          apart, so the JVM's and the client's own costs cancel. On a busy host the noise can be larger than \
          the overhead, and the difference can even come out negative.

          """.formatted(RemoteLookupProbe.NAMES, RemoteLookupProbe.BATCHES));
      c.probes().forEach((m, d) -> md.append("- **").append(m).append("**: ").append(d).append('\n'));
    }
    return md.toString();
  }
}
