package io.shoal.files;

import io.shoal.config.InvalidConfigException;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.xbill.DNS.InvalidTTLException;
import org.xbill.DNS.Master;
import org.xbill.DNS.Name;
import org.xbill.DNS.NameTooLongException;
import org.xbill.DNS.Record;
import org.xbill.DNS.RelativeNameException;
import org.xbill.DNS.TTL;
import org.xbill.DNS.TextParseException;

/**
 * Reads a zone file (RFC 1035 master-file syntax) with dnsjava's parser, within {@link
 * FileLimits}. {@code $INCLUDE} is followed here rather than by the parser, which follows it
 * without a bound (a file that included itself overflowed the stack): depth and cycles are checked
 * and the included bytes count against the includer's. {@code $GENERATE} ranges are checked
 * before they expand. Each record is handed on with the file and line it came from.
 *
 * <p>Errors name the key, the file and the line and say in words of their own what is wrong: the
 * parser's messages quote the offending text, which must not reach a log or a reply (a zone file
 * pointed at /etc/shadow would print its root hash line).
 */
public final class ZoneFile {
  /** Takes each record read, with the file and the 1-based line it ends on. */
  public interface Sink {
    void record(Record record, Path file, int line);
  }

  private static final Pattern TOKENIZER_LINE = Pattern.compile("^<none>:(\\d+): (.*)$", Pattern.DOTALL);
  private static final Pattern QUOTED = Pattern.compile("'[^']*'");
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String key;
  private final FileLimits limits;
  private final Sink sink;
  /** Names the stand-in records for $INCLUDE lines, so no record a file holds can pass for one. */
  private final String nonce;
  private final Deque<Path> chain = new ArrayDeque<>();
  private long bytes;
  private long entries;

  private ZoneFile(String key, FileLimits limits, Sink sink) {
    this.key = key;
    this.limits = limits;
    this.sink = sink;
    byte[] n = new byte[8];
    RANDOM.nextBytes(n);
    this.nonce = HexFormat.of().formatHex(n);
  }

  /**
   * Reads {@code file} and the files it includes, giving every record to {@code sink}.
   *
   * @param origin the origin before any $ORIGIN; null: relative names are an error until one
   * @param defaultTtl the TTL of records without one before any $TTL; -1: none
   * @throws InvalidConfigException naming {@code key}, the file and the line, and what is wrong
   */
  public static void read(String key, Path file, Name origin, long defaultTtl, FileLimits limits, Sink sink) {
    new ZoneFile(key, limits, sink).file(file, origin, defaultTtl, null);
  }

  /** {@link #read(String, Path, Name, long, FileLimits, Sink)} of text that is not a file ({@code source} names it); no $INCLUDE. */
  public static void read(String key, String source, byte[] text, Name origin, long defaultTtl, FileLimits limits,
      Sink sink) {
    new ZoneFile(key, limits, sink).parse(text, null, source, origin, defaultTtl, "");
  }

  private void file(Path file, Name origin, long defaultTtl, String includedFrom) {
    byte[] text = FileBytes.read(key, file, Math.max(0, limits.maxBytes() - bytes));
    bytes += text.length;
    Path real;
    try {
      real = file.toRealPath();
    } catch (IOException e) {
      real = file.toAbsolutePath().normalize();
    }
    chain.push(real);
    try {
      parse(text, file, file.toString(), origin, defaultTtl, includedFrom == null ? "" : " (" + includedFrom + ")");
    } finally {
      chain.pop();
    }
  }

  /** One $INCLUDE line: where it is, what it names, the origin the included file starts with, and its stand-in. */
  private record Include(int line, String path, Name origin, long defaultTtl, Name standIn) {}

  private void parse(byte[] text, Path file, String label, Name origin, long defaultTtl, String includedFrom) {
    int nul = FileBytes.binaryLine(text);
    if (nul > 0) {
      throw error(label, nul, includedFrom, "binary data (a NUL byte), not zone-file text");
    }
    List<Include> includes = new ArrayList<>();
    byte[] rewritten = directives(text, label, origin, defaultTtl, includedFrom, includes);
    boolean[] done = new boolean[includes.size()];
    Lines in = new Lines(rewritten);
    try (Master master = new Master(new BufferedInputStream(in, 1), origin, defaultTtl)) {
      // An $INCLUDE the scan did not rewrite must not be followed by the parser.
      master.disableIncludes(true);
      for (Record r = master.nextRecord(); r != null; r = master.nextRecord()) {
        int line = in.line();
        int i = includeIndex(r, includes);
        if (i >= 0) {
          if (done[i]) {
            throw error(label, line, includedFrom, "a record without an owner name right after an $INCLUDE");
          }
          done[i] = true;
          include(includes.get(i), file, label);
          continue;
        }
        if (++entries > limits.maxEntries()) {
          throw error(label, line, includedFrom, "more than " + limits.maxEntries() + " records (with those of "
              + "$INCLUDE and $GENERATE), the bound set by " + FileLimits.SECTION + ".max_entries");
        }
        sink.record(r, file, line);
      }
    } catch (InvalidConfigException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      // The line of the last byte the parser took: the parser's own count is one past when it
      // failed on reading a line's end (a record cut short).
      throw error(label, in.line(), includedFrom, describe(e));
    }
  }

