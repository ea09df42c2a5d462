package io.shoal.study.scenario;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

/**
 * A domain list the study writes into its run directory for the members that set
 * {@code policy_list = ACTION} ({@code recipe.policy_list}): {@code names} distinct names shaped
 * like a blocklist's, {@code word.word123456.tld} with two thirds under a host label, under a few
 * real top-level domains and never under the study's zone, so no query of the load matches one.
 * What a list costs a query it does not match is what such a run measures.
 *
 * @param quickNames how many names a --quick run writes (a smoke run need not load a million)
 */
public record PolicyList(int names, int quickNames, long seed) {
  /** The file's name in the run directory. */
  public static final String FILE = "policy-list.txt";

  private static final String[] TLDS = {"com", "net", "org", "io", "xyz", "info", "co.uk", "de"};

  /** The names a run writes: all of them, or the quick count for a --quick run. */
  public int count(boolean quick) {
    return quick ? quickNames : names;
  }

  /**
   * Writes {@code count} names, one a line after a comment line; the same seed and count always
   * write the same bytes ({@link Random}'s sequence is specified). Returns the first and the last
   * name written, which the study asks to see the whole list applied.
   */
  public static List<String> write(Path file, int count, long seed) throws IOException {
    Random random = new Random(seed);
    String first = null;
    StringBuilder b = new StringBuilder(40);
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      w.write("# generated blocklist\n");
      for (int i = 0; i < count; i++) {
        b.setLength(0);
        if (random.nextInt(3) > 0) {
          b.append(word(random, 3, 8)).append('.');
        }
        b.append(word(random, 5, 12)).append(i).append('.').append(TLDS[random.nextInt(TLDS.length)]);
        if (first == null) {
          first = b.toString();
        }
        w.append(b).append('\n');
      }
    }
    return first == null ? List.of() : List.of(first, b.toString());
  }

  private static String word(Random random, int min, int max) {
    int len = min + random.nextInt(max - min + 1);
    char[] c = new char[len];
    for (int i = 0; i < len; i++) {
      c[i] = (char) ('a' + random.nextInt(26));
    }
    return new String(c);
  }
}
