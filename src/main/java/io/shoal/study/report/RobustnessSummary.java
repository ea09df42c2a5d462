package io.shoal.study.report;

import io.shoal.study.attack.PhaseRow;
import io.shoal.study.attack.ProcessFootprint;
import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.AttackPlan;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Scenario;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** summary.md of a robustness run: what each attack cost honest clients and the server, from robustness.csv. */
public final class RobustnessSummary {
  /** The chart's file name in the run directory. */
  public static final String PNG = "robustness.png";

  /** What the summary reports besides the rows. */
  public record Context(Scenario scenario, String startedAt, boolean quick, LoadSettings load, String setup,
      HostFacts host, Map<String, String> versions, List<String> commands) {}

  private RobustnessSummary() {}

  /** One line per phase: honest QPS against the baseline, failures, and what the server held and dropped. */
  public static List<String> atAGlance(List<PhaseRow> rows) {
    List<String> out = new ArrayList<>();
    for (PhaseRow r : rows) {
      StringBuilder line = new StringBuilder(r.phase()).append(": honest clients ~")
          .append(StudySummary.approx(r.honestQps())).append(" qps");
      AttackPlan.Phase phase = AttackPlan.Phase.named(r.phase());
      if (r.qpsVsBaseline() != null && phase.baseline() != phase) {
        line.append(String.format(Locale.ROOT, " (%.2fx %s)", r.qpsVsBaseline(), phase.baseline().configName()));
      }
      line.append(String.format(Locale.ROOT, ", mean latency %.2f ms", r.avgLatencyMs()));
      if (r.p99LatencyMs() != null) {
        line.append(String.format(Locale.ROOT, ", p99 %.2f ms", r.p99LatencyMs()));
      }
      line.append(", ").append(r.honestServfail()).append(" SERVFAIL, ").append(r.honestLost()).append(" lost");
      if (r.attackSent() > 0) {
        line.append("; the attack sent ").append(r.attackSent())
            .append(phase == AttackPlan.Phase.TCP_DRIP_IDLE || phase == AttackPlan.Phase.TCP_HOLDERS
                ? " connections" : " packets")
            .append(" (~").append(StudySummary.approx(r.attackPerSecond())).append("/s)");
      }
      line.append("; shoal held at most ").append(r.rssMaxMib() == null ? "?" : String.format(Locale.ROOT, "%.0f",
          r.rssMaxMib())).append(" MiB RSS and ").append(r.fdsMax() == null ? "?" : r.fdsMax())
          .append(" descriptors, and dropped ").append(r.droppedTotal() == 0 ? "nothing" : r.droppedWords());
      out.add(line.toString());
    }
    return out;
  }

