package io.shoal.study.report;

import io.shoal.study.attack.PhaseRow;
import io.shoal.study.timeline.KillTimeline;
import io.shoal.study.timeline.OutageTimeline;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVPrinter;
import org.apache.commons.csv.CSVRecord;

/**
 * One CSV file of a study, written and read the same way for every file: a header line with its
 * fixed columns, then one line per row; "\n" line ends, cells quoted only when they hold a comma, a
 * quote or a line break. Each file says how its row becomes cells and back.
 *
 * @param <R> the row type of the file
 */
public final class StudyCsv<R> {

  /** results.csv: one row per member (with rounds, its median run). */
  public static final StudyCsv<ResultRow> RESULTS =
      new StudyCsv<>("results.csv", ResultRow.COLUMNS, ResultRow::cells, ResultRow::fromCells);

  /** rounds.csv: every run of a scenario with several rounds, the round before results.csv's columns. */
  public static final StudyCsv<RoundRow> ROUNDS =
      new StudyCsv<>("rounds.csv", RoundRow.COLUMNS, RoundRow::cells, RoundRow::fromCells);

  /** cluster.csv: members of a cluster scenario, summed over their nodes. */
  public static final StudyCsv<ClusterRow> CLUSTER =
      new StudyCsv<>("cluster.csv", ClusterRow.COLUMNS, ClusterRow::cells, ClusterRow::fromCells);

  /** kill_timeline.csv: the kill test, one row per second. */
  public static final StudyCsv<KillTimeline.Second> KILL_TIMELINE = new StudyCsv<>(
      "kill_timeline.csv", KillTimeline.COLUMNS, KillTimeline.Second::cells, KillTimeline.Second::fromCells);

  /** robustness.csv: one row per phase of a robustness run. */
  public static final StudyCsv<PhaseRow> ROBUSTNESS =
      new StudyCsv<>("robustness.csv", PhaseRow.COLUMNS, PhaseRow::cells, PhaseRow::fromCells);

  /** cache_memory.csv: one row per member and cache size of a cache_memory run. */
  public static final StudyCsv<CacheMemoryRow> CACHE_MEMORY =
      new StudyCsv<>("cache_memory.csv", CacheMemoryRow.COLUMNS, CacheMemoryRow::cells, CacheMemoryRow::fromCells);

  /** outage_timeline.csv: an outage scenario, one row per member and second. */
  public static final StudyCsv<OutageTimeline.Second> OUTAGE_TIMELINE = new StudyCsv<>(
      "outage_timeline.csv", OutageTimeline.COLUMNS, OutageTimeline.Second::cells, OutageTimeline.Second::fromCells);

  /** outage_phases.csv: an outage scenario, one row per member and phase (before, during, after). */
  public static final StudyCsv<OutageTimeline.Phase> OUTAGE_PHASES = new StudyCsv<>(
      "outage_phases.csv", OutageTimeline.PHASE_COLUMNS, OutageTimeline.Phase::cells, OutageTimeline.Phase::fromCells);

  /** rounds.csv of a recursion study: every phase of every run. */
  public static final StudyCsv<RecursionRow> RECURSION_ROUNDS =
      new StudyCsv<>("rounds.csv", RecursionRow.COLUMNS, RecursionRow::cells, RecursionRow::fromCells);

  /** results.csv of a recursion study: each member's and phase's medians over the rounds. */
  public static final StudyCsv<RecursionRow> RECURSION_RESULTS =
      new StudyCsv<>("results.csv", RecursionRow.COLUMNS, RecursionRow::cells, RecursionRow::fromCells);

  // Minimal quoting and "\n" keep the files as they were before this writer: Commons CSV's default
  // ends records with "\r\n".
  private static final CSVFormat FORMAT = CSVFormat.DEFAULT.builder().setRecordSeparator("\n").get();

  private final String file;
  private final List<String> columns;
  private final Function<R, List<String>> cells;
  private final Function<List<String>, R> row;

  private StudyCsv(String file, List<String> columns, Function<R, List<String>> cells,
      Function<List<String>, R> row) {
    this.file = file;
    this.columns = columns;
    this.cells = cells;
    this.row = row;
  }

  /** The file's name in the run directory. */
  public String file() {
    return file;
  }

  /** The header, in order. Changing it breaks every reader of published results. */
  public List<String> columns() {
    return columns;
  }

  /** The file's text for these rows: the header line, then one line per row. */
  public String render(List<R> rows) {
    StringBuilder out = new StringBuilder();
    try (CSVPrinter printer = new CSVPrinter(out, FORMAT)) {
      printer.printRecord(columns);
      for (R r : rows) {
        printer.printRecord(cells.apply(r));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("a StringBuilder does not fail to append", e);
    }
    return out.toString();
  }

  /** Writes the rows to {@link #file()} in {@code dir}; returns the file's path. */
  public Path write(Path dir, List<R> rows) throws IOException {
    Path target = dir.resolve(file);
    Files.writeString(target, render(rows), StandardCharsets.UTF_8);
    return target;
  }

  /** Reads a file written by {@link #write}; fails if its header is not {@link #columns()}. */
  public List<R> read(Path path) throws IOException {
    return parse(Files.readString(path, StandardCharsets.UTF_8));
  }

  /** Parses the file's text; fails if the header is not {@link #columns()}. */
  public List<R> parse(String text) {
    List<List<String>> records = new ArrayList<>();
    try (CSVParser parser = CSVParser.parse(text, FORMAT)) {
      for (CSVRecord r : parser) {
        records.add(r.toList());
      }
    } catch (IOException | UncheckedIOException e) {
      throw new IllegalArgumentException("not a readable " + file + ": " + e.getMessage(), e);
    }
    // columns are only ever appended: a file written before the last ones were has a header that
    // is a prefix of today's, and its rows are read with those cells empty
    List<String> header = records.isEmpty() ? List.of() : records.get(0);
    if (header.isEmpty() || header.size() > columns.size() || !columns.subList(0, header.size()).equals(header)) {
      throw new IllegalArgumentException("not a " + file + ": the header must be " + String.join(",", columns));
    }
    List<R> rows = new ArrayList<>();
    for (List<String> record : records.subList(1, records.size())) {
      List<String> cells = new ArrayList<>(record);
      if (record.size() == header.size()) {
        while (cells.size() < columns.size()) {
          cells.add("");
        }
      }
      rows.add(row.apply(cells));
    }
    return rows;
  }
}
