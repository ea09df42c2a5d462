package io.shoal.admin;

import java.io.IOException;
import java.io.Reader;

/**
 * The lines of a cache dump being read, each cut at {@link AnswerDump#MAX_LINE} characters (the
 * rest skipped), so no line fills the heap; the text is read a buffer at a time.
 */
final class DumpLines {
  private final Reader in;
  private final char[] buf = new char[1 << 16];
  private int at;
  private int end;
  private final StringBuilder line = new StringBuilder(256);
  /** Whether the line {@link #next} returned last was longer than it returned. */
  boolean tooLong;

  DumpLines(Reader in) {
    this.in = in;
  }

  /** The next line without its end (LF or CRLF), or null at the end of the text. */
  String next() throws IOException {
    line.setLength(0);
    tooLong = false;
    boolean any = false;
    while (true) {
      if (at == end) {
        end = in.read(buf, 0, buf.length);
        at = 0;
        if (end <= 0) {
          end = 0;
          return any ? finish() : null;
        }
      }
      any = true;
      int from = at;
      while (at < end && buf[at] != '\n') {
        at++;
      }
      int room = AnswerDump.MAX_LINE - line.length();
      int n = at - from;
      if (n > room) {
        tooLong = true;
        n = room;
      }
      line.append(buf, from, n);
      if (at < end) {
        at++;
        return finish();
      }
    }
  }

  private String finish() {
    int n = line.length();
    if (n > 0 && line.charAt(n - 1) == '\r') {
      line.setLength(n - 1);
    }
    return line.toString();
  }
}