  /** The whole file. */
  public static String render(Context c, List<PhaseRow> rows) {
    Scenario s = c.scenario();
    AttackPlan p = s.attacks();
    StringBuilder md = new StringBuilder();
    md.append("# Study `").append(s.name()).append("`\n\n").append(s.description()).append("\n\n");
    md.append("Run started ").append(c.startedAt()).append(".");
    if (c.quick()) {
      md.append(" **Quick smoke run** (--quick): each phase ran ").append(c.load().duration().toSeconds())
          .append(" s, so these numbers only show that the study works; do not quote them.");
    }
    md.append("\n\n## At a glance\n\n");
    atAGlance(rows).forEach(l -> md.append("- ").append(l).append('\n'));
    md.append("\nAbsolute numbers hold for this host only. The attack generators run in the study process on the ")
        .append("same host, so part of what an attack costs honest clients is the CPU the generator takes; ")
        .append("quote the ratios to the baseline phase, measured in the same run.\n");

    md.append("\n## Phases\n\n| phase | attack | honest qps | vs baseline | mean ms | p99 ms | SERVFAIL | lost ")
        .append("| RSS max MiB | fds max | dropped |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (PhaseRow r : rows) {
      md.append("| ").append(r.phase()).append(" | ").append(r.attackDetail().replace("|", "/")).append(" | ")
          .append(String.format(Locale.ROOT, "%.0f", r.honestQps())).append(" | ")
          .append(r.qpsVsBaseline() == null ? "" : String.format(Locale.ROOT, "%.3f", r.qpsVsBaseline())).append(" | ")
          .append(String.format(Locale.ROOT, "%.3f", r.avgLatencyMs())).append(" | ")
          .append(r.p99LatencyMs() == null ? "" : String.format(Locale.ROOT, "%.3f", r.p99LatencyMs())).append(" | ")
          .append(r.honestServfail()).append(" | ").append(r.honestLost()).append(" | ")
          .append(r.rssMaxMib() == null ? "" : String.format(Locale.ROOT, "%.1f", r.rssMaxMib())).append(" | ")
          .append(r.fdsMax() == null ? "" : r.fdsMax()).append(" | ").append(r.droppedWords()).append(" |\n");
    }
    md.append("\nHonest clients are dnsperf replaying the recipe's query file in every phase with the same flags "
        + "(over TCP in tcp_baseline and tcp_holders, over UDP in the others); ")
        .append("`p99` comes from dnsperf's per-query lines (-v). RSS is the largest VmRSS of the shoal process ")
        .append("and fds the most entries of /proc/PID/fd, sampled every ")
        .append(ProcessFootprint.EVERY.toMillis()).append(" ms from the attack's start to dnsperf's end. ")
        .append("`dropped` is the phase's increase of shoal_dropped_total by reason, scraped before and after. ")
        .append("Data: [robustness.csv](robustness.csv); chart: [").append(PNG).append("](").append(PNG).append(").\n");

    md.append("\n## The attacks\n\n");
    md.append("- malformed_udp: ").append(p.malformedPerSecond()).append(" packets/s from 8 source ports, in turn ")
        .append("random bytes, truncated queries, queries with QR set, a self-pointing name, QDCOUNT 65535, ")
        .append("a label longer than the packet, and queries with random bytes flipped\n");
    md.append("- tcp_drip_idle: ").append(p.dripConnections()).append(" connections sending one byte of a query ")
        .append("per second and ").append(p.idleConnections()).append(" sending nothing; a connection the server ")
        .append("closes is opened again (at most four connects per connection)\n");
    md.append("- tcp_holders: ").append(p.holderEmptyConnections()).append(" connections sending a zero-length ")
        .append("message a second and ").append(p.holderIdleConnections()).append(" sending nothing, more than the ")
        .append("member's tcp_max_connections, each opened again as soon as the server closes it; honest clients ")
        .append("ask over TCP (dnsperf -m tcp), compared with tcp_baseline, the same clients over TCP without ")
        .append("an attack\n");
    md.append("- miss_flood: queries for unique names under the zone at ").append(p.missTimesBaseline())
        .append(" times the baseline's honest QPS (at most ").append(p.missMaxPerSecond())
        .append("/s), sent without waiting for answers: every one misses the cache and goes to knotd\n");
    md.append("- miss_flood_spread: the same flood from 256 source networks (127.1.N.1, each its own /24), so a ")
        .append("budget per client does not hold it; a budget per zone does\n");
    md.append("- hostile_upstream: ").append(p.hostilePerSecond()).append(" queries/s for new names under `")
        .append(p.hostileZone()).append("`, whose profile forwards to a server in the study process that answers ")
        .append("in turn with random bytes, a record owned by a self-pointing compression pointer, an answer ")
        .append("with the wrong ID, and silence; honest clients ask names of the good profile\n");
    md.append("\nEvery attack runs from one second before dnsperf starts until dnsperf ends, bounded by its rate ")
        .append("and a time limit; all traffic goes to 127.0.0.1.\n");

    md.append("\n## Held constant\n\n- member: ").append(c.setup()).append('\n');
    Recipe r = s.recipe();
    md.append("- upstream: knotd, zone `").append(r.zone()).append("` with a wildcard A record, TTL ")
        .append(r.stubTtl().toSeconds()).append(" s\n");
    md.append("- honest queries: ").append(r.queries().lines()).append(" lines drawn from ")
        .append(r.queries().names()).append(" names, seed ").append(r.queries().seed()).append('\n');
    md.append("- load: dnsperf -c ").append(c.load().clients()).append(" -q ").append(c.load().outstanding())
        .append(" -T ").append(c.load().threads()).append(" -l ").append(c.load().duration().toSeconds())
        .append(" -v per phase, after ").append(c.load().warmup().toSeconds()).append(" s of warm-up\n");
    md.append("- shoal JVM options: ").append(String.join(" ", r.jvmOptions())).append('\n');
    StudySummary.appendProvenance(md, c.host(), c.versions(), c.commands());
    md.append("\nEach phase's directory under `members/").append(s.members().get(0).name())
        .append("/phases/` holds dnsperf's output, the metrics scraped before and after, and what the attack did.\n");
    return md.toString();
  }
}
