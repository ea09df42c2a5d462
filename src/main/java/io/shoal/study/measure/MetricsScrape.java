package io.shoal.study.measure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeMap;

/** One Prometheus text-format scrape: the samples it holds, with their labels. */
public final class MetricsScrape {

  /** One sample line: metric name, labels, value. */
  public record Sample(String name, Map<String, String> labels, double value) {}

  private final List<Sample> samples;

  private MetricsScrape(List<Sample> samples) {
    this.samples = List.copyOf(samples);
  }

  /** Parses the text exposition format; comment lines and malformed lines are skipped. */
  public static MetricsScrape parse(String text) {
    List<Sample> out = new ArrayList<>();
    for (String raw : text.split("\n")) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Sample s = sample(line);
      if (s != null) {
        out.add(s);
      }
    }
    return new MetricsScrape(out);
  }

  public List<Sample> samples() {
    return samples;
  }

  /** The sum of every sample of {@code name} over all label sets; empty if there is none. */
  public OptionalDouble sum(String name) {
    boolean found = false;
    double total = 0;
    for (Sample s : samples) {
      if (s.name().equals(name)) {
        found = true;
        total += s.value();
      }
    }
    return found ? OptionalDouble.of(total) : OptionalDouble.empty();
  }

  /**
   * The cumulative buckets of histogram {@code name} (its {@code _bucket} samples), summed over
   * label sets: upper bound ({@code le}, +Inf included) to count, in ascending order.
   */
  public TreeMap<Double, Double> buckets(String name) {
    TreeMap<Double, Double> out = new TreeMap<>();
    for (Sample s : samples) {
      String le = s.labels().get("le");
      if (s.name().equals(name + "_bucket") && le != null) {
        out.merge(le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le), s.value(), Double::sum);
      }
    }
    return out;
  }

  /** The sum of the samples of {@code name} whose label {@code label} is {@code value}; 0 if none. */
  public double sum(String name, String label, String value) {
    double total = 0;
    for (Sample s : samples) {
      if (s.name().equals(name) && value.equals(s.labels().get(label))) {
        total += s.value();
      }
    }
    return total;
  }

  private static Sample sample(String line) {
    int brace = line.indexOf('{');
    int space;
    String name;
    Map<String, String> labels = new LinkedHashMap<>();
    if (brace >= 0 && brace < firstSpace(line)) {
      name = line.substring(0, brace);
      int end = labelsEnd(line, brace);
      if (end < 0) {
        return null;
      }
      if (!readLabels(line.substring(brace + 1, end), labels)) {
        return null;
      }
      space = end + 1;
    } else {
      space = firstSpace(line);
      if (space < 0) {
        return null;
      }
      name = line.substring(0, space);
    }
    String[] rest = line.substring(space).strip().split("\\s+");
    try {
      return new Sample(name, labels, parseValue(rest[0]));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static int firstSpace(String line) {
    int i = line.indexOf(' ');
    return i < 0 ? line.length() : i;
  }

  /** Index of the closing brace, skipping braces inside quoted label values. */
  private static int labelsEnd(String line, int open) {
    boolean quoted = false;
    for (int i = open + 1; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '\\' && quoted) {
        i++;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == '}' && !quoted) {
        return i;
      }
    }
    return -1;
  }

  private static boolean readLabels(String body, Map<String, String> labels) {
    int i = 0;
    while (i < body.length()) {
      int eq = body.indexOf('=', i);
      if (eq < 0 || eq + 1 >= body.length() || body.charAt(eq + 1) != '"') {
        return body.substring(i).isBlank();
      }
      String key = body.substring(i, eq).strip();
      StringBuilder value = new StringBuilder();
      int j = eq + 2;
      for (; j < body.length() && body.charAt(j) != '"'; j++) {
        char c = body.charAt(j);
        if (c == '\\' && j + 1 < body.length()) {
          char n = body.charAt(++j);
          value.append(n == 'n' ? '\n' : n);
        } else {
          value.append(c);
        }
      }
      labels.put(key, value.toString());
      i = j + 1;
      while (i < body.length() && (body.charAt(i) == ',' || body.charAt(i) == ' ')) {
        i++;
      }
    }
    return true;
  }

  private static double parseValue(String v) {
    return switch (v) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      case "NaN" -> Double.NaN;
      default -> Double.parseDouble(v);
    };
  }
}
