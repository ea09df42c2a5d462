package io.shoal.study.run;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.cli.ShoalCommand;
import io.shoal.study.attack.PhaseRow;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.report.RecursionRow;
import io.shoal.study.report.ResultRow;
import io.shoal.study.report.RobustnessSummary;
import io.shoal.study.report.RoundRow;
import io.shoal.study.report.StudyCharts;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.scenario.AttackPlan;
import io.shoal.study.timeline.OutageTimeline;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.Assume;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;

/**
 * The study command end to end: a tiny scenario (two shoal memory members) run with --quick
 * against a real knotd and dnsperf, checked through the files it writes.
 */
public class StudySpec extends JUnitSuite {

  private static void assumeTools() {
    for (String tool : List.of("dnsperf", "knotd", "knotc")) {
      if (Prerequisites.find(tool).isEmpty()) {
        String msg = "StudySpec CANCELED: " + tool + " is not installed, so the study cannot run. "
            + "Install it with: apt-get install -y dnsperf knot knot-dnsutils (.ci/run does this)";
        System.err.println("\n*** " + msg + " ***\n");
        Assume.assumeTrue(msg, false);
      }
    }
  }

  /**
   * Runs a scenario of the test catalog with --quick and checks it exited 0; returns its run
   * directory. {@code more} are further arguments of the study command.
   */
  private static Path quickRun(String name, String... more) throws IOException, URISyntaxException {
    List<String> args = new java.util.ArrayList<>(List.of("--quick"));
    args.addAll(List.of(more));
    return run(name, args);
  }

  /** Runs a scenario of the test catalog with {@code more} arguments; as {@link #quickRun}. */
  private static Path run(String name, List<String> more) throws IOException, URISyntaxException {
    assumeTools();
    Path jar = Path.of("target", "shoal.jar");
    Assume.assumeTrue("target/shoal.jar is built by mvn package; run with mvn verify", Files.isRegularFile(jar));
    Path scenario = Path.of(StudySpec.class.getResource("/study/catalog/" + name + ".conf").toURI());
    Path out = Files.createTempDirectory("study-spec-" + name);
    List<String> args = new java.util.ArrayList<>(List.of("study", name,
        "--catalog", scenario.getParent().toString(), "--out", out.toString(), "--shoal-jar", jar.toString()));
    args.addAll(more);
    int status = ShoalCommand.commandLine().execute(args.toArray(String[]::new));
    assertEquals("study exit status (see the output above)", 0, status);
    return out;
  }

