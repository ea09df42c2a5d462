package io.shoal.cli;

import io.shoal.study.host.NetworkIsolation;
import io.shoal.study.report.PerformanceHub;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.run.StudyRun;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.scenario.ScenarioException;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code shoal study}: run a performance study from the scenario catalog. */
@Command(
    name = "study",
    header = "Run a benchmark study: CSV, charts and a summary.",
    mixinStandardHelpOptions = true,
    // The text below is laid out in lines of up to 100 columns.
    usageHelpWidth = 100,
    description = {
      "Run a performance study: every member of a scenario (shoal with different caches, or peer",
      "resolvers) is measured with dnsperf under the same recipe, against a local Knot DNS (knotd)",
      "serving a wildcard zone. Each member gets a fresh data path and free loopback ports; it is",
      "started, checked with a real DNS query, warmed up, measured, and stopped. Hit rates are",
      "1 - (queries knotd received) / (queries completed), the same for every member.",
      "",
      "Writes to the run directory: results.csv (one row per member), achieved_qps.png, hit_rate.png,",
      "fill_mean.png, summary.md (the study's page: its question and when it matters, the takeaway,",
      "each member's ratios to the baseline member, the evidence, what was varied and held constant,",
      "host, versions and commands), and raw.tar.xz: per member its config, log, raw dnsperf output",
      "and the statistics read before and after, packed when the run ends (tar -xJf raw.tar.xz",
      "unpacks them). With recipe.rounds = N every member runs N times, members",
      "taking turns; results.csv keeps each member's median run, rounds.csv every run, and the summary",
      "compares each run with the baseline's run of the same round.",
      "",
      "A shoal or unbound member may be queried over tcp, dot or doh (transport = dot, as in the",
      "encrypted scenario): a DoT or DoH member listens on a second port and presents a test",
      "certificate the study makes with openssl.",
      "A shoal member may run as several nodes (nodes = 3), independent or as one Akka cluster",
      "(cluster = on): one dnsperf per node at once, results summed over the nodes, plus cluster.csv",
      "(upstream queries, remote lookups, the remote-lookup overhead measured by an idle probe) and",
      "its charts. A member with a kill block (cluster_kill) has one node killed with SIGKILL mid-run",
      "and writes kill_timeline.csv and kill_timeline.png (QPS, latency, lost, SERVFAIL per second).",
      "With recipe.cpu_quota (cluster_capacity) every shoal process runs under a CPU quota of its",
      "own (a cgroup v1 CFS quota as root, or systemd-run --scope -p CPUQuota= on cgroup v2), as a",
      "Kubernetes CPU limit bounds a pod; members with a group are compared within their group.",
      "With recipe.cpu_quota_from = measured the quota applies after the warm-up (the JVM is told",
      "the processors the quota gives it from its start), so the measured run sees compiled code.",
      "recipe.cpu_period sets the CFS period the quota is a share of (default 100ms, the kernel's).",
      "A scenario with an attacks block (robustness) runs each member (a shoal, and unbound beside it)",
      "through its phases in turn: no attack (over UDP, then TCP), then TCP connection holders,",
      "malformed UDP, drip/idle TCP, a miss flood from one source and from 256 networks, and a hostile",
      "upstream, each while dnsperf measures the honest clients (at recipe.dnsperf.honest_qps in the",
      "UDP phases when set, with a zone client asking new names of the zone beside them); it writes",
      "robustness.csv and robustness.png.",
      "A scenario with an outage block (upstream_outage) fills each shoal member's cache, then stops",
      "knotd (SIGSTOP) mid-run and resumes it (SIGCONT); it writes outage_timeline.csv, outage_phases.csv",
      "and outage_timeline.png (SERVFAIL, lost and stale answers per second and member).",
      "A scenario with a cache_memory block (cache_memory) starts each member afresh at each cache size,",
      "fills it with that many names and reads its resident set before and after (shoal: also after a",
      "full GC, with jcmd), then measures warm hits; it writes cache_memory.csv and cache_memory.png.",
      "",
      "Needs dnsperf and knotd (Debian: dnsperf, knot), and each peer in the scenario (unbound,",
      "knot-resolver, dnsmasq-base, pdns-recursor). Run as root, missing ones are installed with",
      "apt-get; otherwise the command prints what to install and exits 2. kresd and pdns-recursor",
      "send queries of their own, so they only run inside a network namespace with nothing but",
      "loopback: as root the study re-runs itself under 'unshare --net'; as another user those",
      "members are skipped and the summary says why. All traffic stays on 127.0.0.1.",
      "",
      "Ctrl-C stops every process the study started. Full scenarios take several minutes;",
      "--quick runs each member for a few seconds to check that everything works.",
      ""
    },
    footer = {
      "",
      "Paths: without --catalog and --out, the catalog is bench/scenarios and results go to",
      "bench/results/SCENARIO/TIMESTAMP (quick-TIMESTAMP with --quick), relative to $SHOAL_HOME if",
      "set (bench/study sets it to the repository), else to the current directory. A scenario with",
      "part_of = STUDY (a variant) writes to bench/results/STUDY/TIMESTAMP-SCENARIO instead.",
      "",
      "'study hub' rebuilds the table of docs/performance/README.md from the latest published run of",
      "each study that bench/hub.conf lists; every full run in the default place does so as well.",
      "",
      "Exit status: 0 every member measured, 1 a member or the upstream failed (the other results",
      "are still written), 2 bad usage, unknown scenario, invalid scenario, or missing programs.",
      "",
      "Examples:",
      "  shoal study --list",
      "  shoal study hub",
      "  shoal study cache_churn --quick --out /tmp/churn-smoke",
      "  shoal study cluster_churn",
      "  shoal study peers"
    })
