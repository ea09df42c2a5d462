package io.shoal.study.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The versions of everything a study ran, asked from the programs themselves. */
public final class ToolVersions {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  private ToolVersions() {}

  /** Program name to its version line; "unknown" where a program would not say. */
  public static Map<String, String> probe(Prerequisites.Tools tools, Path shoalJar, StartedProcesses processes,
      Path scratch) {
    Map<String, String> out = new LinkedHashMap<>();
    out.put("java", System.getProperty("java.vm.vendor") + " " + System.getProperty("java.runtime.version"));
    out.put("shoal", ask(List.of(JavaLauncher.path(), "-jar", shoalJar.toString(), "--version"),
        "shoal", processes, scratch));
    for (String binary : tools.paths().keySet()) {
      String flag = switch (binary) {
        case "dnsperf" -> "-h";
        case "unbound" -> "-V";
        case "knotc", "unbound-control", "rec_control", "kres-cache-gc", "unshare", "ip" -> null;
        default -> "--version";
      };
      if (flag != null) {
        out.put(binary, ask(List.of(tools.path(binary), flag), binary, processes, scratch));
      }
    }
    return out;
  }

  private static String ask(List<String> command, String name, StartedProcesses processes, Path scratch) {
    try {
      Files.createDirectories(scratch);
      String output = processes.run(command, scratch.resolve(name + "-version.txt"), LIMIT).output();
      return versionLine(output);
    } catch (StudyException | IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  /**
   * The line that names a version ("version 3.2.6", "Recursor 4.8.8"), else the first line with a
   * dotted number; without the syslog-style timestamp some programs put before it.
   */
  static String versionLine(String output) {
    for (String pattern : List.of("(?i).*\\b(version|recursor)\\s+v?\\d+\\.\\d+.*", ".*\\d+\\.\\d+.*")) {
      String line = firstMatching(output, pattern);
      if (line != null) {
        line = line.replaceFirst("^[A-Z][a-z]{2} +\\d+ \\d\\d:\\d\\d:\\d\\d ", "");
        return line.length() > 120 ? line.substring(0, 120) : line;
      }
    }
    return "unknown";
  }

  private static String firstMatching(String output, String pattern) {
    for (String line : output.split("\n")) {
      if (line.matches(pattern)) {
        return line.strip();
      }
    }
    return null;
  }
}
