package io.shoal.study.report;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigValue;
import io.shoal.study.scenario.ScenarioException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The table on the first screen of docs/performance/README.md: one row per figure a user weighs
 * (shoal beside a peer, or beside itself), each a ratio read from the latest published run of a
 * study, so that re-running a study updates the docs. The rows are defined in bench/hub.conf; the
 * table sits between two marker lines of the page, and the text around it is left as it is.
 */
public final class PerformanceHub {
  /** The line before the generated table. */
  public static final String BEGIN = "<!-- hub table: written by `bench/study hub` from bench/hub.conf; edit that file, "
      + "not this table -->";
  /** The line after it. */
  public static final String END = "<!-- end of hub table -->";
  /** A published run's directory name: its start time, optionally followed by the name of a variant. */
  private static final Pattern RUN = Pattern.compile("\\d{8}T\\d{6}Z(-[A-Za-z0-9_.]+)?");
  private static final Set<String> TOP = Set.of("page", "rows");
  /** The unit of a column that holds a fraction (0 to 1): shown as a percentage. */
  static final String SHARE = "share";
  private static final Set<String> ROW = Set.of("topic", "study", "variant", "csv", "column", "member", "versus",
      "where", "versus_where", "unit", "when");
  private static final Map<String, String> UNITS = Map.of("achieved_qps", "qps", "cpu_us_per_query", "µs",
      "bytes_per_entry", "B", "bytes_per_entry_after_gc", "B", "answered_of_offered", SHARE,
      "qps_vs_baseline", "of baseline", "p99_latency_ms", "ms");

  /**
   * One row of the table: the ratio of {@code column} for {@code member} over {@code versus}, read
   * from {@code csv} of the latest run of {@code study} (named runs of {@code variant} only, if set).
   *
   * @param where column values both rows must have (e.g. an entries_target or a phase)
   * @param versusWhere column values the compared row must have instead, where they differ
   */
  public record Row(String topic, String study, String variant, String csv, String column, String member,
      String versus, Map<String, String> where, Map<String, String> versusWhere, String unit, String when) {}

  /** What a row measured: the ratio (median of the rounds), its rounds, both medians, and the run read. */
  public record Figure(double ratio, List<Double> rounds, double memberValue, double versusValue, Path run) {}

  private PerformanceHub() {}

  /** Reads bench/hub.conf; the error names the file and the key at fault. */
  public static List<Row> rows(Path definition) {
    Config c;
    try {
      c = ConfigFactory.parseFile(definition.toFile(), ConfigParseOptions.defaults().setAllowMissing(false)).resolve();
    } catch (ConfigException e) {
      throw new ScenarioException(definition + ": " + e.getMessage());
    }
    try {
      allowOnly(c, "", TOP);
      List<Row> rows = new ArrayList<>();
      List<? extends Config> list = c.getConfigList("rows");
      for (int i = 0; i < list.size(); i++) {
        Config r = list.get(i);
        String at = "rows[" + i + "].";
        allowOnly(r, at, ROW);
        String column = r.getString("column");
        rows.add(new Row(r.getString("topic"), r.getString("study"), optional(r, "variant"), optional(r, "csv"), column,
            r.getString("member"), r.getString("versus"), strings(r, "where"), strings(r, "versus_where"),
            r.hasPath("unit") ? r.getString("unit") : UNITS.getOrDefault(column, ""), r.getString("when")));
      }
      return rows;
    } catch (ConfigException | IllegalArgumentException e) {
      throw new ScenarioException(definition + ": " + e.getMessage());
    }
  }

  /** The page named by the definition's {@code page} key, relative to {@code home}. */
  public static Path page(Path home, Path definition) {
    try {
      return home.resolve(ConfigFactory.parseFile(definition.toFile()).getString("page"));
    } catch (ConfigException e) {
      throw new ScenarioException(definition + ": " + e.getMessage());
    }
  }

  /**
   * Rewrites the table between {@link #BEGIN} and {@link #END} in {@code page} from the runs under
   * {@code results}; returns the rows' figures (empty where a row's run or member is missing).
   */
  public static List<Optional<Figure>> rebuild(List<Row> rows, Path results, Path page) throws IOException {
    String text = Files.readString(page, StandardCharsets.UTF_8);
    int begin = text.indexOf(BEGIN);
    int end = text.indexOf(END);
    if (begin < 0 || end < begin) {
      throw new ScenarioException(page + ": no hub table markers; the page needs the line '" + BEGIN
          + "' and, after it, the line '" + END + "'");
    }
    List<Optional<Figure>> figures = new ArrayList<>();
    StringBuilder table = new StringBuilder(BEGIN).append("\n\n");
    table.append("| what | compared | ratio (median of rounds) | spread over rounds | medians | when this matters | study |\n");
    table.append("| --- | --- | ---: | --- | --- | --- | --- |\n");
    for (Row row : rows) {
      Optional<Figure> f = figure(row, results);
      figures.add(f);
      table.append("| ").append(row.topic()).append(" | ").append(row.member()).append(" ÷ ").append(row.versus())
          .append(" | ");
      if (f.isEmpty()) {
        table.append("not measured | | | ").append(row.when()).append(" | ").append(row.study()).append(" |\n");
        continue;
      }
      Figure x = f.get();
      table.append(String.format(Locale.ROOT, "**%.2fx**", x.ratio())).append(" | ").append(RatioGlance.spread(x.rounds()))
          .append(" | ").append(value(x.memberValue(), row.unit())).append(" vs ").append(value(x.versusValue(), row.unit()))
          .append(" | ").append(row.when()).append(" | [").append(results.relativize(x.run()).toString().replace('\\', '/'))
          .append("](").append(link(page, x.run())).append(") |\n");
    }
    table.append('\n');
    String rebuilt = text.substring(0, begin) + table + text.substring(end);
    Files.writeString(page, rebuilt, StandardCharsets.UTF_8);
    return figures;
  }

