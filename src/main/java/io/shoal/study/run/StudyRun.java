package io.shoal.study.run;

import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import io.shoal.study.scenario.PolicyList;
import io.shoal.study.scenario.QueryFile;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.scenario.ScenarioException;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.server.ShoalMemberConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One run of a scenario: the query files, then the scenario's kind of study ({@link PlainStudy},
 * {@link RobustnessStudy}, {@link OutageStudy} or {@link CacheMemoryStudy}) against one knotd, or
 * {@link RecursionStudy} against a tree of them,
 * which ends with the results' CSV files, the charts and summary.md in the run directory.
 */
public final class StudyRun {
  private final RunSettings run;
  private final Dnsperf dnsperf;
  private final RunEstimate estimate;
  /** The query file of each node index: node 0 (and every one-node member) replays queries.txt. */
  private final List<Path> queryFiles = new ArrayList<>();

  /**
   * @param memberJars shoal members that run a jar of their own instead of {@code shoalJar} (a
   *     plain study's members only: see {@link #checkMemberJars})
   * @param skipped members not to run, with the reason the summary gives
   */
  public StudyRun(Scenario scenario, Path runDir, boolean quick, Path shoalJar, Map<String, Path> memberJars,
      Prerequisites.Tools tools, boolean root, Map<String, String> skipped, PrintStream out,
      StartedProcesses processes) {
    // Members that take the generated domain list find it in the run directory, written by run().
    // Validating members of a signed recipe find the zone's trust anchor where knotd's start writes it.
    Scenario resolved = (scenario.usesPolicyList() ? scenario.withPolicyListAt(runDir.resolve(PolicyList.FILE))
        : scenario).withTrustAnchorAt(runDir.resolve("knotd").resolve(KnotUpstream.TRUST_ANCHOR));
    this.run = new RunSettings(resolved, runDir, quick, shoalJar, Map.copyOf(memberJars), tools, root, skipped, out,
        processes);
    this.dnsperf = new Dnsperf(tools, processes, resolved.recipe().signed());
    this.estimate = new RunEstimate(run);
  }

  /**
   * Checks every shoal member's configuration as shoal would, before anything starts.
   *
   * @throws ScenarioException naming the member and key at fault
   */
  public static void checkShoalMembers(Scenario scenario) {
    for (Member m : scenario.members()) {
      if (m.kind() == MemberKind.SHOAL) {
        ShoalMemberConfig.check(scenario.recipe(), m);
      }
    }
  }

  /**
   * Checks that each member given a jar of its own is a shoal member (of one node or several) of
   * a study that measures members with dnsperf or cache_memory (not recursion, robustness or outage studies, which
   * start their shoal processes their own way), and that the jar exists.
   *
   * @throws ScenarioException naming the member at fault
   */
  public static void checkMemberJars(Scenario scenario, Map<String, Path> memberJars) {
    if (memberJars.isEmpty()) {
      return;
    }
    if (scenario.recursion() != null || scenario.attacks() != null || scenario.outage() != null) {
      throw new ScenarioException("--member-jar: " + scenario.name() + " starts its shoal processes its own way; "
          + "a jar per member is for studies measured with dnsperf, and cache_memory");
    }
    for (Map.Entry<String, Path> e : memberJars.entrySet()) {
      Member m = scenario.members().stream().filter(x -> x.name().equals(e.getKey())).findFirst()
          .orElseThrow(() -> new ScenarioException("--member-jar: no member " + e.getKey() + " in " + scenario.name()
              + " (members: " + String.join(", ", scenario.members().stream().map(Member::name).toList()) + ")"));
      if (m.kind() != MemberKind.SHOAL) {
        throw new ScenarioException("--member-jar: " + m.name() + " is a " + m.kind().configName()
            + " member; only shoal members run a jar");
      }
      if (!Files.isRegularFile(e.getValue())) {
        throw new ScenarioException("--member-jar: no file " + e.getValue() + " for member " + m.name());
      }
    }
    // an A/A member runs the baseline's jar, or it compares two builds
    for (String repeat : scenario.page().repeats()) {
      if (!java.util.Objects.equals(memberJars.get(repeat), memberJars.get(scenario.baseline()))) {
        throw new ScenarioException("--member-jar: " + repeat + " repeats the baseline " + scenario.baseline()
            + " (repeats_baseline), so it runs the baseline's jar; give both the same jar or neither");
      }
    }
  }

