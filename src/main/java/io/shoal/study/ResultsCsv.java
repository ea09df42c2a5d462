package io.shoal.study;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** results.csv: one row per member, the columns fixed so runs can be compared by tools. */
public final class ResultsCsv {

  /** The header, in order. Changing it breaks every reader of published results. */
  public static final List<String> COLUMNS = List.of(
      "member", "lmdb_sync", "runtime", "achieved_qps", "avg_latency_ms", "sent", "completed", "lost",
      "workers", "hit_rate_pct", "cache_hits", "cache_misses", "fill_mean_ms", "fill_samples",
      "eviction_mean_ms", "eviction_samples");

  private ResultsCsv() {}

  /** The file's text for these rows: header line, then one line per row. */
  public static String render(List<ResultRow> rows) {
    StringBuilder out = new StringBuilder(String.join(",", COLUMNS)).append('\n');
    for (ResultRow r : rows) {
      List<String> cells = new ArrayList<>();
      for (String c : r.cells()) {
        cells.add(quote(c));
      }
      out.append(String.join(",", cells)).append('\n');
    }
    return out.toString();
  }

  public static void write(Path file, List<ResultRow> rows) throws IOException {
    Files.writeString(file, render(rows), StandardCharsets.UTF_8);
  }

  /** Reads a results file written by {@link #write}; fails if the header is not {@link #COLUMNS}. */
  public static List<ResultRow> read(Path file) throws IOException {
    return parse(Files.readString(file, StandardCharsets.UTF_8));
  }

  public static List<ResultRow> parse(String text) {
    List<String> lines = text.lines().filter(l -> !l.isBlank()).toList();
    if (lines.isEmpty() || !split(lines.get(0)).equals(COLUMNS)) {
      throw new IllegalArgumentException("not a results.csv: the header must be " + String.join(",", COLUMNS));
    }
    List<ResultRow> rows = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      rows.add(ResultRow.fromCells(split(line)));
    }
    return rows;
  }

  static String quote(String cell) {
    if (cell.contains(",") || cell.contains("\"") || cell.contains("\n")) {
      return '"' + cell.replace("\"", "\"\"") + '"';
    }
    return cell;
  }

  static List<String> split(String line) {
    List<String> cells = new ArrayList<>();
    StringBuilder cell = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quoted) {
        if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
          cell.append('"');
          i++;
        } else if (c == '"') {
          quoted = false;
        } else {
          cell.append(c);
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        cells.add(cell.toString());
        cell.setLength(0);
      } else {
        cell.append(c);
      }
    }
    cells.add(cell.toString());
    return cells;
  }
}