  /** The row's figure from the latest run of its study that has the row's CSV, or empty. */
  static Optional<Figure> figure(Row row, Path results) throws IOException {
    Optional<Path> run = latestRun(results.resolve(row.study()), row.variant(), row.csv());
    if (run.isEmpty()) {
      return Optional.empty();
    }
    Path csv = run.get().resolve(csvOf(row, run.get()));
    List<Map<String, String>> records = read(csv);
    Map<String, Double> mine = byRound(records, row.member(), row.where(), row.column());
    Map<String, String> theirWhere = new LinkedHashMap<>(row.where());
    theirWhere.putAll(row.versusWhere());
    Map<String, Double> theirs = byRound(records, row.versus(), theirWhere, row.column());
    List<Double> ratios = new ArrayList<>();
    List<Double> mineInPairs = new ArrayList<>();
    List<Double> theirsInPairs = new ArrayList<>();
    for (Map.Entry<String, Double> e : mine.entrySet()) {
      Double t = theirs.get(e.getKey());
      if (t != null && t != 0) {
        ratios.add(e.getValue() / t);
        mineInPairs.add(e.getValue());
        theirsInPairs.add(t);
      }
    }
    if (ratios.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new Figure(RoundsSummary.median(ratios), ratios, RoundsSummary.median(mineInPairs),
        RoundsSummary.median(theirsInPairs), run.get()));
  }

  /**
   * The latest published run of a study: the greatest run directory name (they start with their
   * UTC start time) of the plain study, or of the named variant, that holds the CSV asked for
   * (any results CSV when none is named). Quick smoke runs never count.
   */
  static Optional<Path> latestRun(Path studyDir, String variant, String csv) throws IOException {
    if (!Files.isDirectory(studyDir)) {
      return Optional.empty();
    }
    try (Stream<Path> runs = Files.list(studyDir)) {
      return runs.filter(Files::isDirectory)
          .filter(p -> RUN.matcher(p.getFileName().toString()).matches())
          .filter(p -> {
            String name = p.getFileName().toString();
            return variant == null ? name.length() == 16 : name.endsWith("-" + variant);
          })
          .filter(p -> csv != null ? Files.isRegularFile(p.resolve(csv))
              : Files.isRegularFile(p.resolve("rounds.csv")) || Files.isRegularFile(p.resolve("results.csv")))
          .max(Comparator.comparing(p -> p.getFileName().toString()));
    }
  }

  private static String csvOf(Row row, Path run) {
    if (row.csv() != null) {
      return row.csv();
    }
    return Files.isRegularFile(run.resolve("rounds.csv")) ? "rounds.csv" : "results.csv";
  }

  /** The column's value of the member's records that match {@code where}, by round ("" with no round column). */
  private static Map<String, Double> byRound(List<Map<String, String>> records, String member, Map<String, String> where,
      String column) {
    Map<String, Double> out = new TreeMap<>();
    for (Map<String, String> r : records) {
      if (!member.equals(r.get("member")) || where.entrySet().stream().anyMatch(w -> !w.getValue().equals(r.get(w.getKey())))) {
        continue;
      }
      String v = r.get(column);
      if (v == null || v.isBlank()) {
        continue;
      }
      out.put(r.getOrDefault("round", ""), Double.parseDouble(v));
    }
    return out;
  }

  /** A CSV as the studies write it (see {@link StudyCsv}): a header line, then one record per line. */
  static List<Map<String, String>> read(Path csv) throws IOException {
    List<Map<String, String>> out = new ArrayList<>();
    try (java.io.Reader in = Files.newBufferedReader(csv, StandardCharsets.UTF_8);
        org.apache.commons.csv.CSVParser parser = org.apache.commons.csv.CSVFormat.DEFAULT.builder().setHeader()
            .setSkipHeaderRecord(true).get().parse(in)) {
      for (org.apache.commons.csv.CSVRecord r : parser) {
        out.add(r.toMap());
      }
    }
    return out;
  }

  private static String value(double v, String unit) {
    if (SHARE.equals(unit)) {
      return String.format(Locale.ROOT, "%.1f%%", v * 100);
    }
    String n = v >= 1000 ? StudySummary.approx(v) : v >= 100 ? String.format(Locale.ROOT, "%.0f", v)
        : v >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
    return unit.isEmpty() ? n : n + " " + unit;
  }

  private static String link(Path page, Path run) {
    Path target = Files.isRegularFile(run.resolve("summary.md")) ? run.resolve("summary.md") : run.resolve("README.md");
    return page.toAbsolutePath().normalize().getParent().relativize(target.toAbsolutePath().normalize()).toString()
        .replace('\\', '/');
  }

  private static String optional(Config c, String key) {
    return c.hasPath(key) ? c.getString(key) : null;
  }

  private static Map<String, String> strings(Config c, String key) {
    Map<String, String> out = new LinkedHashMap<>();
    if (c.hasPath(key)) {
      for (Map.Entry<String, ConfigValue> e : c.getConfig(key).entrySet()) {
        out.put(e.getKey(), String.valueOf(e.getValue().unwrapped()));
      }
    }
    return out;
  }

  private static void allowOnly(Config c, String at, Set<String> allowed) {
    for (String key : c.root().keySet()) {
      if (!allowed.contains(key)) {
        throw new IllegalArgumentException(at + key + ": unknown key; allowed: " + String.join(", ", new java.util.TreeSet<>(allowed)));
      }
    }
  }
}