public final class StudyCommand implements Callable<Integer> {
  /** {@code study hub}: rebuild docs/performance/README.md's table (see {@link PerformanceHub}). */
  static final String HUB = "hub";
  /** Which study, which members and which column each row of the hub's table reads. */
  static final String HUB_DEFINITION = "bench/hub.conf";
  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");

  @Parameters(index = "0", arity = "0..1", paramLabel = "SCENARIO",
      description = "A scenario name from the catalog (e.g. cache_churn), or a path to a scenario .conf file.")
  String scenarioName;

  @Option(names = "--quick",
      description = "Smoke run: each member for the recipe's quick duration (a few seconds), no warm-up. "
          + "The numbers only show that the study works.")
  boolean quick;

  @Option(names = "--out", paramLabel = "DIR",
      description = "Run directory to write into (created if missing). Default: bench/results/SCENARIO/TIMESTAMP.")
  Path out;

  @Option(names = "--catalog", paramLabel = "DIR",
      description = "Directory of scenario files (NAME.conf). Default: bench/scenarios.")
  Path catalog;

  @Option(names = "--shoal-jar", paramLabel = "FILE",
      description = "The shoal jar that shoal members run. Default: the jar this command runs from, "
          + "else target/shoal.jar.")
  Path shoalJar;

  @Option(names = "--member-jar", paramLabel = "MEMBER=FILE",
      description = "Shoal member MEMBER runs FILE instead of the --shoal-jar (repeatable): two builds as "
          + "members taking turns in one run, e.g. --member-jar before=/tmp/before.jar. Studies measured "
          + "with dnsperf, and cache_memory.")
  Map<String, Path> memberJars = new LinkedHashMap<>();

  @Option(names = "--list", description = "List the scenarios in the catalog with their descriptions, and exit.")
  boolean list;

