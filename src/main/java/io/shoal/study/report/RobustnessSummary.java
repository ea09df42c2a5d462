package io.shoal.study.report;

import io.shoal.study.attack.PhaseRow;
import io.shoal.study.attack.ProcessFootprint;
import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.AttackPlan;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Scenario;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * summary.md of a robustness run: what each attack cost honest clients and the server, from
 * robustness.csv; with several members (shoal, unbound), their figures for the same phase side by
 * side, each as a ratio to its own baseline.
 */
public final class RobustnessSummary {
  /** The chart's file name in the run directory. */
  public static final String PNG = "robustness.png";

  /**
   * What the summary reports besides the rows.
   *
   * @param setups how each member ran, by member name, in the order they ran
   * @param skipped members that did not run, with the reason
   */
  public record Context(Scenario scenario, String startedAt, boolean quick, LoadSettings load,
      Map<String, String> setups, Map<String, String> skipped, HostFacts host, Map<String, String> versions,
      List<String> commands) {}

  private RobustnessSummary() {}

  /** One line per member and phase: honest QPS against the baseline, failures, and what the server held and dropped. */
  public static List<String> atAGlance(List<PhaseRow> rows) {
    boolean several = members(rows).size() > 1;
    List<String> out = new ArrayList<>();
    for (PhaseRow r : rows) {
      StringBuilder line = new StringBuilder(several ? r.member() + " " : "").append(r.phase())
          .append(": honest clients ~").append(StudySummary.approx(r.honestQps())).append(" qps");
      AttackPlan.Phase phase = AttackPlan.Phase.named(r.phase());
      if (r.answeredOfOffered() != null) {
        line.append(String.format(Locale.ROOT, ", %.1f%% of the %,d offered answered", 100 * r.answeredOfOffered(),
            r.honestOffered()));
      }
      if (r.qpsVsBaseline() != null && phase.baseline() != phase) {
        line.append(String.format(Locale.ROOT, " (%.2fx %s)", r.qpsVsBaseline(), phase.baseline().configName()));
      }
      line.append(String.format(Locale.ROOT, ", mean latency %.2f ms", r.avgLatencyMs()));
      if (r.p99LatencyMs() != null) {
        line.append(String.format(Locale.ROOT, ", p99 %.2f ms", r.p99LatencyMs()));
      }
      line.append(", ").append(r.honestServfail()).append(" SERVFAIL, ").append(r.honestLost()).append(" lost");
      if (r.zoneClient() != null) {
        line.append("; the zone client ").append(r.zoneClient().words());
      }
      if (r.attackSent() > 0) {
        line.append("; the attack sent ").append(r.attackSent())
            .append(r.held() != null ? " connections" : " packets")
            .append(" (~").append(StudySummary.approx(r.attackPerSecond())).append("/s)");
        if (r.held() != null) {
          line.append(", ").append(heldWords(r.held()));
        }
      }
      line.append("; the server held at most ").append(r.rssMaxMib() == null ? "?" : String.format(Locale.ROOT,
          "%.0f", r.rssMaxMib())).append(" MiB RSS and ").append(r.fdsMax() == null ? "?" : r.fdsMax())
          .append(" descriptors, and dropped ").append(r.droppedTotal() == 0 ? "nothing" : r.droppedWords());
      out.add(line.toString());
    }
    return out;
  }

  /** What the server did with an attack's connections, e.g. {@code 1300 closed by the server, median 5.2 s after the connect}. */
  static String heldWords(PhaseRow.Held h) {
    return h.closedByServer() + " closed by the server" + (h.closeMedianSeconds() == null ? ""
        : String.format(Locale.ROOT, ", median %.1f s after the connect", h.closeMedianSeconds()));
  }

