package io.shoal.study.report;

import java.util.ArrayList;
import java.util.List;

/** One run of a scenario with several rounds: {@code row} measured in round {@code round} (from 1). */
public record RoundRow(int round, ResultRow row) {

  /** The header of rounds.csv: the round, then the columns of results.csv. */
  public static final List<String> COLUMNS = columns();

  private static List<String> columns() {
    List<String> c = new ArrayList<>();
    c.add("round");
    c.addAll(ResultRow.COLUMNS);
    return List.copyOf(c);
  }

  /** This run's cells in {@link #COLUMNS} order. */
  public List<String> cells() {
    List<String> c = new ArrayList<>();
    c.add(Integer.toString(round));
    c.addAll(row.cells());
    return c;
  }

  /** Reads a run back from its cells, the inverse of {@link #cells()}. */
  public static RoundRow fromCells(List<String> c) {
    if (c.isEmpty()) {
      throw new IllegalArgumentException("a rounds.csv row has no cells");
    }
    return new RoundRow(Integer.parseInt(c.get(0)), ResultRow.fromCells(c.subList(1, c.size())));
  }
}