  @Test
  public void aQuickRunOfATinyScenarioWritesTheCsvChartsAndSummary() throws IOException, URISyntaxException {
    assumeTools();
    // One member runs a jar of its own (a copy of the same build here): two builds taking turns.
    Path own = Files.createTempDirectory("study-spec-jar").resolve("other.jar");
    Files.copy(Path.of("target", "shoal.jar"), own);
    Path out = quickRun("tiny", "--member-jar", "two-workers=" + own);
    Path raw = unpacked(out);

    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    assertEquals(String.join(",", ResultRow.COLUMNS), csv.get(0));
    List<ResultRow> all = StudyCsv.RESULTS.read(out.resolve("results.csv"));
    assertEquals(List.of("two-workers", "four-workers", "ceiling"), all.stream().map(ResultRow::member).toList());
    List<ResultRow> rows = all.subList(0, 2);
    for (ResultRow r : rows) {
      assertTrue(r.member() + " completed " + r.completed(), r.completed() > 0);
      assertTrue(r.member() + " qps " + r.achievedQps(), r.achievedQps() > 0);
      assertTrue(r.member() + " hit rate " + r.hitRatePct(), r.hitRatePct() >= 0 && r.hitRatePct() <= 100);
      assertTrue(r.member() + " hits " + r.cacheHits(), r.cacheHits() != null && r.cacheHits() >= 0);
      assertTrue(r.member() + " fill samples " + r.fillSamples(), r.fillSamples() != null && r.fillSamples() > 0);
      assertTrue(r.member() + " CPU per query " + r.cpuMicrosPerQuery(),
          r.cpuMicrosPerQuery() != null && r.cpuMicrosPerQuery() > 0);
      assertEquals("-", r.cells().get(1));
      assertEquals("write-behind", r.runtime());
    }
    assertEquals(2, rows.get(0).workers());
    assertEquals(4, rows.get(1).workers());
    // knotd answering from its zone: real answers and CPU, but no cache and no upstream to judge a hit rate by
    ResultRow knotd = all.get(2);
    assertTrue("knotd completed " + knotd.completed(), knotd.completed() > 0);
    assertTrue("knotd CPU per query " + knotd.cpuMicrosPerQuery(),
        knotd.cpuMicrosPerQuery() != null && knotd.cpuMicrosPerQuery() > 0);
    assertEquals(null, knotd.hitRatePct());
    assertEquals(null, knotd.cacheHits());
    assertEquals(1, knotd.workers());

    for (String png : StudyCharts.FILES) {
      Path p = out.resolve(png);
      assertTrue(png + " exists", Files.isRegularFile(p));
      byte[] head = Files.readAllBytes(p);
      assertTrue(png + " is a PNG", head.length > 8 && head[1] == 'P' && head[2] == 'N' && head[3] == 'G');
    }
    String summary = Files.readString(out.resolve("summary.md"));
    assertTrue(summary, summary.contains("## At a glance"));
    assertTrue(summary, summary.contains("four-workers"));
    assertTrue(summary, summary.contains("dnsperf -s 127.0.0.1"));
    assertTrue(summary, summary.contains("its own jar " + own.toAbsolutePath()));
    // and it ran that jar: the commands the summary lists start it from there
    assertTrue(summary, summary.contains("-jar " + own.toAbsolutePath() + " serve"));
    assertEquals(summary, 1, summary.split("its own jar ", -1).length - 1);
    for (String audit : List.of("dnsperf.txt", "stats-before.txt", "stats-after.txt", "knotd-stats-after.txt",
        "shoal.conf", "server.log", "cpu-before.txt", "cpu-after.txt")) {
      assertTrue(audit, Files.isRegularFile(raw.resolve("members/two-workers").resolve(audit)));
    }
    // the member that takes the run's domain list was seen to apply it before it was measured
    assertEquals(5001, Files.readAllLines(out.resolve("policy-list.txt")).size());
    String check = Files.readString(raw.resolve("members/four-workers/policy-check.txt"));
    assertTrue(check, check.contains("NXDOMAIN, no answer") && check.contains("2 more"));
    assertTrue(summary, summary.contains("domain list policy-list.txt (nxdomain)"));
    assertTrue(Files.notExists(raw.resolve("members/two-workers/policy-check.txt")));
  }

  /**
   * recipe.turns = slices end to end (not --quick, which measures one round): each member started
   * once and measured in every round, in its own round directory, in the round's drawn order.
   */
  @Test
  public void aSideBySideRunStartsEachMemberOnceAndMeasuresItInEveryRound() throws IOException, URISyntaxException {
    Path out = run("side_by_side_tiny", List.of());
    Path raw = unpacked(out);
    List<RoundRow> rounds = StudyCsv.ROUNDS.read(out.resolve("rounds.csv"));
    // every member once a round, in the order drawn for that round
    List<String> expected = new java.util.ArrayList<>();
    for (int round = 1; round <= 3; round++) {
      for (String member : PlainStudy.turnOrder(List.of("memory", "lmdb"), round)) {
        expected.add(round + " " + member);
      }
    }
    assertEquals(expected, rounds.stream().map(r -> r.round() + " " + r.row().member()).toList());
    // results.csv keeps the scenario's order of members
    assertEquals(List.of("memory", "lmdb"),
        StudyCsv.RESULTS.read(out.resolve("results.csv")).stream().map(ResultRow::member).toList());
    for (RoundRow r : rounds) {
      assertTrue(r + " completed", r.row().completed() > 0);
      assertTrue(r + " CPU per query", r.row().cpuMicrosPerQuery() != null && r.row().cpuMicrosPerQuery() > 0);
      assertTrue(r + " answered from its cache", r.row().cacheHits() != null && r.row().cacheHits() > 0);
    }
    String summary = Files.readString(out.resolve("summary.md"));
    // one start per member: the commands the summary lists start each once
    assertEquals(summary, 2, summary.split("-jar [^ ]*shoal.jar serve", -1).length - 1);
    assertTrue(summary, summary.contains("members taking turns side by side"));
    for (String member : List.of("memory", "lmdb")) {
      Path dir = raw.resolve("members").resolve(member);
      assertTrue(member + " warmed up once", Files.isRegularFile(dir.resolve("dnsperf-warmup.txt")));
      assertTrue(member + " server.log", Files.isRegularFile(dir.resolve("server.log")));
      for (int round = 1; round <= 3; round++) {
        assertTrue(member + " round " + round, Files.isRegularFile(dir.resolve("round-" + round).resolve("dnsperf.txt")));
      }
    }
  }

