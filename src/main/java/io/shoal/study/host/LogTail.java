package io.shoal.study.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The last lines of a server's log, appended to an error so the reason is on screen. */
public final class LogTail {
  private static final int LINES = 15;

  private LogTail() {}

  public static String of(Path log) {
    if (log == null || !Files.isRegularFile(log)) {
      return "";
    }
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      List<String> tail = lines.subList(Math.max(0, lines.size() - LINES), lines.size());
      return tail.isEmpty() ? "" : "; last lines of " + log + ":\n  " + String.join("\n  ", tail);
    } catch (IOException e) {
      return "";
    }
  }
}
