package io.shoal.study.run;

import io.shoal.study.attack.AttackPhases;
import io.shoal.study.attack.PhaseRow;
import io.shoal.study.host.HostFacts;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.host.ToolVersions;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.report.RobustnessSummary;
import io.shoal.study.report.StudyCharts;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.KnotUpstream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A robustness scenario: each member (shoal, and unbound beside it) through every attack phase in
 * turn against one knotd, then robustness.csv, its chart and summary.md.
 */
final class RobustnessStudy {
  private final RunSettings run;
  private final Dnsperf dnsperf;
  private final Path queries;

  /**
   * @param queries the recipe's query file, which the honest clients replay in every phase
   */
  RobustnessStudy(RunSettings run, Dnsperf dnsperf, Path queries) {
    this.run = run;
    this.dnsperf = dnsperf;
    this.queries = queries;
  }

  /**
   * Runs every phase for each member in turn, against the same knotd; returns 0. A phase that
   * fails ends the run with the exception.
   */
  int run(String startedAt) throws IOException, StudyException {
    Scenario scenario = run.scenario();
    Path runDir = run.runDir();
    PrintStream out = run.out();
    StartedProcesses processes = run.processes();
    List<PhaseRow> rows = new ArrayList<>();
    Map<String, String> setups = new LinkedHashMap<>();
    out.println("study: starting knotd");
    try (KnotUpstream knot = KnotUpstream.start(runDir.resolve("knotd"), scenario.recipe(), run.root(), run.tools(),
        processes)) {
      for (Member m : run.members()) {
        out.println("study: member " + m.name() + " (" + m.kind().configName() + ")");
        AttackPhases phases = new AttackPhases(scenario, run.load(), queries,
            runDir.resolve("members").resolve(m.name()), dnsperf, out);
        rows.addAll(phases.run(m, knot, processes, run.tools(), run.shoalJar()));
        setups.put(m.name(), phases.setupNote());
      }
    }
    Path csv = StudyCsv.ROBUSTNESS.write(runDir, rows);
    List<PhaseRow> written = StudyCsv.ROBUSTNESS.read(csv);
    StudyCharts.writeRobustness(runDir.resolve(RobustnessSummary.PNG), written, run.subtitle(startedAt));
    RobustnessSummary.Context context = new RobustnessSummary.Context(scenario, startedAt, run.quick(), run.load(),
        setups, run.skipped(), HostFacts.probe(run.dataPath()),
        ToolVersions.probe(run.tools(), run.shoalJar(), processes, runDir.resolve("versions")), processes.commands());
    Files.writeString(runDir.resolve("summary.md"), RobustnessSummary.render(context, written), StandardCharsets.UTF_8);
    out.println("study: wrote " + csv + ", " + RobustnessSummary.PNG + " and summary.md");
    for (String line : RobustnessSummary.atAGlance(written)) {
      out.println("  " + line);
    }
    return 0;
  }
}
