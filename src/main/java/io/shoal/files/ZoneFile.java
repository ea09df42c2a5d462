package io.shoal.files;

import io.shoal.config.InvalidConfigException;
import io.shoal.files.ZoneDirectives.Include;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import org.xbill.DNS.Master;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;

/**
 * Reads a zone file (RFC 1035 master-file syntax) with dnsjava's parser, within {@link
 * FileLimits}. {@code $INCLUDE} is followed here rather than by the parser, which follows it
 * without a bound (a file that included itself overflowed the stack): depth and cycles are checked
 * and the included bytes count against the includer's. {@code $GENERATE} ranges are checked
 * before they expand. Each record is handed on with the file and line it came from.
 *
 * <p>Errors name the key, the file and the line and say in words of their own what is wrong: the
 * parser's messages quote the offending text, which must not reach a log or a reply (a zone file
 * pointed at /etc/shadow would print its root hash line); {@link ParserMessages} rewords them.
 * The directive lines are found and bounded by {@link ZoneDirectives} before the parser reads.
 */
public final class ZoneFile {
  /** Takes each record read, with the file and the 1-based line it ends on. */
  public interface Sink {
    void record(Record record, Path file, int line);
  }

  private static final SecureRandom RANDOM = new SecureRandom();

  private final String key;
  private final FileLimits limits;
  private final Sink sink;
  private final ZoneDirectives directives;
  private final Deque<Path> chain = new ArrayDeque<>();
  private long bytes;
  private long entries;

  private ZoneFile(String key, FileLimits limits, Sink sink) {
    this.key = key;
    this.limits = limits;
    this.sink = sink;
    byte[] n = new byte[8];
    RANDOM.nextBytes(n);
    this.directives = new ZoneDirectives(key, limits, HexFormat.of().formatHex(n));
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

  private void parse(byte[] text, Path file, String label, Name origin, long defaultTtl, String includedFrom) {
    int nul = FileBytes.binaryLine(text);
    if (nul > 0) {
      throw error(label, nul, includedFrom, "binary data (a NUL byte), not zone-file text");
    }
    List<Include> includes = new ArrayList<>();
    byte[] rewritten = directives.scan(text, label, origin, defaultTtl, includedFrom, includes);
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
      throw error(label, in.line(), includedFrom, ParserMessages.describe(e));
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

  private InvalidConfigException error(String label, int line, String includedFrom, String what) {
    return error(key, label, line, includedFrom, what);
  }

  /** The error of {@code what} at {@code line} of the text {@code label} names, for {@code key}. */
  static InvalidConfigException error(String key, String label, int line, String includedFrom, String what) {
    return new InvalidConfigException(key, label + " line " + line + includedFrom + ": " + what);
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