  @Override
  public Integer call() {
    System.setProperty("java.awt.headless", "true");
    Path home = home();
    Path catalogDir = (catalog != null ? catalog : home.resolve("bench/scenarios")).toAbsolutePath();
    if (list) {
      return listCatalog(catalogDir);
    }
    if (HUB.equals(scenarioName) && !Files.isRegularFile(catalogDir.resolve(HUB + ".conf"))) {
      return rebuildHub(home, true);
    }
    if (scenarioName == null) {
      System.err.println("study: name a scenario; the catalog " + catalogDir + " has: "
          + String.join(", ", Scenario.names(catalogDir)) + " (see --list)");
      return 2;
    }
    Scenario scenario;
    try {
      scenario = Scenario.load(Scenario.locate(scenarioName, catalogDir));
      StudyRun.checkShoalMembers(scenario);
      memberJars.replaceAll((member, file) -> file.toAbsolutePath());
      StudyRun.checkMemberJars(scenario, memberJars);
    } catch (ScenarioException e) {
      System.err.println("study: " + e.getMessage());
      return 2;
    }
    Path jar = (shoalJar != null ? shoalJar : defaultJar(home)).toAbsolutePath();
    if (scenario.members().stream().anyMatch(m -> m.kind() == io.shoal.study.scenario.MemberKind.SHOAL)
        && !Files.isRegularFile(jar)) {
      System.err.println("study: no shoal jar at " + jar + "; build it with: mvn -B -DskipTests package");
      return 2;
    }

    boolean root = NetworkIsolation.root();
    boolean isolated = NetworkIsolation.isolated();
    boolean mustIsolate = scenario.needsIsolation() && !isolated;
    if (mustIsolate && System.getenv(NetworkIsolation.MARKER) != null) {
      System.err.println("study: the re-run under unshare --net still sees a network interface other than "
          + "loopback; refusing to start members that send their own queries");
      return 1;
    }
    Map<String, String> skipped = new LinkedHashMap<>();
    if (mustIsolate && !root) {
      for (Member m : scenario.members()) {
        if (m.kind().sendsOwnQueries()) {
          skipped.put(m.name(), "not run: " + m.kind().configName() + " sends queries of its own (root priming), "
              + "so it only runs where nothing can leave loopback; run the study as root and it re-runs itself "
              + "under unshare --net");
          System.err.println("study: skipping " + m.name() + " (needs root for a loopback-only network namespace)");
        }
      }
    }
    List<Member> toRun = scenario.members().stream().filter(m -> !skipped.containsKey(m.name())).toList();
    // A variant (part_of) publishes its runs under its study as named runs: STUDY/TIMESTAMP-VARIANT.
    String partOf = scenario.page() == null ? null : scenario.page().partOf();
    Path runDir = (out != null ? out : home.resolve("bench/results").resolve(partOf != null ? partOf : scenario.name())
        .resolve((quick ? "quick-" : "") + STAMP.format(ZonedDateTime.now(ZoneOffset.UTC))
            + (partOf != null ? "-" + scenario.name() : ""))).toAbsolutePath();

    try (StartedProcesses processes = new StartedProcesses()) {
      Prerequisites.Tools tools;
      try {
        tools = Prerequisites.ensure(Prerequisites.binariesFor(scenario, toRun, mustIsolate && root), root, System.out,
            processes, runDir.resolve("setup"));
      } catch (Prerequisites.MissingTools e) {
        System.err.println(e.advice());
        return 2;
      }
      StudyRun run = new StudyRun(scenario, runDir, quick, jar, memberJars, tools, root, skipped, System.out,
          processes);
      if (mustIsolate && root) {
        // the re-run is given --out, so the hub is this process's to rebuild
        int status = rerunIsolated(processes, tools, scenario, catalogDir, runDir, jar, run.estimatedTotal());
        if (!quick && out == null && status == 0) {
          rebuildHub(home, false);
        }
        return status;
      }
      System.out.println("study: " + toRun.size() + " members, about " + run.estimatedTotal().toSeconds()
          + " s in all");
      int status = run.run();
      if (!quick && out == null && status == 0) {
        // a published run: the hub's table reads the latest run of each study, so it moves with this one
        rebuildHub(home, false);
      }
      return status;
    } catch (IOException | StudyException e) {
      System.err.println("study: " + e.getMessage());
      return 1;
    }
  }

