package io.shoal.study.run;

import io.shoal.study.host.HostFacts;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.host.ToolVersions;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.report.OutageChart;
import io.shoal.study.report.OutageSummary;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.timeline.OutageTimeline;
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
 * An outage scenario: each member in turn through {@link OutageRun} against one knotd, then
 * outage_timeline.csv, outage_phases.csv, their chart and summary.md.
 */
final class OutageStudy {
  private final RunSettings run;
  private final Dnsperf dnsperf;
  private final Path queries;

  /**
   * @param queries the recipe's query file, replayed by each member's warm-up and measured run
   */
  OutageStudy(RunSettings run, Dnsperf dnsperf, Path queries) {
    this.run = run;
    this.dnsperf = dnsperf;
    this.queries = queries;
  }

  /** Runs every member; returns 0 if every member ran, 1 otherwise. */
  int run(String startedAt) throws IOException, StudyException {
    Scenario scenario = run.scenario();
    Path runDir = run.runDir();
    PrintStream out = run.out();
    StartedProcesses processes = run.processes();
    Path names = runDir.resolve("names.txt");
    scenario.recipe().queries().writeEachNameOnce(names);
    OutageRun outage = new OutageRun(scenario, run.quick(), run.load(), queries, names, dnsperf, processes,
        run.tools(), run.shoalJar(), out);
    List<Member> members = run.members();
    Map<String, String> setups = new LinkedHashMap<>();
    Map<String, String> notRun = new LinkedHashMap<>(run.skipped());
    List<OutageTimeline.Second> seconds = new ArrayList<>();
    out.println("study: starting knotd");
    try (KnotUpstream knot = KnotUpstream.start(runDir.resolve("knotd"), scenario.recipe(), run.root(), run.tools(),
        processes)) {
      for (int i = 0; i < members.size(); i++) {
        Member m = members.get(i);
        out.println("study: member " + (i + 1) + " of " + members.size() + ": " + m.name() + " — about "
            + OutageRun.estimate(scenario, run.load()).multipliedBy(members.size() - i).toSeconds() + " s left");
        Path dir = runDir.resolve("members").resolve(m.name());
        StringBuilder setup = new StringBuilder();
        try {
          seconds.addAll(outage.measure(m, dir, knot, setup));
          setups.put(m.name(), setup.toString());
        } catch (StudyException | IOException | RuntimeException e) {
          String why = e.getMessage() == null ? e.toString() : e.getMessage();
          out.println("study: member " + m.name() + " failed: " + why);
          notRun.put(m.name(), "failed: " + StudyRun.abbreviated(why) + " (see " + runDir.relativize(dir) + "/)");
        }
      }
    }
    Path timelineCsv = StudyCsv.OUTAGE_TIMELINE.write(runDir, seconds);
    List<OutageTimeline.Second> written = StudyCsv.OUTAGE_TIMELINE.read(timelineCsv);
    Path phasesCsv = StudyCsv.OUTAGE_PHASES.write(runDir, OutageTimeline.phases(written));
    List<OutageTimeline.Phase> phases = StudyCsv.OUTAGE_PHASES.read(phasesCsv);
    OutageChart.write(runDir.resolve(OutageTimeline.PNG), written, run.subtitle(startedAt));
    OutageSummary.Context context = new OutageSummary.Context(scenario, startedAt, run.quick(), run.load(), setups,
        notRun, HostFacts.probe(run.dataPath()),
        ToolVersions.probe(run.tools(), run.shoalJar(), processes, runDir.resolve("versions")), processes.commands());
    Files.writeString(runDir.resolve("summary.md"), OutageSummary.render(context, phases, written), StandardCharsets.UTF_8);
    out.println("study: wrote " + timelineCsv + ", " + StudyCsv.OUTAGE_PHASES.file() + ", " + OutageTimeline.PNG
        + " and summary.md");
    for (String line : OutageSummary.atAGlance(scenario, phases, written)) {
      out.println("  " + line);
    }
    return notRun.isEmpty() ? 0 : 1;
  }
}