  /**
   * A signed study end to end: knotd signs the zone, the run takes its DS as the validating
   * member's anchor, dnsperf sets DO, and each member's sample answer was checked with kdig: AD
   * through the validating shoal, none through the others, an RRSIG through all.
   */
  @Test
  public void aQuickSignedRunValidatesThroughTheValidatingMemberOnly() throws IOException, URISyntaxException {
    for (String tool : List.of("keymgr", "kdig")) {
      Assume.assumeTrue(tool + " is not installed (apt-get install -y knot knot-dnsutils)",
          Prerequisites.find(tool).isPresent());
    }
    Path out = quickRun("dnssec_tiny");
    Path raw = unpacked(out);

    List<ResultRow> all = StudyCsv.RESULTS.read(out.resolve("results.csv"));
    assertEquals(List.of("validating", "unvalidated", "ceiling"), all.stream().map(ResultRow::member).toList());
    for (ResultRow r : all) {
      assertTrue(r.member() + " completed " + r.completed(), r.completed() > 0);
    }
    String anchor = Files.readString(raw.resolve("knotd/trust-anchor.ds"));
    assertTrue(anchor, anchor.startsWith("bench.test. DS ") && anchor.contains(" 13 2 "));
    String conf = Files.readString(raw.resolve("members/validating/shoal.conf"));
    assertTrue(conf, conf.contains("trust-anchor.ds") && conf.contains("validation=on"));
    for (String member : List.of("validating", "unvalidated", "ceiling")) {
      for (String when : List.of("start-1", "start-2", "end-1")) {
        String kdig = Files.readString(raw.resolve("members").resolve(member).resolve("dnssec-check-" + when + ".txt"));
        assertTrue(member + " " + when + ": " + kdig, kdig.contains("status: NOERROR") && kdig.contains("RRSIG"));
        boolean ad = kdig.lines().anyMatch(l -> l.startsWith(";; Flags:") && l.matches(".*\\bad\\b.*"));
        assertEquals(member + " " + when + " AD: " + kdig, member.equals("validating"), ad);
      }
    }
    String dnsperf = Files.readString(raw.resolve("members/validating/dnsperf.txt"));
    assertTrue(dnsperf, dnsperf.contains(" -D"));
    String metrics = Files.readString(raw.resolve("members/validating/stats-after.txt"));
    assertTrue(metrics, metrics.matches("(?s).*shoal_dnssec_answers_total\\{status=\"secure\"\\} [1-9].*"));
    String summary = Files.readString(out.resolve("summary.md"));
    assertTrue(summary, summary.contains("knotd signs the zone (ecdsap256sha256"));
  }

