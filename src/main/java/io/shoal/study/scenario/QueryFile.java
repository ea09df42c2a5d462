package io.shoal.study.scenario;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * A dnsperf query file: {@code lines} A queries for names {@code n0.<zone>} to
 * {@code n<names-1>.<zone>}, drawn uniformly with replacement from a seeded generator.
 * dnsperf replays its file in order; a fixed order over N names would bring each name back only
 * after all the others, so a cache holding half of them would never hit. Random draws give the
 * churn a cache of a given size really sees.
 */
public record QueryFile(String zone, int names, int lines, long seed) {

  /** Writes a file that asks each name once, {@code n0} first: the names a fill pass must cache. */
  public void writeEachNameOnce(Path file) throws IOException {
    String suffix = lineSuffix();
    try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      for (int i = 0; i < names; i++) {
        out.write("n" + i + suffix);
      }
    }
  }

  /** Writes the file; the same recipe always writes the same bytes (SplittableRandom is specified). */
  public void write(Path file) throws IOException {
    String suffix = lineSuffix();
    SplittableRandom random = new SplittableRandom(seed);
    try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      for (int i = 0; i < lines; i++) {
        out.write('n');
        out.write(Integer.toString(random.nextInt(names)));
        out.write(suffix);
      }
    }
  }

  /** What follows a name on each line: the zone without its trailing dot, and the type. */
  private String lineSuffix() {
    return "." + (zone.endsWith(".") ? zone.substring(0, zone.length() - 1) : zone) + " A\n";
  }
}
