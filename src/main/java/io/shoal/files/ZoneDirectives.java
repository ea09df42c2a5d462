package io.shoal.files;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.xbill.DNS.Name;
import org.xbill.DNS.TTL;
import org.xbill.DNS.TextParseException;

/**
 * The directive lines of a zone file ($ORIGIN, $TTL, $INCLUDE, $GENERATE), found before dnsjava's
 * parser reads the text, so a {@link ZoneFile} can bound them: $GENERATE ranges are checked
 * before they expand, and each $INCLUDE line is replaced by a stand-in record whose turn in the
 * parser's output says when to read the included file.
 */
final class ZoneDirectives {

  /** One $INCLUDE line: where it is, what it names, the origin the included file starts with, and its stand-in. */
  record Include(int line, String path, Name origin, long defaultTtl, Name standIn) {}

  private final String key;
  private final FileLimits limits;
  /** Names the stand-in records for $INCLUDE lines, so no record a file holds can pass for one. */
  private final String nonce;

  ZoneDirectives(String key, FileLimits limits, String nonce) {
    this.key = key;
    this.limits = limits;
    this.nonce = nonce;
  }

  /**
   * Finds the directive lines ($ORIGIN, $TTL, $INCLUDE, $GENERATE) outside parentheses: follows
   * the origin and default TTL, checks $GENERATE ranges, and replaces each $INCLUDE line by a
   * stand-in record on one line (so line numbers stay), whose turn in the parser's output says
   * when to read the included file.
   */
  byte[] scan(byte[] text, String label, Name origin, long defaultTtl, String includedFrom,
      List<Include> includes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(text.length + 16);
    Name currentOrigin = origin;
    long ttl = defaultTtl;
    int parens = 0;
    TextLines lines = new TextLines(text);
    while (lines.next()) {
      int line = lines.number();
      int pos = lines.start();
      int eol = lines.end();
      int next = lines.following();
      if (parens == 0 && text[pos] == '$') {
        List<String> words = words(text, pos, eol);
        String directive = words.get(0).toUpperCase(Locale.ROOT);
        if (directive.equals("$ORIGIN") && words.size() >= 2) {
          currentOrigin = name(words.get(1), label, line, includedFrom, "$ORIGIN");
        } else if (directive.equals("$TTL") && words.size() >= 2) {
          try {
            ttl = TTL.parseTTL(words.get(1));
          } catch (RuntimeException e) {
            throw ZoneFile.error(key, label, line, includedFrom, "$TTL is not a valid TTL (0 to 2147483647 seconds, or with "
                + "units such as 1h30m)");
          }
        } else if (directive.equals("$INCLUDE")) {
          if (words.size() < 2) {
            throw ZoneFile.error(key, label, line, includedFrom, "$INCLUDE without a file name");
          }
          if (limits.maxIncludeDepth() == 0) {
            throw ZoneFile.error(key, label, line, includedFrom, "$INCLUDE is turned off (" + FileLimits.SECTION
                + ".max_include_depth = 0)");
          }
          Name childOrigin = words.size() >= 3 && !words.get(2).startsWith(";")
              ? name(words.get(2), label, line, includedFrom, "the $INCLUDE origin") : currentOrigin;
          Name standIn = Name.fromConstantString("include-" + includes.size() + "." + nonce + ".shoal.invalid.");
          includes.add(new Include(line, words.get(1), childOrigin, ttl, standIn));
          out.writeBytes((standIn + " 0 IN TXT \"\"").getBytes(StandardCharsets.US_ASCII));
          if (lines.endsWithNewline()) {
            out.write('\n');
          }
          continue;
        } else if (directive.equals("$GENERATE") && words.size() >= 2) {
          long count = generated(words.get(1));
          if (count > limits.maxGenerate()) {
            throw ZoneFile.error(key, label, line, includedFrom, "$GENERATE of " + count + " records, more than "
                + limits.maxGenerate() + ", the bound set by " + FileLimits.SECTION + ".max_generate");
          }
        }
      }
      parens = parens(text, pos, eol, parens);
      out.write(text, pos, next - pos);
    }
    return out.toByteArray();
  }

  /** Records a $GENERATE range START-END[/STEP] makes; 0 when it is malformed (the parser says so). */
  private static long generated(String range) {
    int dash = range.indexOf('-');
    if (dash <= 0) {
      return 0;
    }
    int slash = range.indexOf('/', dash);
    try {
      long start = Long.parseLong(range.substring(0, dash));
      long end = Long.parseLong(range.substring(dash + 1, slash < 0 ? range.length() : slash));
      long step = slash < 0 ? 1 : Long.parseLong(range.substring(slash + 1));
      if (start < 0 || end < start || step <= 0) {
        return 0;
      }
      return (end - start) / step + 1;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private Name name(String word, String label, int line, String includedFrom, String what) {
    try {
      return Name.fromString(word, Name.root);
    } catch (TextParseException e) {
      throw ZoneFile.error(key, label, line, includedFrom, what + " is not a valid domain name");
    }
  }

  /** The words of a line up to a comment; a double-quoted word loses its quotes. */
  private static List<String> words(byte[] t, int from, int to) {
    List<String> words = new ArrayList<>();
    int k = from;
    while (k < to) {
      while (k < to && (t[k] == ' ' || t[k] == '\t' || t[k] == '\r')) {
        k++;
      }
      if (k >= to || t[k] == ';') {
        break;
      }
      int start = k;
      if (t[k] == '"') {
        start = ++k;
        while (k < to && t[k] != '"') {
          k++;
        }
        words.add(new String(t, start, k - start, StandardCharsets.UTF_8));
        k++;
      } else {
        while (k < to && t[k] != ' ' && t[k] != '\t' && t[k] != '\r' && t[k] != ';') {
          k++;
        }
        words.add(new String(t, start, k - start, StandardCharsets.UTF_8));
      }
    }
    return words;
  }

  /** The parenthesis depth after a line, quotes, escapes and comments followed as the parser does. */
  private static int parens(byte[] t, int from, int to, int depth) {
    boolean quoted = false;
    for (int k = from; k < to; k++) {
      byte c = t[k];
      if (c == '\\') {
        k++;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (!quoted && c == ';') {
        break;
      } else if (!quoted && c == '(') {
        depth++;
      } else if (!quoted && c == ')' && depth > 0) {
        depth--;
      }
    }
    return depth;
  }
}