  /**
   * The outage test end to end: knotd stopped for 5 s while every answer of a 4 s TTL expires.
   * With serve-stale the expired answers go out stale; without it the same queries fail.
   */
  @Test
  public void aQuickOutageRunServesStaleAnswersWhereServeStaleOffFails() throws IOException, URISyntaxException {
    Path out = quickRun("outage_tiny");
    Path raw = unpacked(out);

    List<OutageTimeline.Phase> phases = StudyCsv.OUTAGE_PHASES.read(out.resolve("outage_phases.csv"));
    OutageTimeline.Phase on = during(phases, "stale-on");
    OutageTimeline.Phase off = during(phases, "stale-off");
    assertTrue("stale-on answered during the outage: " + on, on.completed() > 0);
    assertTrue("stale-on served stale answers: " + on, on.stale() > 0);
    assertEquals("stale-off serves nothing stale: " + off, 0, off.stale());
    assertTrue("serve-stale leaves fewer queries unanswered (SERVFAIL or lost): " + on + " vs " + off,
        on.failed() < off.failed());
    List<OutageTimeline.Second> seconds = StudyCsv.OUTAGE_TIMELINE.read(out.resolve("outage_timeline.csv"));
    assertTrue(seconds.stream().anyMatch(x -> x.member().equals("stale-off") && x.outage()));
    byte[] png = Files.readAllBytes(out.resolve(OutageTimeline.PNG));
    assertTrue("the chart is a PNG", png.length > 8 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G');
    String summary = Files.readString(out.resolve("summary.md"));
    assertTrue(summary, summary.contains("## At a glance"));
    assertTrue(summary, summary.contains("for stale-off against"));
    assertTrue(summary, summary.contains("kill -STOP"));
    for (String audit : List.of("dnsperf-fill.txt", "outage-scrapes.txt", "knotd-stop.txt",
        "knotd-cont.txt", "shoal.conf")) {
      assertTrue(audit, Files.isRegularFile(raw.resolve("members/stale-on").resolve(audit)));
    }
    // the per-query log is left out of the archive: outage_timeline.csv holds what it said
    assertTrue(Files.notExists(raw.resolve("members/stale-on/dnsperf-outage.txt")));
    assertTrue(summary, summary.contains("[raw.tar.xz](raw.tar.xz)"));
  }

  private static OutageTimeline.Phase during(List<OutageTimeline.Phase> phases, String member) {
    return phases.stream().filter(p -> p.member().equals(member) && p.phase().equals("during")).findFirst()
        .orElseThrow(() -> new AssertionError("no 'during' row for " + member + " in " + phases));
  }

  @Test
  public void aQuickRobustnessRunMeasuresEveryPhaseAndWhatTheAttacksCost() throws IOException {
    assumeTools();
    Path jar = Path.of("target", "shoal.jar");
    Assume.assumeTrue("target/shoal.jar is built by mvn package; run with mvn verify", Files.isRegularFile(jar));
    Path out = Files.createTempDirectory("study-robustness");

    // the scenario as published in the catalog, with --quick: a few seconds per phase
    int status = ShoalCommand.commandLine().execute("study", "robustness", "--quick",
        "--catalog", Path.of("bench", "scenarios").toString(), "--out", out.toString(), "--shoal-jar", jar.toString());
    assertEquals("study exit status (see the output above)", 0, status);
    Path raw = unpacked(out);

    List<PhaseRow> all = StudyCsv.ROBUSTNESS.read(out.resolve("robustness.csv"));
    List<String> phases = List.of("baseline", "tcp_baseline", "tcp_holders", "dot_baseline", "dot_holders",
        "doh_baseline", "doh_holders", "malformed_udp", "tcp_drip_idle", "miss_flood", "miss_flood_spread",
        "hostile_upstream");
    // shoal runs every phase, then unbound does
    assertEquals(List.of("shoal-memory", "unbound"), all.stream().map(PhaseRow::member).distinct().toList());
    List<PhaseRow> rows = all.stream().filter(r -> r.member().equals("shoal-memory")).toList();
    List<PhaseRow> unbound = all.stream().filter(r -> r.member().equals("unbound")).toList();
    assertEquals(phases, rows.stream().map(PhaseRow::phase).toList());
    assertEquals(phases, unbound.stream().map(PhaseRow::phase).toList());
    for (PhaseRow r : all) {
      // the honest clients of every UDP phase (all but the two whose clients ask over TCP) ask at honest_qps: something was offered, most of it answered
      if (!AttackPlan.Phase.named(r.phase()).overTcp()) {
        assertTrue(r.member() + " " + r.phase() + " offered " + r.honestOffered(),
            r.honestOffered() != null && r.honestOffered() > 0);
        // what share is answered is the study's finding (unbound may answer almost none under a flood)
        assertTrue(r.member() + " " + r.phase() + " answered " + r.answeredOfOffered(), r.answeredOfOffered() != null);
        // the zone client asked new names of the zone beside them; what share was answered is the finding
        assertTrue(r.member() + " " + r.phase() + " zone client " + r.zoneClient(),
            r.zoneClient() != null && r.zoneClient().asked() > 0);
      } else {
        assertEquals(r.member() + " " + r.phase(), null, r.honestOffered());
        assertEquals(r.member() + " " + r.phase(), null, r.zoneClient());
      }
    }
    for (PhaseRow r : rows) {
      // A quick tcp_holders phase (3 s) can end before a one-core host has accepted its way past
      // 1,300 holders to the honest clients' connections: what it keeps of the TCP rate is the
      // published study's figure (docs/running-safely.md), not this smoke run's.
      // The same holds for the DoT and DoH holders, which a 3 s phase cannot see closed (their
      // deadline is 5 s): what they cost is the published study's figure.
      if (!r.phase().endsWith("_holders")) {
        assertTrue(r.phase() + " honest qps " + r.honestQps(), r.honestQps() > 0);
        assertTrue(r.phase() + " ratio " + r.qpsVsBaseline(), r.qpsVsBaseline() != null && r.qpsVsBaseline() > 0);
        assertTrue(r.phase() + " p99 " + r.p99LatencyMs(), r.p99LatencyMs() != null);
      }
      assertTrue(r.phase() + " RSS " + r.rssMaxMib(), r.rssMaxMib() != null && r.rssMaxMib() > 0);
      assertTrue(r.phase() + " fds " + r.fdsMax(), r.fdsMax() != null && r.fdsMax() > 0);
      if (!r.phase().endsWith("baseline")) {
        assertTrue(r.phase() + " sent " + r.attackSent(), r.attackSent() > 0);
      }
    }
    assertEquals(1.0, rows.get(0).qpsVsBaseline(), 1e-9);
    PhaseRow malformed = rows.get(7);
    assertTrue("malformed packets counted as dropped: " + malformed.droppedWords(),
        malformed.droppedByReason().getOrDefault("malformed", 0L) > 0);
    // the siege's connects completed: the kernel accepted them into shoal's listen queue at least
    assertTrue(rows.get(8).attackDetail(), rows.get(8).attackDetail().matches(".*at most [1-9][0-9]* open at once.*"));
    // the DoT and DoH holders: the honest clients asked over DoT and DoH on the member's own
    // listeners (answered in the baselines), the holders' connects completed and were counted
    for (String stream : List.of("dot", "doh")) {
      for (List<PhaseRow> member : List.of(rows, unbound)) {
        PhaseRow base = member.stream().filter(r -> r.phase().equals(stream + "_baseline")).findFirst().orElseThrow();
        assertTrue(base.member() + " " + base.phase() + " completed " + base.honestCompleted(),
            base.honestCompleted() > 0);
        PhaseRow held = member.stream().filter(r -> r.phase().equals(stream + "_holders")).findFirst().orElseThrow();
        assertTrue(held.member() + " " + held.phase() + ": " + held.attackDetail(),
            held.held() != null && held.held().opened() >= 1000);
      }
    }
    // the holders: empty messages closed as malformed while the honest TCP clients were answered
    // (checked above); once shoal holds its cap, idle holders make room for newcomers. A quick
    // phase may end before shoal has accepted its cap of connections, so that part is checked
    // only when it did (TcpLimitsSpec checks the eviction itself over real sockets).
    PhaseRow holders = rows.get(2);
    assertTrue("zero-length messages closed: " + holders.droppedWords(),
        holders.droppedByReason().getOrDefault("malformed", 0L) > 0);
    if (holders.fdsMax() > 1024 + 16) { // the cap, and the few descriptors any shoal holds
      assertTrue("idle holders evicted at the cap: " + holders.droppedWords(),
          holders.droppedByReason().getOrDefault("tcp_idle_evicted", 0L) > 0);
    }
    PhaseRow hostile = rows.stream().filter(r -> r.phase().equals("hostile_upstream")).findFirst().orElseThrow();
    assertTrue("hostile answers refused: " + hostile.droppedWords(),
        hostile.droppedByReason().getOrDefault("bad_upstream_answer", 0L) > 0
            && hostile.droppedByReason().getOrDefault("upstream_mismatch", 0L) > 0);

    byte[] png = Files.readAllBytes(out.resolve(RobustnessSummary.PNG));
    assertTrue("robustness.png is a PNG", png.length > 8 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G');
    String summary = Files.readString(out.resolve("summary.md"));
    for (PhaseRow r : rows) {
      assertTrue(r.phase(), summary.contains("| " + r.member() + " | " + r.phase() + " |"));
    }
    assertTrue(summary, summary.contains("## At a glance"));
    assertTrue(summary, summary.contains("## Side by side"));
    assertTrue(summary, summary.contains("answered of offered"));
    assertTrue(summary, summary.contains("zone client answered of asked"));
    assertTrue(Files.isRegularFile(raw.resolve("members/unbound/phases/12-hostile_upstream/attack.txt")));
    for (String audit : List.of("dnsperf.txt", "metrics-before.txt", "metrics-after.txt", "attack.txt")) {
      assertTrue(audit, Files.isRegularFile(raw.resolve("members/shoal-memory/phases/8-malformed_udp").resolve(audit)));
    }
    // passed: the run directory holds a 2-million-line query file, not worth keeping in the temp directory
    try (java.util.stream.Stream<Path> walk = Files.walk(out)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  /**
   * Checks that the run ended by packing its raw directories into raw.tar.xz and removing them
   * (versions/ stays), and unpacks the archive into a temporary directory, which it returns.
   */
  private static Path unpacked(Path out) throws IOException {
    assertTrue("raw.tar.xz in " + out, Files.isRegularFile(out.resolve(RawArchive.FILE)));
    for (String dir : List.of("members", "knotd")) {
      assertTrue(dir + "/ was removed once packed", Files.notExists(out.resolve(dir)));
    }
    assertTrue("versions/ stays unpacked", Files.isDirectory(out.resolve("versions")));
    Path raw = Files.createTempDirectory("study-spec-raw");
    try {
      Process tar = new ProcessBuilder("tar", "-xJf", out.resolve(RawArchive.FILE).toString(), "-C", raw.toString())
          .redirectErrorStream(true).start();
      String said = new String(tar.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertTrue("tar -x finished", tar.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
      assertEquals("tar -x exit status: " + said, 0, tar.exitValue());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    return raw;
  }

  /**
   * The recursion test end to end: a tree of knotd instances on 127.54.B.0/24 port 53 (so it runs
   * as root), shoal and unbound resolving from its root; every cold name answered with one or two
   * authority queries, warm hits with none.
   */
  @Test
  public void aQuickRecursionRunResolvesColdNamesThroughTheTreeAndAnswersWarmOnesFromCache()
      throws IOException, URISyntaxException {
    for (String tool : List.of("keymgr", "unbound", "unbound-control")) {
      Assume.assumeTrue(tool + " is not installed (apt-get install -y knot unbound)", Prerequisites.find(tool).isPresent());
    }
    Assume.assumeTrue("binding port 53 of the tree's addresses needs root", io.shoal.study.host.NetworkIsolation.root());
    Path out = quickRun("recursion_tiny");
    Path raw = unpacked(out);
    List<RecursionRow> rounds = StudyCsv.RECURSION_ROUNDS.read(out.resolve("rounds.csv"));
    assertEquals(List.of("unbound/cold", "unbound/warm", "shoal/cold", "shoal/warm"),
        rounds.stream().map(r -> r.member() + "/" + r.phase()).toList());
    for (RecursionRow r : rounds) {
      assertTrue(r.toString(), r.servfail() == 0 && r.otherErrors() == 0 && r.answered() >= 0.99 * r.sent());
      // CPU is read in clock ticks (10 ms): 40 cold resolutions once cost unbound less than one;
      // 200 cost it a few, and only the warm phase (2 s of load) must show some
      assertTrue(r.toString(), (r.phase().equals("warm") ? r.cpuSeconds() > 0 : r.cpuSeconds() >= 0) && r.p99Ms() != null);
      if (r.phase().equals("cold")) {
        assertEquals(r.toString(), 200.0, r.answered(), 0.0);
        // each new name under a cached cut: one exchange with its zone's server, at most a retry more
        assertTrue(r.toString(), r.authorityPerResolution() >= 1.0 && r.authorityPerResolution() <= 2.0);
      } else {
        assertEquals(r.toString(), 0.0, r.authorityQueries(), 0.0);
      }
    }
    assertEquals(4, StudyCsv.RECURSION_RESULTS.read(out.resolve("results.csv")).size());
    String conf = Files.readString(raw.resolve("members/shoal/round-1/shoal.conf"));
    assertTrue(conf, conf.contains("root.hints") && conf.contains("root.ds") && conf.contains("recursive"));
    String unbound = Files.readString(raw.resolve("members/unbound/round-1/unbound.conf"));
    assertTrue(unbound, unbound.contains("root-hints:") && unbound.contains("aggressive-nsec: no"));
    String summary = Files.readString(out.resolve("summary.md"));
    assertTrue(summary, summary.contains("cold resolutions, shoal over unbound: ")
        && summary.contains("warm hits, shoal over unbound: CPU per answer "));
    assertTrue(Files.size(out.resolve("cold_authority_queries.png")) > 1000);
  }

  @Test
  public void anUnknownScenarioExitsTwoAndListsTheCatalog() throws URISyntaxException {
    Path catalog = Path.of(StudySpec.class.getResource("/study/catalog/tiny.conf").toURI()).getParent();
    int status = ShoalCommand.commandLine().execute("study", "no_such_scenario", "--catalog", catalog.toString());
    assertEquals(2, status);
  }
}
