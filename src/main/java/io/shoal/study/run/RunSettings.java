package io.shoal.study.run;

import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What one run of a scenario works with: the scenario, where its files go, whether it is a quick
 * smoke run, the shoal jar and the tools, which members it skips, where progress goes, and the
 * processes it starts.
 *
 * @param memberJars shoal members that run a jar of their own instead of {@code shoalJar}: builds
 *     compared as members taking turns
 * @param skipped members not to run, with the reason the summary gives
 */
record RunSettings(Scenario scenario, Path runDir, boolean quick, Path shoalJar, Map<String, Path> memberJars,
    Prerequisites.Tools tools, boolean root, Map<String, String> skipped, PrintStream out, StartedProcesses processes) {

  /** The jar shoal member {@code m} runs: its own ({@code --member-jar}), else the run's. */
  Path jarOf(Member m) {
    return memberJars.getOrDefault(m.name(), shoalJar);
  }

  /** For a setup note: the jar of a member that runs one of its own, else nothing. */
  String ownJarNote(Member m) {
    return memberJars.containsKey(m.name()) ? "; its own jar " + jarOf(m) : "";
  }

  /** The load this run applies: the recipe's, or its quick variant. */
  LoadSettings load() {
    return quick ? scenario.recipe().quick() : scenario.recipe().load();
  }

  /** How many rounds this run measures: the recipe's, or one for a quick run. */
  int rounds() {
    return quick ? 1 : scenario.recipe().rounds();
  }

  /** The members this run measures, in the scenario's order: all but the skipped ones. */
  List<Member> members() {
    return scenario.members().stream().filter(m -> !skipped.containsKey(m.name())).toList();
  }

  /** Where members keep their data; its device is the one the summary describes. */
  Path dataPath() {
    return runDir.resolve("members");
  }

  /** The charts' subtitle: the scenario, whether it was a quick run, and when it started. */
  String subtitle(String startedAt) {
    return scenario.name() + (quick ? " (quick smoke run)" : "") + ", " + startedAt;
  }
}
