package io.shoal.study.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.scenario.ScenarioException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PerformanceHubTest {

  private static final String ROUNDS_HEADER = String.join(",", RoundRow.COLUMNS);

  /** A rounds.csv line: round, member, QPS, CPU per query; the other columns as a study writes them. */
  private static String round(int round, String member, double qps, double cpuUs) {
    return round + "," + member + ",-,-," + qps + ",1.0,100,100,0,1,100.00,100,0,,,,,1.0," + cpuUs;
  }

  private static Path run(Path results, String study, String name, String file, String... lines) throws IOException {
    Path dir = Files.createDirectories(results.resolve(study).resolve(name));
    Files.writeString(dir.resolve(file), String.join("\n", lines) + "\n");
    Files.writeString(dir.resolve("summary.md"), "# Study\n");
    return dir;
  }

  private static Path page(Path home) throws IOException {
    Path page = Files.createDirectories(home.resolve("docs/performance")).resolve("README.md");
    Files.writeString(page, "# Performance\n\nIntro stays.\n\n" + PerformanceHub.BEGIN + "\nold table\n"
        + PerformanceHub.END + "\n\nText after stays.\n");
    return page;
  }

  private static Path definition(Path home, String rows) throws IOException {
    Path conf = Files.createDirectories(home.resolve("bench")).resolve("hub.conf");
    Files.writeString(conf, "page = \"docs/performance/README.md\"\nrows = [\n" + rows + "\n]\n");
    return conf;
  }

  @Test
  void eachRowIsTheMedianOfTheRoundRatiosFromTheLatestPublishedRun(@TempDir Path home) throws IOException {
    Path results = home.resolve("bench/results");
    // an older run and a quick smoke run that must not be read, and the latest published run
    run(results, "query_path", "20261130T214130Z", "rounds.csv", ROUNDS_HEADER,
        round(1, "unbound", 100, 8), round(1, "shoal-memory", 50, 16));
    run(results, "query_path", "quick-20261205T000000Z", "rounds.csv", ROUNDS_HEADER,
        round(1, "unbound", 100, 8), round(1, "shoal-memory", 900, 1));
    Path latest = run(results, "query_path", "20261204T053101Z", "rounds.csv", ROUNDS_HEADER,
        round(1, "unbound", 100, 8), round(1, "shoal-memory", 200, 2),
        round(2, "unbound", 100, 8), round(2, "shoal-memory", 120, 4),
        round(3, "unbound", 200, 8), round(3, "shoal-memory", 300, 3));
    // a variant published under its study as a named run, and a CSV of its own kind with a filter
    run(results, "cluster_capacity", "20261203T185822Z-cluster_capacity_churn_rounds", "rounds.csv", ROUNDS_HEADER,
        round(1, "churn-1", 10, 20), round(1, "churn-cluster-3", 30, 20));
    run(results, "cluster_capacity", "20261204T000000Z", "rounds.csv", ROUNDS_HEADER,
        round(1, "churn-1", 10, 20), round(1, "churn-cluster-3", 11, 20));
    run(results, "cache_memory", "20261202T211354Z", "cache_memory.csv",
        "member,entries_target,bytes_per_entry", "unbound,4096,626.0", "shoal-memory,4096,3325.0",
        "unbound,1000000,627.0", "shoal-memory,1000000,536.0");
    Path page = page(home);
    Path conf = definition(home, """
        { topic = "Warm hits: QPS", study = query_path, member = shoal-memory, versus = unbound, column = achieved_qps,
          when = "a cache that answers most queries" }
        { topic = "Warm hits: CPU", study = query_path, member = shoal-memory, versus = unbound,
          column = cpu_us_per_query, when = "CPU is what you pay for" }
        { topic = "Cluster, churn", study = cluster_capacity, variant = cluster_capacity_churn_rounds,
          member = churn-cluster-3, versus = churn-1, column = achieved_qps, when = "scaling out" }
        { topic = "Memory per answer", study = cache_memory, csv = cache_memory.csv, where { entries_target = 1000000 },
          member = shoal-memory, versus = unbound, column = bytes_per_entry, when = "large caches" }
        { topic = "Not yet run", study = no_such_study, member = a, versus = b, column = achieved_qps, when = "never" }
        """);

    List<PerformanceHub.Row> rows = PerformanceHub.rows(conf);
    assertEquals(page, PerformanceHub.page(home, conf));
    List<Optional<PerformanceHub.Figure>> figures = PerformanceHub.rebuild(rows, results, page);

    // QPS ratios by round: 2.0, 1.2, 1.5 -> median 1.5, spread 1.2 to 2.0
    PerformanceHub.Figure qps = figures.get(0).orElseThrow();
    assertEquals(1.5, qps.ratio(), 1e-9);
    assertEquals(List.of(2.0, 1.2, 1.5), qps.rounds());
    assertEquals(latest, qps.run());
    // CPU ratios: 0.25, 0.5, 0.375 -> median 0.375
    assertEquals(0.375, figures.get(1).orElseThrow().ratio(), 1e-9);
    assertEquals(3.0, figures.get(2).orElseThrow().ratio(), 1e-9);
    assertEquals(536.0 / 627.0, figures.get(3).orElseThrow().ratio(), 1e-9);
    assertTrue(figures.get(4).isEmpty());

    String md = Files.readString(page);
    assertTrue(md.startsWith("# Performance\n\nIntro stays.\n\n" + PerformanceHub.BEGIN), md);
    assertTrue(md.endsWith(PerformanceHub.END + "\n\nText after stays.\n"), md);
    assertTrue(!md.contains("old table"), md);
    assertTrue(md.contains("| Warm hits: QPS | shoal-memory ÷ unbound | **1.50x** | 1.20x–2.00x (3 rounds) | 200 qps vs 100 qps "
        + "| a cache that answers most queries | [query_path/20261204T053101Z]"
        + "(../../bench/results/query_path/20261204T053101Z/summary.md) |"), md);
    assertTrue(md.contains("| Memory per answer | shoal-memory ÷ unbound | **0.85x** | one run | 536 B vs 627 B |"), md);
    assertTrue(md.contains("(../../bench/results/cluster_capacity/20261203T185822Z-cluster_capacity_churn_rounds/summary.md)"),
        md);
    assertTrue(md.contains("| Not yet run | a ÷ b | not measured |"), md);

    // rebuilding again reads the same runs and writes the same page
    PerformanceHub.rebuild(rows, results, page);
    assertEquals(md, Files.readString(page));
  }

  @Test
  void aBadDefinitionOrAPageWithoutMarkersIsAnErrorNamingIt(@TempDir Path home) throws IOException {
    Path conf = definition(home, "{ topic = t, study = s, member = a, versus = b, column = c, when = w, colour = red }");
    ScenarioException e = assertThrows(ScenarioException.class, () -> PerformanceHub.rows(conf));
    assertTrue(e.getMessage().contains("rows[0].colour"), e.getMessage());
    Path missing = definition(home, "{ topic = t, study = s, member = a, column = c, when = w }");
    e = assertThrows(ScenarioException.class, () -> PerformanceHub.rows(missing));
    assertTrue(e.getMessage().contains("versus"), e.getMessage());

    Path page = Files.createDirectories(home.resolve("docs")).resolve("README.md");
    Files.writeString(page, "# no markers\n");
    e = assertThrows(ScenarioException.class, () -> PerformanceHub.rebuild(List.of(), home.resolve("bench/results"), page));
    assertTrue(e.getMessage().contains(page.toString()) && e.getMessage().contains("markers"), e.getMessage());
  }
}