  /**
   * The DoT and DoH holders, one line per member and holders phase: the honest clients' rate under
   * them and without them, its ratio, what the holders opened and the server closed and how fast,
   * and what the server held and dropped meanwhile. Empty when no such phase ran.
   */
  static String holdersTable(List<PhaseRow> rows) {
    Map<String, PhaseRow> byKey = new LinkedHashMap<>();
    rows.forEach(r -> byKey.put(r.member() + " " + r.phase(), r));
    StringBuilder md = new StringBuilder();
    for (PhaseRow r : rows) {
      AttackPlan.Phase phase = AttackPlan.Phase.named(r.phase());
      if (phase != AttackPlan.Phase.DOT_HOLDERS && phase != AttackPlan.Phase.DOH_HOLDERS) {
        continue;
      }
      PhaseRow base = byKey.get(r.member() + " " + phase.baseline().configName());
      PhaseRow.Held h = r.held();
      md.append("| ").append(r.member()).append(" | ").append(r.phase()).append(" | ")
          .append(base == null ? "" : String.format(Locale.ROOT, "%.0f", base.honestQps())).append(" | ")
          .append(String.format(Locale.ROOT, "%.0f", r.honestQps())).append(" | ")
          .append(r.qpsVsBaseline() == null ? "" : String.format(Locale.ROOT, "%.3f", r.qpsVsBaseline())).append(" | ")
          .append(h == null ? "" : h.opened()).append(" | ").append(h == null ? "" : h.closedByServer()).append(" | ")
          .append(h == null || h.closeMedianSeconds() == null ? "" : String.format(Locale.ROOT, "%.1f",
              h.closeMedianSeconds())).append(" | ")
          .append(r.rssMaxMib() == null ? "" : String.format(Locale.ROOT, "%.1f", r.rssMaxMib())).append(" | ")
          .append(r.fdsMax() == null ? "" : r.fdsMax()).append(" | ").append(r.droppedWords()).append(" |\n");
    }
    if (md.length() == 0) {
      return "";
    }
    return "| member | phase | honest qps, baseline | honest qps, holders | vs baseline | holders opened | closed by "
        + "server | median s to close | RSS max MiB | fds max | dropped |\n"
        + "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n" + md;
  }

  /** The members of the rows, in the order they ran. */
  static List<String> members(List<PhaseRow> rows) {
    Set<String> names = new LinkedHashSet<>();
    rows.forEach(r -> names.add(r.member()));
    return List.copyOf(names);
  }

  /**
   * The side-by-side table: one line per phase, for each member its honest rate as a ratio to its
   * own baseline, the share of the offered queries answered (paced phases), lost queries, and when a
   * zone client ran, the share of its queries answered. A member that has no row for a phase shows
   * "not run"; a phase without a zone client (the TCP phases) shows "none" for it.
   */
  static String sideBySide(List<PhaseRow> rows) {
    List<String> members = members(rows);
    boolean zone = rows.stream().anyMatch(r -> r.zoneClient() != null);
    Map<String, Map<String, PhaseRow>> byPhase = new LinkedHashMap<>();
    for (PhaseRow r : rows) {
      byPhase.computeIfAbsent(r.phase(), k -> new LinkedHashMap<>()).put(r.member(), r);
    }
    StringBuilder md = new StringBuilder("| phase |");
    StringBuilder rule = new StringBuilder("|---|");
    for (String m : members) {
      md.append(' ').append(m).append(" vs own baseline | ").append(m).append(" answered of offered | ").append(m)
          .append(" lost |");
      rule.append("---:|---:|---:|");
      if (zone) {
        md.append(' ').append(m).append(" zone client answered of asked |");
        rule.append("---:|");
      }
    }
    md.append('\n').append(rule).append('\n');
    for (AttackPlan.Phase phase : AttackPlan.Phase.values()) {
      Map<String, PhaseRow> row = byPhase.get(phase.configName());
      if (row == null) {
        continue;
      }
      md.append("| ").append(phase.configName()).append(phase.baseline() != phase && phase.overTcp()
          ? " (vs " + phase.baseline().configName() + ")" : "").append(" |");
      for (String m : members) {
        PhaseRow r = row.get(m);
        if (r == null) {
          md.append(" not run | | |").append(zone ? " |" : "");
          continue;
        }
        md.append(' ').append(r.qpsVsBaseline() == null ? "" : String.format(Locale.ROOT, "%.3f", r.qpsVsBaseline()))
            .append(" | ").append(r.answeredOfOffered() == null ? "unpaced" : String.format(Locale.ROOT, "%.4f",
                r.answeredOfOffered()))
            .append(" | ").append(r.honestLost()).append(" |");
        if (zone) {
          md.append(' ').append(zoneCell(r.zoneClient())).append(" |");
        }
      }
      md.append('\n');
    }
    return md.toString();
  }