  private int includeIndex(Record r, List<Include> includes) {
    if (includes.isEmpty()) {
      return -1;
    }
    for (int i = 0; i < includes.size(); i++) {
      if (includes.get(i).standIn().equals(r.getName())) {
        return i;
      }
    }
    return -1;
  }

  private void include(Include inc, Path includer, String label) {
    String where = "included from " + label + " line " + inc.line();
    if (includer == null) {
      throw error(label, inc.line(), "", "$INCLUDE is not allowed here");
    }
    if (chain.size() > limits.maxIncludeDepth()) {
      throw error(label, inc.line(), "", "$INCLUDE nested deeper than " + limits.maxIncludeDepth()
          + ", the bound set by " + FileLimits.SECTION + ".max_include_depth");
    }
    Path child = Path.of(inc.path());
    if (!child.isAbsolute()) {
      Path parent = includer.toAbsolutePath().getParent();
      child = parent == null ? child : parent.resolve(child);
    }
    Path real;
    try {
      real = child.toRealPath();
    } catch (IOException e) {
      real = null; // reading it says why
    }
    if (real != null && chain.contains(real)) {
      throw error(label, inc.line(), "", "$INCLUDE of " + child + " makes a cycle: it includes itself,"
          + " directly or through the files it includes");
    }
    file(child, inc.origin(), inc.defaultTtl(), where);
  }

