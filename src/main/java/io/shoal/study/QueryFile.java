package io.shoal.study;

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

  /** Writes the file; the same recipe always writes the same bytes (SplittableRandom is specified). */
  public void write(Path file) throws IOException {
    String suffix = "." + (zone.endsWith(".") ? zone.substring(0, zone.length() - 1) : zone) + " A\n";
    SplittableRandom random = new SplittableRandom(seed);
    try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      for (int i = 0; i < lines; i++) {
        out.write('n');
        out.write(Integer.toString(random.nextInt(names)));
        out.write(suffix);
      }
    }
  }
}