  /** The load this run applies: the recipe's, or its quick variant. */
  public LoadSettings load() {
    return run.load();
  }

  /**
   * Runs everything, then packs the raw directories into {@link RawArchive#FILE}; returns 0 if
   * every member produced a row, 1 otherwise.
   */
  public int run() throws IOException, StudyException {
    int status = study();
    List<String> packed = RawArchive.pack(run.runDir(), Path.of(run.tools().path("tar")), run.processes());
    if (!packed.isEmpty()) {
      run.out().println("study: packed " + String.join("/, ", packed) + "/ into " + run.runDir().resolve(RawArchive.FILE)
          + " (tar -xJf " + RawArchive.FILE + " unpacks them)");
    }
    return status;
  }

  private int study() throws IOException, StudyException {
    Scenario scenario = run.scenario();
    Path runDir = run.runDir();
    PrintStream out = run.out();
    String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    if (scenario.recipe().cpuQuota() != null) {
      // before anything starts: a quota-bound study without quotas would measure something else
      out.println("study: each shoal process runs under a CPU quota of " + scenario.recipe().cpuQuota() + " CPU per "
          + io.shoal.study.host.CpuQuota.periodText(scenario.recipe().cpuPeriod()) + " period ("
          + io.shoal.study.host.CpuQuota.check().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-') + ")"
          + (scenario.recipe().cpuQuotaAfterWarmup() ? ", from the end of its warm-up on" : ""));
    }
    Files.createDirectories(runDir);
    if (scenario.source() != null) {
      Files.copy(scenario.source(), runDir.resolve("scenario.conf"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    QueryFile recipeQueries = scenario.recipe().queries();
    out.println("study: " + scenario.name() + " -> " + runDir);
    if (scenario.recursion() != null) {
      // its names, tree and trust anchor are the study's own; every query sets DO
      return new RecursionStudy(run, new Dnsperf(run.tools(), run.processes(), true)).run(startedAt);
    }
    if (scenario.cacheMemory() != null) {
      // its query files are per size, written by the study itself
      return new CacheMemoryStudy(run, dnsperf).run(startedAt);
    }
    out.println("study: writing " + recipeQueries.lines() + " queries over " + recipeQueries.names()
        + " names (seed " + recipeQueries.seed() + ")");
    queryFiles.add(runDir.resolve("queries.txt"));
    recipeQueries.write(queryFiles.get(0));
    for (int i = 1; i < scenario.maxNodes(); i++) {
      // Clients of different nodes ask different names in a different order, as real clients
      // would: the same file on every node would line their misses up in time.
      QueryFile perNode = new QueryFile(recipeQueries.zone(), recipeQueries.names(), recipeQueries.lines(),
          recipeQueries.seed() + i);
      out.println("study: writing the query file of node " + i + " (seed " + perNode.seed() + ")");
      queryFiles.add(runDir.resolve("queries-node" + i + ".txt"));
      perNode.write(queryFiles.get(i));
    }
    List<String> listed = List.of();
    if (scenario.usesPolicyList()) {
      PolicyList list = scenario.recipe().policyList();
      int count = list.count(run.quick());
      out.println("study: writing a domain list of " + count + " names (seed " + list.seed() + ")");
      listed = PolicyList.write(runDir.resolve(PolicyList.FILE), count, list.seed());
    }
    if (scenario.attacks() != null) {
      return new RobustnessStudy(run, dnsperf, queryFiles.get(0)).run(startedAt);
    }
    if (scenario.outage() != null) {
      return new OutageStudy(run, dnsperf, queryFiles.get(0)).run(startedAt);
    }
    return new PlainStudy(run, estimate, new MemberMeasurement(run, dnsperf, queryFiles, listed)).run(startedAt);
  }

  /** Estimated wall time for the whole run, shown before it starts. */
  public Duration estimatedTotal() {
    return estimate.total();
  }

  /** A member's failure for the summary: one line, at most 600 characters. */
  static String abbreviated(String s) {
    String t = s.strip().replaceAll("\\s*\n\\s*", " | ");
    return t.length() <= 600 ? t : t.substring(0, 600) + " ...";
  }
}
