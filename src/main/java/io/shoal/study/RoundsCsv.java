package io.shoal.study;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * rounds.csv: every measured run of a scenario with more than one round, in the order they ran:
 * the round number, then the columns of results.csv. results.csv keeps each member's median run.
 */
public final class RoundsCsv {
  public static final String FILE = "rounds.csv";

  /** One run: {@code row} measured in round {@code round} (from 1). */
  public record Row(int round, ResultRow row) {}

  private RoundsCsv() {}

  public static String render(List<Row> rows) {
    StringBuilder out = new StringBuilder("round,").append(String.join(",", ResultsCsv.COLUMNS)).append('\n');
    for (Row r : rows) {
      List<String> cells = new ArrayList<>();
      cells.add(String.valueOf(r.round()));
      for (String c : r.row().cells()) {
        cells.add(ResultsCsv.quote(c));
      }
      out.append(String.join(",", cells)).append('\n');
    }
    return out.toString();
  }

  public static void write(Path file, List<Row> rows) throws IOException {
    Files.writeString(file, render(rows), StandardCharsets.UTF_8);
  }

  public static List<Row> read(Path file) throws IOException {
    return parse(Files.readString(file, StandardCharsets.UTF_8));
  }

  /** Parses a file written by {@link #write}; fails if its header is not round plus results.csv's. */
  public static List<Row> parse(String text) {
    List<String> lines = text.lines().filter(l -> !l.isBlank()).toList();
    List<String> header = new ArrayList<>();
    header.add("round");
    header.addAll(ResultsCsv.COLUMNS);
    if (lines.isEmpty() || !ResultsCsv.split(lines.get(0)).equals(header)) {
      throw new IllegalArgumentException("not a " + FILE + ": the header must be " + String.join(",", header));
    }
    List<Row> rows = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      List<String> cells = ResultsCsv.split(line);
      rows.add(new Row(Integer.parseInt(cells.get(0)), ResultRow.fromCells(cells.subList(1, cells.size()))));
    }
    return rows;
  }
}
