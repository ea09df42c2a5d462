package io.shoal.study.measure;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The response codes of a dnsperf run, from its statistics block
 * ({@code Response codes: NOERROR 4990 (99.80%), SERVFAIL 10 (0.20%)}), in the order dnsperf prints
 * them; empty when nothing was answered.
 */
public final class ResponseCodes {
  private static final Pattern LINE = Pattern.compile("Response codes:([^\\n]*)");
  private static final Pattern CODE = Pattern.compile("([A-Z0-9]+) (\\d+) \\(");

  private ResponseCodes() {
  }

  /** The count of each response code in dnsperf's output; fails if the output has no statistics block. */
  public static Map<String, Long> parse(String dnsperfOutput) {
    Matcher line = LINE.matcher(dnsperfOutput);
    if (!line.find()) {
      throw new IllegalArgumentException("dnsperf output without a 'Response codes:' line");
    }
    Map<String, Long> counts = new LinkedHashMap<>();
    Matcher c = CODE.matcher(line.group(1));
    while (c.find()) {
      counts.merge(c.group(1), Long.parseLong(c.group(2)), Long::sum);
    }
    return counts;
  }

  /** Answers with {@code code} (e.g. SERVFAIL) in {@code counts}; 0 when there were none. */
  public static long of(Map<String, Long> counts, String code) {
    return counts.getOrDefault(code, 0L);
  }
}
