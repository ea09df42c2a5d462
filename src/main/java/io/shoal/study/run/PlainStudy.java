package io.shoal.study.run;

import io.shoal.study.host.HostFacts;
import io.shoal.study.host.StudyException;
import io.shoal.study.host.ToolVersions;
import io.shoal.study.report.ClusterRow;
import io.shoal.study.report.ResultRow;
import io.shoal.study.report.RoundRow;
import io.shoal.study.report.StudyCharts;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.report.StudySummary;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.timeline.KillTimeline;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A plain scenario: every member in turn against one knotd, round after round, then results.csv
 * (each member's median round), rounds.csv, cluster.csv and kill_timeline.csv where they apply,
 * the charts and summary.md.
 */
final class PlainStudy {
  private final RunSettings run;
  private final RunEstimate estimate;
  private final MemberMeasurement measurement;

  PlainStudy(RunSettings run, RunEstimate estimate, MemberMeasurement measurement) {
    this.run = run;
    this.estimate = estimate;
    this.measurement = measurement;
  }

  /** Runs every member; returns 0 if every member produced a row, 1 otherwise. */
  int run(String startedAt) throws IOException, StudyException {
    Scenario scenario = run.scenario();
    Path runDir = run.runDir();
    PrintStream out = run.out();
    Map<String, String> setups = new LinkedHashMap<>();
    Map<String, String> notRun = new LinkedHashMap<>(run.skipped());
    List<Member> members = run.members();
    int rounds = run.rounds();
    // Members take turns, round after round, so a slow drift of the host (another tenant, a
    // warming disk) touches every member alike instead of whichever ran last.
    Map<String, List<Measured>> measuredRounds = new LinkedHashMap<>();
    List<RoundRow> roundRows = new ArrayList<>();

    out.println("study: starting knotd");
    try (KnotUpstream knot = KnotUpstream.start(runDir.resolve("knotd"), scenario.recipe(), run.root(), run.tools(),
        run.processes())) {
      if (scenario.recipe().sideBySide()) {
        measureSideBySide(knot, setups, notRun, measuredRounds, roundRows);
        return writeResults(startedAt, measuredRounds, roundRows, setups, notRun);
      }
      int runs = rounds * members.size();
      int done = 0;
      for (int round = 1; round <= rounds; round++) {
        for (int i = 0; i < members.size(); i++, done++) {
          Member m = members.get(i);
          if (notRun.containsKey(m.name())) {
            continue;
          }
          long left = members.subList(i, members.size()).stream().map(estimate::of)
              .reduce(Duration.ZERO, Duration::plus)
              .plus(estimate.round().multipliedBy(rounds - round)).toSeconds();
          out.println("study: " + (rounds > 1 ? "round " + round + " of " + rounds + ", " : "")
              + "member " + (i + 1) + " of " + members.size() + ": " + m.name() + " — about " + left + " s left"
              + (rounds > 1 ? " (" + done + " of " + runs + " runs done)" : ""));
          Path dir = runDir.resolve("members").resolve(m.name());
          if (rounds > 1) {
            dir = dir.resolve("round-" + round);
          }
          try {
            LoadSettings load = run.load();
            String paced = null;
            if (m.pace() != null) {
              double referenceQps = referenceQps(m, round, measuredRounds, notRun);
              load = load.paced(m.pace().maxQpsPerNode(referenceQps, m.nodes()));
              paced = String.format(Locale.ROOT, "paced: dnsperf -Q %d on each of its %d %s, %s x the %.1f qps %s "
                  + "achieved%s", load.maxQps(), m.nodes(), m.nodes() == 1 ? "node" : "nodes", m.pace().share(),
                  referenceQps, m.pace().of(), rounds > 1 ? " in round " + round : "");
              out.println("study: " + m.name() + ": " + paced);
            }
            Measured measured = measurement.measure(m, dir, knot, setups, load);
            if (paced != null) {
              setups.merge(m.name(), "; " + paced, String::concat);
            }
            measuredRounds.computeIfAbsent(m.name(), k -> new ArrayList<>()).add(measured);
            roundRows.add(new RoundRow(round, measured.row()));
          } catch (StudyException | IOException | RuntimeException e) {
            failed(m, "failed" + (rounds > 1 ? " in round " + round : ""), e, dir, notRun, measuredRounds);
          }
        }
      }
    }
    return writeResults(startedAt, measuredRounds, roundRows, setups, notRun);
  }

  /**
   * recipe.turns = slices: starts and warms up every member, then measures each for the load's
   * window in turn, round after round, all of them running meanwhile. Turns seconds apart see the
   * host in the same state (on a shared host its speed wanders over tens of seconds), where runs a
   * minute apart each draw their own. Each round's order is drawn anew ({@link #turnOrder}).
   */
  private void measureSideBySide(KnotUpstream knot, Map<String, String> setups, Map<String, String> notRun,
      Map<String, List<Measured>> measuredRounds, List<RoundRow> roundRows) {
    PrintStream out = run.out();
    Path membersDir = run.runDir().resolve("members");
    List<MemberMeasurement.WarmServer> started = new ArrayList<>();
    try {
      List<Member> members = run.members();
      for (int i = 0; i < members.size(); i++) {
        Member m = members.get(i);
        if (notRun.containsKey(m.name())) {
          continue;
        }
        out.println("study: starting and warming up member " + (i + 1) + " of " + members.size() + ": " + m.name()
            + " — about " + estimate.total().minus(estimate.startedSideBySide(i)).toSeconds() + " s left");
        try {
          started.add(measurement.startWarm(m, membersDir.resolve(m.name()), knot, setups, run.load()));
        } catch (StudyException | IOException | RuntimeException e) {
          failed(m, "failed at its start", e, membersDir.resolve(m.name()), notRun, measuredRounds);
        }
      }
      // results.csv and the page list the members in the scenario's order, not the first round's
      started.forEach(w -> measuredRounds.put(w.member().name(), new ArrayList<>()));
      int rounds = run.rounds();
      int turns = rounds * started.size();
      for (int round = 1, done = 0; round <= rounds; round++) {
        for (MemberMeasurement.WarmServer w : turnOrder(started, round)) {
          Member m = w.member();
          if (notRun.containsKey(m.name())) {
            continue;
          }
          out.println("study: round " + round + " of " + rounds + ": " + m.name() + " (" + done + " of " + turns
              + " turns done, about " + estimate.slice().multipliedBy(turns - done).toSeconds() + " s left)");
          done++;
          Path dir = membersDir.resolve(m.name()).resolve("round-" + round);
          try {
            Measured measured = measurement.measureWarm(w, dir, knot, run.load());
            // listed before the rounds; a member that failed is in notRun, never here
            measuredRounds.get(m.name()).add(measured);
            roundRows.add(new RoundRow(round, measured.row()));
          } catch (StudyException | IOException | RuntimeException e) {
            failed(m, "failed in round " + round, e, dir, notRun, measuredRounds);
            w.close();
          }
        }
      }
      for (MemberMeasurement.WarmServer w : started) {
        if (!notRun.containsKey(w.member().name())) {
          try {
            measurement.stop(w);
          } catch (StudyException | RuntimeException e) {
            failed(w.member(), "failed at its end", e, membersDir.resolve(w.member().name()), notRun, measuredRounds);
          }
        }
      }
    } finally {
      started.forEach(MemberMeasurement.WarmServer::close);
    }
  }

  /**
   * The order of round {@code round}'s turns: {@code members} shuffled, from a seed fixed for each
   * round, so a run of the same members repeats it. Not a fixed rotation: a member turn-adjacent to the
   * baseline in every round pairs more closely in time with it than the others do (an A/A member
   * just before the baseline read 0.99x-1.01x for the middle half of its rounds where members
   * further away read 0.92x-1.07x), and a fixed order would also give each member the same
   * predecessor (whose disk writes and caches it inherits) in every round.
   */
  static <T> List<T> turnOrder(List<T> members, int round) {
    List<T> order = new ArrayList<>(members);
    java.util.Collections.shuffle(order, new java.util.Random(0x5EED_0000L + round));
    return order;
  }

  /** Reports member {@code m} as failed ({@code when}, {@code e}) and drops its runs. */
  private void failed(Member m, String when, Exception e, Path dir, Map<String, String> notRun,
      Map<String, List<Measured>> measuredRounds) {
    String why = e.getMessage() == null ? e.toString() : e.getMessage();
    run.out().println("study: member " + m.name() + " failed: " + why);
    notRun.put(m.name(), when + ": " + StudyRun.abbreviated(why) + " (see " + run.runDir().relativize(dir) + "/)");
    measuredRounds.remove(m.name());
  }

  /**
   * The QPS that paced member {@code m}'s reference achieved in round {@code round}. Fails when the
   * reference has no run in that round (it failed or was skipped): a pace needs a measured capacity.
   */
  private static double referenceQps(Member m, int round, Map<String, List<Measured>> measuredRounds,
      Map<String, String> notRun) throws StudyException {
    String of = m.pace().of();
    List<Measured> runs = measuredRounds.get(of);
    // a member that failed is dropped from measuredRounds and not run again, so its runs are rounds 1, 2, ...
    if (runs == null || runs.size() < round) {
      throw new StudyException("pace.of: " + of + " was not measured" + (round > 1 ? " in round " + round : "")
          + (notRun.containsKey(of) ? " (" + notRun.get(of) + ")" : "") + ", so there is no QPS to pace " + m.name()
          + " by");
    }
    double qps = runs.get(round - 1).row().achievedQps();
    if (qps <= 0) {
      throw new StudyException("pace.of: " + of + " answered nothing, so there is no QPS to pace " + m.name() + " by");
    }
    return qps;
  }

  /**
   * results.csv from each member's median round, rounds.csv, cluster.csv and kill_timeline.csv
   * where they apply, the charts, summary.md, and the summary's at-a-glance lines on the console.
   */
  private int writeResults(String startedAt, Map<String, List<Measured>> measuredRounds, List<RoundRow> roundRows,
      Map<String, String> setups, Map<String, String> notRun) throws IOException {
    Scenario scenario = run.scenario();
    Path runDir = run.runDir();
    PrintStream out = run.out();
    int rounds = run.rounds();
    List<KillTimeline.Second> killSeconds = measurement.killSeconds();
    KillTimeline.Event killEvent = measurement.killEvent();
    List<ResultRow> rows = new ArrayList<>();
    List<ClusterRow> clusterRows = new ArrayList<>();
    for (List<Measured> runsOfMember : measuredRounds.values()) {
      Measured median = median(runsOfMember);
      rows.add(median.row());
      clusterRows.add(median.cluster());
    }
    List<RoundRow> roundsWritten = List.of();
    if (rounds > 1) {
      Path roundsCsv = StudyCsv.ROUNDS.write(runDir,
          roundRows.stream().filter(r -> measuredRounds.containsKey(r.row().member())).toList());
      roundsWritten = StudyCsv.ROUNDS.read(roundsCsv);
    }

    String subtitle = run.subtitle(startedAt);
    Path csv = StudyCsv.RESULTS.write(runDir, rows);
    List<ResultRow> written = StudyCsv.RESULTS.read(csv);
    StudyCharts.write(runDir, written, subtitle);
    List<String> files = new ArrayList<>(StudyCharts.FILES);
    if (rounds > 1) {
      files.add(StudyCsv.ROUNDS.file());
    }
    // Every cluster number in the summary comes from the files as written, like results.csv's.
    List<ClusterRow> clusterWritten = List.of();
    if (scenario.hasNodeGroups()) {
      Path clusterCsv = StudyCsv.CLUSTER.write(runDir, clusterRows);
      clusterWritten = StudyCsv.CLUSTER.read(clusterCsv);
      StudyCharts.writeCluster(runDir, clusterWritten, subtitle);
      files.add(StudyCsv.CLUSTER.file());
      files.addAll(StudyCharts.CLUSTER_FILES);
    }
    List<KillTimeline.Second> killWritten = null;
    if (killSeconds != null) {
      Path killCsv = StudyCsv.KILL_TIMELINE.write(runDir, killSeconds);
      killWritten = StudyCsv.KILL_TIMELINE.read(killCsv);
      StudyCharts.writeKillTimeline(runDir.resolve(KillTimeline.PNG), killWritten, killEvent, subtitle);
      files.add(StudyCsv.KILL_TIMELINE.file());
      files.add(KillTimeline.PNG);
    }
    StudySummary.Context context = new StudySummary.Context(
        scenario, startedAt, run.quick(), run.load(), HostFacts.probe(run.dataPath()),
        ToolVersions.probe(run.tools(), run.shoalJar(), run.processes(), runDir.resolve("versions")), setups, notRun,
        run.processes().commands(), clusterWritten, measurement.probes(), killEvent, killWritten, roundsWritten);
    Files.writeString(runDir.resolve("summary.md"), StudySummary.render(context, written), StandardCharsets.UTF_8);
    out.println("study: wrote " + csv + ", " + String.join(", ", files) + " and summary.md");
    for (String line : StudySummary.atAGlance(written, scenario.baseline(), scenario.paces())) {
      out.println("  " + line);
    }
    for (String line : StudySummary.roundsAtAGlance(roundsWritten, scenario.baseline())) {
      out.println("  " + line);
    }
    for (String line : StudySummary.clusterAtAGlance(clusterWritten)) {
      out.println("  " + line);
    }
    if (killWritten != null) {
      for (String line : StudySummary.killAtAGlance(killEvent, killWritten)) {
        out.println("  " + line);
      }
    }
    return notRun.isEmpty() ? 0 : 1;
  }

  /**
   * The run of a member whose QPS is the median of its rounds (the lower one of the middle two
   * for an even count). Its whole row is kept, so every number in results.csv is from one run.
   */
  private static Measured median(List<Measured> runs) {
    List<Measured> sorted = new ArrayList<>(runs);
    sorted.sort(java.util.Comparator.comparingDouble(r -> r.row().achievedQps()));
    return sorted.get((sorted.size() - 1) / 2);
  }
}
