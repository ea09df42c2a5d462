package io.shoal.study.run;

import io.shoal.study.host.Pause;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.measure.MetricsScrape;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.OutagePlan;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.server.ShoalUnderTest;
import io.shoal.study.timeline.OutageTimeline;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One member through the upstream-outage test: a fresh shoal node, its answers filled one name
 * at a time over the plan's spread, the recipe's warm-up, then dnsperf with per-second statistics
 * while knotd is stopped and resumed, and the node's counters read once a second throughout.
 */
final class OutageRun {
  private static final Duration SCRAPE_EVERY = Duration.ofSeconds(1);

  private final Scenario scenario;
  private final boolean quick;
  private final LoadSettings load;
  private final Path queries;
  private final Path names;
  private final Dnsperf dnsperf;
  private final StartedProcesses processes;
  private final Prerequisites.Tools tools;
  private final Path shoalJar;
  private final PrintStream out;

  /**
   * @param queries the recipe's query file, replayed by the warm-up and the measured run
   * @param names a file asking each name once, for the fill
   */
  OutageRun(Scenario scenario, boolean quick, LoadSettings load, Path queries, Path names, Dnsperf dnsperf,
      StartedProcesses processes, Prerequisites.Tools tools, Path shoalJar, PrintStream out) {
    this.scenario = scenario;
    this.quick = quick;
    this.load = load;
    this.queries = queries;
    this.names = names;
    this.dnsperf = dnsperf;
    this.processes = processes;
    this.tools = tools;
    this.shoalJar = shoalJar;
    this.out = out;
  }

  /** Roughly how long one member takes: start, fill, warm-up, the measured run and the stop. */
  static Duration estimate(Scenario s, LoadSettings load) {
    return RunEstimate.MEMBER_OVERHEAD.plus(s.outage().fillSpread()).plus(load.warmup()).plus(load.duration())
        .plus(MemberMeasurement.SETTLE.multipliedBy(2));
  }

  /** Runs member {@code m} in {@code dir} against {@code knot}; returns its seconds. knotd is running again after. */
  List<OutageTimeline.Second> measure(Member m, Path dir, KnotUpstream knot, StringBuilder setup)
      throws IOException, StudyException {
    Files.createDirectories(dir);
    OutagePlan plan = scenario.outage();
    Recipe recipe = scenario.recipe();
    try (ShoalUnderTest server = new ShoalUnderTest(m, recipe, dir, knot.address(), processes, tools, shoalJar)) {
      setup.append(server.setupNote());
      server.start();
      int names = recipe.queries().names();
      long spreadMs = plan.fillSpread().toMillis();
      // at least one query a second; a spread of 0 asks as fast as one client can
      int rate = spreadMs == 0 ? 1_000_000 : (int) Math.max(1, Math.ceil(names * 1000.0 / spreadMs));
      out.println("study: " + m.name() + ": filling " + names + " names at " + rate + " queries/s (about "
          + plan.fillSpread().toSeconds() + " s), so their answers expire spread over the TTL");
      dnsperf.paced(server.port(), this.names, rate, plan.fillSpread(), dir.resolve("dnsperf-fill.txt"));
      if (!load.warmup().isZero()) {
        out.println("study: " + m.name() + ": warming up for " + load.warmup().toSeconds() + " s");
        dnsperf.run(server.port(), queries, load, load.warmup(), dir.resolve("dnsperf-warmup.txt"));
      }
      server.scrape(dir.resolve("stats-before.txt"));

      URI metrics = server.metricsUri();
      processes.note("# in-process: HTTP GET " + metrics + " once a second during the measured run");
      List<OutageTimeline.Counters> scrapes = Collections.synchronizedList(new ArrayList<>());
      List<String> scrapeErrors = Collections.synchronizedList(new ArrayList<>());
      ScheduledExecutorService scraper = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "outage-scrape");
        t.setDaemon(true);
        return t;
      });
      scraper.scheduleAtFixedRate(() -> {
        try {
          String text = server.fetch(metrics, true).body();
          scrapes.add(OutageTimeline.Counters.of(System.currentTimeMillis() / 1000.0, MetricsScrape.parse(text)));
        } catch (StudyException | RuntimeException e) {
          scrapeErrors.add(e.getMessage());
        }
      }, 0, SCRAPE_EVERY.toMillis(), TimeUnit.MILLISECONDS);

      List<String> extra = List.of("-S", "1", "-v", "-t", Long.toString(plan.queryTimeout().toSeconds()));
      Duration after = plan.after(quick);
      Duration length = plan.length(quick);
      double stoppedAt;
      double resumedAt;
      List<String> outputs;
      try {
        List<StartedProcesses.Running> running = dnsperf.launchAtOnce(List.of(server.port()), List.of(queries), load,
            load.duration(), extra, List.of(dir.resolve("dnsperf-outage.txt")));
        out.println("study: " + m.name() + ": dnsperf for " + load.duration().toSeconds() + " s; stopping knotd (pid "
            + knot.pid() + ") after " + after.toSeconds() + " s for " + length.toSeconds() + " s");
        Pause.sleep(after);
        stoppedAt = System.currentTimeMillis() / 1000.0;
        try {
          knot.suspend(dir.resolve("knotd-stop.txt"));
          Pause.sleep(length);
        } finally {
          // always resumed, also when the wait was interrupted: the next member needs its upstream
          knot.resume(dir.resolve("knotd-cont.txt"));
          resumedAt = System.currentTimeMillis() / 1000.0;
        }
        out.println("study: " + m.name() + ": knotd resumed; waiting for dnsperf to finish");
        outputs = dnsperf.awaitAll(running, load.duration());
        Pause.sleep(MemberMeasurement.SETTLE);
      } finally {
        scraper.shutdownNow();
        try {
          scraper.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      MetricsScrape last = server.scrape(dir.resolve("stats-after.txt"));
      scrapes.add(OutageTimeline.Counters.of(System.currentTimeMillis() / 1000.0, last));
      writeAudit(dir, scrapes, scrapeErrors, stoppedAt, resumedAt);
      int status = server.stop();
      if (status != 0) {
        out.println("study: note: " + m.name() + " exited with status " + status + " on SIGTERM (expected 0)");
      }
      List<OutageTimeline.Counters> ordered;
      synchronized (scrapes) {
        ordered = new ArrayList<>(scrapes);
      }
      return OutageTimeline.of(m.name(), outputs.get(0), ordered, stoppedAt, resumedAt, 1.0);
    }
  }

  /** The outage's epochs and every scrape's numbers, kept for re-analysis beside dnsperf's output. */
  private static void writeAudit(Path dir, List<OutageTimeline.Counters> scrapes, List<String> errors,
      double stoppedAt, double resumedAt) throws IOException {
    StringBuilder t = new StringBuilder(String.format(Locale.ROOT,
        "# knotd stopped at epoch %.3f, resumed at epoch %.3f%n# epoch stale_total prefetches_total upstream_up%n",
        stoppedAt, resumedAt));
    synchronized (scrapes) {
      for (OutageTimeline.Counters c : scrapes) {
        t.append(String.format(Locale.ROOT, "%.3f %.0f %.0f %s%n", c.epochSeconds(), c.stale(), c.prefetches(),
            c.upstreamUp() == null ? "-" : c.upstreamUp()));
      }
    }
    synchronized (errors) {
      for (String e : errors) {
        t.append("# scrape failed: ").append(e).append('\n');
      }
    }
    Files.writeString(dir.resolve("outage-scrapes.txt"), t.toString(), StandardCharsets.UTF_8);
  }
}
