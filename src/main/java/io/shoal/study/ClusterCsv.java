package io.shoal.study;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * cluster.csv: the members of a cluster scenario summed over their nodes, with upstream queries
 * and remote lookups. Written beside results.csv, whose columns stay those of every study.
 */
public final class ClusterCsv {
  /** The file's name in the run directory. */
  public static final String FILE = "cluster.csv";

  private ClusterCsv() {}

  /** The file's text: header line, then one line per row. */
  public static String render(List<ClusterRow> rows) {
    StringBuilder out = new StringBuilder(String.join(",", ClusterRow.COLUMNS)).append('\n');
    for (ClusterRow r : rows) {
      List<String> cells = new ArrayList<>();
      for (String c : r.cells()) {
        cells.add(c.contains(",") || c.contains("\"") ? '"' + c.replace("\"", "\"\"") + '"' : c);
      }
      out.append(String.join(",", cells)).append('\n');
    }
    return out.toString();
  }

  public static void write(Path file, List<ClusterRow> rows) throws IOException {
    Files.writeString(file, render(rows), StandardCharsets.UTF_8);
  }

  public static List<ClusterRow> read(Path file) throws IOException {
    return parse(Files.readString(file, StandardCharsets.UTF_8));
  }

  /** Reads the text of a cluster.csv; fails if the header is not {@link ClusterRow#COLUMNS}. */
  public static List<ClusterRow> parse(String text) {
    List<String> lines = text.lines().filter(l -> !l.isBlank()).toList();
    if (lines.isEmpty() || !ResultsCsv.split(lines.get(0)).equals(ClusterRow.COLUMNS)) {
      throw new IllegalArgumentException(
          "not a cluster.csv: the header must be " + String.join(",", ClusterRow.COLUMNS));
    }
    List<ClusterRow> rows = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      rows.add(ClusterRow.fromCells(ResultsCsv.split(line)));
    }
    return rows;
  }
}