  /**
   * Finds the directive lines ($ORIGIN, $TTL, $INCLUDE, $GENERATE) outside parentheses: follows
   * the origin and default TTL, checks $GENERATE ranges, and replaces each $INCLUDE line by a
   * stand-in record on one line (so line numbers stay), whose turn in the parser's output says
   * when to read the included file.
   */
  private byte[] directives(byte[] text, String label, Name origin, long defaultTtl, String includedFrom,
      List<Include> includes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(text.length + 16);
    Name currentOrigin = origin;
    long ttl = defaultTtl;
    int parens = 0;
    int line = 0;
    int pos = 0;
    while (pos < text.length) {
      line++;
      int eol = pos;
      while (eol < text.length && text[eol] != '\n') {
        eol++;
      }
      int next = Math.min(eol + 1, text.length);
      if (parens == 0 && text[pos] == '$') {
        List<String> words = words(text, pos, eol);
        String directive = words.get(0).toUpperCase(Locale.ROOT);
        if (directive.equals("$ORIGIN") && words.size() >= 2) {
          currentOrigin = name(words.get(1), label, line, includedFrom, "$ORIGIN");
        } else if (directive.equals("$TTL") && words.size() >= 2) {
          try {
            ttl = TTL.parseTTL(words.get(1));
          } catch (RuntimeException e) {
            throw error(label, line, includedFrom, "$TTL is not a valid TTL (0 to 2147483647 seconds, or with "
                + "units such as 1h30m)");
          }
        } else if (directive.equals("$INCLUDE")) {
          if (words.size() < 2) {
            throw error(label, line, includedFrom, "$INCLUDE without a file name");
          }
          if (limits.maxIncludeDepth() == 0) {
            throw error(label, line, includedFrom, "$INCLUDE is turned off (" + FileLimits.SECTION
                + ".max_include_depth = 0)");
          }
          Name childOrigin = words.size() >= 3 && !words.get(2).startsWith(";")
              ? name(words.get(2), label, line, includedFrom, "the $INCLUDE origin") : currentOrigin;
          Name standIn = Name.fromConstantString("include-" + includes.size() + "." + nonce + ".shoal.invalid.");
          includes.add(new Include(line, words.get(1), childOrigin, ttl, standIn));
          out.writeBytes((standIn + " 0 IN TXT \"\"").getBytes(StandardCharsets.US_ASCII));
          if (eol < text.length) {
            out.write('\n');
          }
          pos = next;
          continue;
        } else if (directive.equals("$GENERATE") && words.size() >= 2) {
          long count = generated(words.get(1));
          if (count > limits.maxGenerate()) {
            throw error(label, line, includedFrom, "$GENERATE of " + count + " records, more than "
                + limits.maxGenerate() + ", the bound set by " + FileLimits.SECTION + ".max_generate");
          }
        }
      }
      parens = parens(text, pos, eol, parens);
      out.write(text, pos, next - pos);
      pos = next;
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
      throw error(label, line, includedFrom, what + " is not a valid domain name");
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

  private InvalidConfigException error(String label, int line, String includedFrom, String what) {
    return new InvalidConfigException(key, label + " line " + line + includedFrom + ": " + what);
  }

  /** What {@code e}, thrown by dnsjava's zone-file parser, says is wrong, in words that quote nothing of the text. */
  public static String describe(Throwable e) {
    String m = e.getMessage() == null ? "" : e.getMessage();
    Matcher at = TOKENIZER_LINE.matcher(m);
    return describe(e, at.matches() ? at.group(2) : m);
  }

  /**
   * What the parser found wrong, in words that quote nothing of the file: its own messages are
   * matched by their fixed part; the text they quote is only looked at (is it a number?).
   */
  static String describe(Throwable e, String message) {
    if (e instanceof RelativeNameException) {
      return "a relative name (such as @) with no $ORIGIN before it: start the file with $ORIGIN, or end every"
          + " name with a dot";
    }
    if (e instanceof NameTooLongException || message.contains("Name too long")) {
      return "a name longer than 255 bytes";
    }
    if (e instanceof InvalidTTLException) {
      return "a TTL out of range (0 to 2147483647 seconds)";
    }
    Matcher quoted = QUOTED.matcher(message);
    String first = quoted.find() ? quoted.group() : "''";
    String token = first.substring(1, first.length() - 1);
    if (message.startsWith("Invalid type")) {
      return !token.isEmpty() && Character.isDigit(token.charAt(0))
          ? "not a valid TTL (0 to 2147483647 seconds, or with units such as 1h30m)"
          : "an unknown record type or class";
    }
    String[][] known = {
      {"missing TTL", "no TTL: give the record one, or put $TTL before it"},
      {"no owner", "a line that starts with a blank (no owner name) before any record with one"},
      {"Invalid directive", "an unknown $ directive (known: $ORIGIN, $TTL, $INCLUDE, $GENERATE)"},
      {"$INCLUDE encountered", "$INCLUDE where it cannot be followed"},
      {"Invalid $GENERATE range", "a $GENERATE range that is not START-END[/STEP]"},
      {"$GENERATE does not support", "a $GENERATE of a record type it cannot make"},
      {"Parsing $GENERATE", "a $GENERATE template that makes no valid record"},
      {"unbalanced parentheses", "unbalanced parentheses"},
      {"invalid close parenthesis", "unbalanced parentheses"},
      {"EOF in quoted string", "a quoted string that does not end"},
      {"newline in quoted string", "a quoted string that does not end on its line"},
      {"unterminated escape", "a backslash at the end of the file"},
      {"unexpected tokens at end of record", "more fields than the record type takes"},
      {"expected a string", "a record cut short: its type or data is missing"},
      {"expected an identifier", "a record cut short: its type or data is missing"},
      {"Invalid address", "not a valid address"},
      {"expected", null},
    };
    for (String[] k : known) {
      if (message.startsWith(k[0])) {
        if (k[1] != null) {
          return k[1];
        }
        // "expected an integer", "expected a TTL value", ...: the fixed phrase before any quote.
        return QUOTED.matcher(message).replaceAll("").split(":")[0].trim();
      }
    }
    // Name errors read "'TEXT': what"; other messages keep their fixed first part.
    String unquoted = QUOTED.matcher(message).replaceAll("").trim();
    String[] parts = unquoted.split(":\\s*");
    String words = parts.length == 0 ? "" : parts[0].isEmpty() && parts.length > 1 ? parts[1] : parts[0];
    words = words.replaceAll("[^A-Za-z0-9 $,()-]", "").trim();
    if (words.isEmpty() || words.length() > 80) {
      return "not a valid record (" + e.getClass().getSimpleName() + ")";
    }
    return "not a valid record: " + words;
  }

  /**
   * The text handed to the parser (one byte at a time, through a one-byte buffer), counting the
   * lines it has taken, so a record's line is known as the parser returns it.
   */
  private static final class Lines extends ByteArrayInputStream {
    private int newlines;
    private int last = -1;

    Lines(byte[] text) {
      super(text);
    }

    @Override
    public synchronized int read() {
      int c = super.read();
      if (c >= 0) {
        took(c);
      }
      return c;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) {
      int n = super.read(b, off, len);
      for (int i = 0; i < n; i++) {
        took(b[off + i]);
      }
      return n;
    }

    private void took(int c) {
      if (last == '\n') {
        newlines++;
      }
      last = c;
    }

    /** The 1-based line of the last byte the parser took (the line a record just read ends on). */
    synchronized int line() {
      return newlines + 1;
    }
  }
}