  /** The zone client's share answered and its counts, e.g. {@code 0.55 (220/400)}; "none" when it did not run. */
  static String zoneCell(PhaseRow.ZoneClientCounts z) {
    if (z == null) {
      return "none";
    }
    return z.answeredOfAsked() == null ? "0 asked" : String.format(Locale.ROOT, "%.2f (%d/%d)", z.answeredOfAsked(),
        z.answered(), z.asked());
  }

  /** The whole file. */
  public static String render(Context c, List<PhaseRow> rows) {
    Scenario s = c.scenario();
    AttackPlan p = s.attacks();
    List<String> members = members(rows);
    StringBuilder md = StudySummary.opening(s, c.startedAt(),
        c.quick() ? "each phase ran " + c.load().duration().toSeconds() + " s" : null);
    md.append("\n\n");
    if (p.paced()) {
      md.append("Honest clients ask at a fixed ").append(p.honestQps()).append(" queries/s in every UDP phase ")
          .append("(dnsperf -Q ").append(p.honestQps()).append("), as honest clients ask at the rate they need; ")
          .append("**offered** is that rate times the phase's ").append(c.load().duration().toSeconds())
          .append(" s, **answered of offered** what dnsperf completed over it. An attack that costs them nothing ")
          .append("leaves 1.0 of the offered answered and the rate at 1.0x the baseline. A lost query holds one of ")
          .append("dnsperf's ").append(p.honestOutstanding() == null ? c.load().outstanding() : p.honestOutstanding())
          .append(" outstanding slots (-q) until its 5 s timeout: once more than a fifth of that is lost a second, ")
          .append("dnsperf sends less than offered, and the share answered counts those as not answered. The TCP, ")
          .append("DoT and DoH phases (tcp_*, dot_*, doh_*) run as fast as answers come, as before.\n\n");
      if (p.zoneClientQps() > 0) {
        md.append("Beside them in the same phases, the **zone client**, a downstream resolver asking the attacked ")
            .append("zone now and then, asks ").append(p.zoneClientQps()).append(" new names a second under `")
            .append(s.recipe().zone()).append("` from 127.2.0.1 (a /24 of its own), each a cache miss that must go ")
            .append("upstream; **zone client answered of asked** is the share of them answered NOERROR or NXDOMAIN ")
            .append("(the rest got SERVFAIL, such as a miss budget's, another rcode, or no reply within 2 s).\n\n");
      }
    } else {
      md.append("Honest clients ask as fast as answers come (no recipe.dnsperf.honest_qps): on a host they ")
          .append("saturate, every CPU cycle an attack and its generator take is taken from them, so the ratios ")
          .append("measure CPU sharing more than which queries the server serves first.\n\n");
    }
    for (Map.Entry<String, String> skip : c.skipped().entrySet()) {
      md.append("Member ").append(skip.getKey()).append(": ").append(skip.getValue()).append("\n\n");
    }
    if (members.size() > 1) {
      md.append("## Side by side\n\nEach member ran every phase in turn against the same knotd; each ratio is to ")
          .append("that member's own baseline in this run.\n\n").append(sideBySide(rows)).append('\n');
    }
    String holders = holdersTable(rows);
    if (!holders.isEmpty()) {
      md.append("## Silent DoT and DoH holders\n\n")
          .append("In dot_holders and doh_holders, ").append(p.encryptedHolders()).append(" plain TCP connections ")
          .append("to the member's DoT (resp. DoH) port say nothing, not even a TLS ClientHello, each opened again ")
          .append("as soon as the server closes it, while the honest clients ask over DoT (dnsperf -m dot) or DoH ")
          .append("(-m doh, HTTP/2); each is compared with dot_baseline (doh_baseline): the same clients without ")
          .append("the holders. The aim: honest clients keep at least 0.9x of their rate, RSS and descriptors stay ")
          .append("bounded, and the server closes the holders within its deadlines (shoal: ")
          .append("listen.tls_handshake_timeout, 5 s by default). **median s to close** is the median time from a ")
          .append("holder's connect to the server's close of it, as the holder saw it (it looks every 200 ms); it ")
          .append("includes any time the connection waited in the listen queue before the server accepted it.\n\n")
          .append(holders).append('\n');
    }
    md.append("## At a glance\n\n");
    atAGlance(rows).forEach(l -> md.append("- ").append(l).append('\n'));
    md.append("\nAbsolute numbers hold for this host only. The attack generators run in the study process on the ")
        .append("same host, so part of what an attack costs honest clients is the CPU the generator takes; ")
        .append("quote the ratios to the baseline phase, measured in the same run.\n");

    md.append("\n## Phases\n\n| member | phase | attack | honest qps | vs baseline | offered | answered of offered ")
        .append("| mean ms | p99 ms | SERVFAIL | lost | RSS max MiB | fds max | dropped |\n")
        .append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (PhaseRow r : rows) {
      md.append("| ").append(r.member()).append(" | ").append(r.phase()).append(" | ")
          .append(r.attackDetail().replace("|", "/")).append(" | ")
          .append(String.format(Locale.ROOT, "%.0f", r.honestQps())).append(" | ")
          .append(r.qpsVsBaseline() == null ? "" : String.format(Locale.ROOT, "%.3f", r.qpsVsBaseline())).append(" | ")
          .append(r.honestOffered() == null ? "" : r.honestOffered()).append(" | ")
          .append(r.answeredOfOffered() == null ? "" : String.format(Locale.ROOT, "%.4f", r.answeredOfOffered()))
          .append(" | ").append(String.format(Locale.ROOT, "%.3f", r.avgLatencyMs())).append(" | ")
          .append(r.p99LatencyMs() == null ? "" : String.format(Locale.ROOT, "%.3f", r.p99LatencyMs())).append(" | ")
          .append(r.honestServfail()).append(" | ").append(r.honestLost()).append(" | ")
          .append(r.rssMaxMib() == null ? "" : String.format(Locale.ROOT, "%.1f", r.rssMaxMib())).append(" | ")
          .append(r.fdsMax() == null ? "" : r.fdsMax()).append(" | ").append(r.droppedWords()).append(" |\n");
    }
    md.append("\nHonest clients are dnsperf replaying the recipe's query file in every phase with the same flags "
        + "(over TCP in tcp_baseline and tcp_holders, DoT in dot_baseline and dot_holders, DoH in doh_baseline and "
        + "doh_holders, over UDP in the others");
    if (p.paced()) {
      md.append(", held to -Q ").append(p.honestQps()).append(" over UDP");
    }
    md.append("); `p99` comes from dnsperf's per-query lines (-v). RSS is the largest VmRSS of the member's server ")
        .append("process and fds the most entries of /proc/PID/fd, sampled every ")
        .append(ProcessFootprint.EVERY.toMillis()).append(" ms from the attack's start to dnsperf's end. ")
        .append("`dropped` is the phase's increase of the server's own count of what it turned away, read before ")
        .append("and after: for shoal, shoal_dropped_total by reason and the misses answered SERVFAIL past a miss ")
        .append("budget (shoal_miss_budget_exceeded_total, as miss_budget_client and miss_budget_zone); for ")
        .append("unbound, from unbound-control stats_noreset, total.requestlist.exceeded (requestlist_exceeded), ")
        .append("total.requestlist.overwritten (requestlist_overwritten), total.num.queries_ip_ratelimited ")
        .append("(ip_ratelimited) and num.query.ratelimited (ratelimited: queries over the zone ratelimit). ")
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
        .append("member's connection cap, each opened again as soon as the server closes it; honest clients ")
        .append("ask over TCP (dnsperf -m tcp), compared with tcp_baseline, the same clients over TCP without ")
        .append("an attack\n");
    if (p.encryptedHolders() > 0) {
      md.append("- dot_holders, doh_holders: ").append(p.encryptedHolders()).append(" plain TCP connections to the ")
          .append("DoT (resp. DoH) port, more than the member's connection cap, sending nothing, each opened again ")
          .append("as soon as the server closes it (at most once per second of the phase); honest clients ask over ")
          .append("DoT (dnsperf -m dot) or DoH (-m doh), compared with dot_baseline (doh_baseline); these four ")
          .append("phases last ").append(p.encryptedDuration().toSeconds()).append(" s (at most the recipe's ")
          .append("duration)\n");
    }
    md.append("- miss_flood: queries for unique names under the zone at ").append(p.missTimesBaseline());
    if (p.paced()) {
      md.append(" times the honest clients' ").append(p.honestQps()).append(" queries/s (")
          .append((long) Math.min(p.missMaxPerSecond(), Math.ceil(p.missTimesBaseline() * p.honestQps())))
          .append("/s");
    } else {
      md.append(" times the baseline's honest QPS (at most ").append(p.missMaxPerSecond()).append("/s");
    }
    md.append("), from one source address, sent without waiting for answers: every one misses the cache and ")
        .append("goes to knotd\n");
    md.append("- miss_flood_spread: the same flood from 256 source networks (127.1.N.1, each its own /24), so a ")
        .append("budget per client does not hold it; a budget per zone does\n");
    md.append("- hostile_upstream: ").append(p.hostilePerSecond()).append(" queries/s for new names under `")
        .append(p.hostileZone()).append("`, which the member forwards to a server in the study process (shoal: ")
        .append("a profile of its own; unbound: a forward-zone) that answers ")
        .append("in turn with random bytes, a record owned by a self-pointing compression pointer, an answer ")
        .append("with the wrong ID, and silence; honest clients ask names of the good zone\n");
    md.append("\nEvery attack runs from one second before dnsperf starts until dnsperf ends, bounded by its rate ")
        .append("and a time limit; all traffic goes to 127.0.0.1.\n");

    md.append("\n## Held constant\n\n");
    for (Map.Entry<String, String> setup : c.setups().entrySet()) {
      md.append("- member ").append(setup.getKey()).append(": ").append(setup.getValue()).append('\n');
    }
    Recipe r = s.recipe();
    md.append("- upstream: knotd, zone `").append(r.zone()).append("` with a wildcard A record, TTL ")
        .append(r.stubTtl().toSeconds()).append(" s\n");
    md.append("- honest queries: ").append(r.queries().lines()).append(" lines drawn from ")
        .append(r.queries().names()).append(" names, seed ").append(r.queries().seed()).append('\n');
    md.append("- load: dnsperf -c ").append(c.load().clients()).append(" -q ").append(c.load().outstanding())
        .append(" -T ").append(c.load().threads()).append(" -l ").append(c.load().duration().toSeconds())
        .append(p.paced() ? " -Q " + p.honestQps() + (p.honestOutstanding() == null ? "" : " -q "
            + p.honestOutstanding()) + " (UDP phases)" : "")
        .append(" -v per phase, after ").append(c.load().warmup().toSeconds()).append(" s of warm-up\n");
    md.append("- shoal JVM options: ").append(String.join(" ", r.jvmOptions())).append('\n');
    StudySummary.appendProvenance(md, c.host(), c.versions(), c.commands());
    md.append(StudySummary.rawFiles("each phase's directory under `members/MEMBER/phases/` holds dnsperf's "
        + "output, the server's counters read before and after (shoal's metrics, unbound's statistics), and what the "
        + "attack did"));
    return md.toString();
  }
}