  private int rerunIsolated(StartedProcesses processes, Prerequisites.Tools tools, Scenario scenario,
      Path catalogDir, Path runDir, Path jar, Duration estimate) throws IOException, StudyException {
    System.out.println("study: " + scenario.name() + " has members that send queries of their own; re-running "
        + "inside a network namespace that has only loopback (unshare --net)");
    List<String> args = new ArrayList<>();
    Path asFile = Path.of(scenarioName);
    args.add(scenarioName.endsWith(".conf") && Files.isRegularFile(asFile)
        ? asFile.toAbsolutePath().toString() : scenarioName);
    if (quick) {
      args.add("--quick");
    }
    args.addAll(List.of("--catalog", catalogDir.toString(), "--out", runDir.toString(),
        "--shoal-jar", jar.toString()));
    memberJars.forEach((member, file) -> args.addAll(List.of("--member-jar", member + "=" + file)));
    Process child = processes.startAttached(NetworkIsolation.rerunCommand(tools, args),
        Map.of(NetworkIsolation.MARKER, "1"));
    // The re-run bounds each of its own steps; this outer bound only guards against a hang.
    Duration limit = estimate.multipliedBy(3).plus(Duration.ofMinutes(30));
    try {
      if (!child.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
        processes.stop(child);
        throw new StudyException("the isolated re-run did not finish within " + limit.toMinutes() + " minutes");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted", e);
    }
    return child.exitValue();
  }

  /**
   * Rebuilds the table of docs/performance/README.md from the latest published run of each study
   * bench/hub.conf lists. {@code asked}: run as {@code study hub} (a missing definition is an error
   * then; after a study's run it only means there is no hub to update).
   */
  private static int rebuildHub(Path home, boolean asked) {
    Path definition = home.resolve(HUB_DEFINITION);
    if (!Files.isRegularFile(definition)) {
      if (asked) {
        System.err.println("study: no hub definition at " + definition);
        return 2;
      }
      return 0;
    }
    try {
      Path page = PerformanceHub.page(home, definition);
      List<PerformanceHub.Row> rows = PerformanceHub.rows(definition);
      List<java.util.Optional<PerformanceHub.Figure>> figures = PerformanceHub.rebuild(rows,
          home.resolve("bench/results"), page);
      for (int i = 0; i < rows.size(); i++) {
        if (figures.get(i).isEmpty()) {
          System.err.println("study: hub row '" + rows.get(i).topic() + "': no published run of "
              + rows.get(i).study() + " has " + rows.get(i).member() + " and " + rows.get(i).versus());
        }
      }
      System.out.println("study: rebuilt the table of " + page + " from " + rows.size() + " rows of " + definition);
      return 0;
    } catch (ScenarioException e) {
      System.err.println("study: " + e.getMessage());
      return 2;
    } catch (IOException e) {
      System.err.println("study: cannot rebuild the hub: " + e.getMessage());
      return 1;
    }
  }

  private static int listCatalog(Path catalogDir) {
    List<String> names = Scenario.names(catalogDir);
    if (names.isEmpty()) {
      System.err.println("study: no scenarios in " + catalogDir);
      return 2;
    }
    for (String name : names) {
      try {
        Scenario s = Scenario.load(catalogDir.resolve(name + ".conf"));
        System.out.printf("%-28s %s%n", name, s.description());
      } catch (ScenarioException e) {
        System.out.printf("%-28s (invalid: %s)%n", name, e.getMessage());
      }
    }
    return 0;
  }

  private static Path home() {
    String h = System.getenv("SHOAL_HOME");
    return h == null || h.isBlank() ? Path.of("") : Path.of(h);
  }

  private static Path defaultJar(Path home) {
    try {
      Path self = Path.of(StudyCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isRegularFile(self) && self.toString().endsWith(".jar")) {
        return self;
      }
    } catch (URISyntaxException | SecurityException | NullPointerException e) {
      // running from classes: fall through to the build output
    }
    return home.resolve("target/shoal.jar");
  }
}
