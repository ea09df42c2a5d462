package io.shoal.policy;

import io.shoal.config.InvalidConfigException;
import io.shoal.files.FileBytes;
import io.shoal.files.FileLimits;
import io.shoal.files.TextLines;
import io.shoal.local.NameIndex;
import java.nio.file.Path;
import java.util.Set;

/**
 * Reads a domain list as blocklist projects publish them: one name per line, or hosts-format lines
 * ({@code 0.0.0.0 name [name...]}), {@code #} comments, a leading {@code *.} ignored (a name
 * matches itself and every name below it anyway). Parsed from the file's bytes without a String
 * per line, so a list of a million names loads in about a second.
 */
final class DomainListFile {
  static final String KEY = "shoal.policy.domain_lists";
  /** Names hosts-format lists carry for the machine itself, never meant as blocked domains. */
  private static final Set<String> HOST_NAMES = Set.of("localhost", "localhost.localdomain", "local", "broadcasthost",
      "ip6-localhost", "ip6-loopback", "ip6-localnet", "ip6-mcastprefix", "ip6-allnodes", "ip6-allrouters",
      "ip6-allhosts", "0.0.0.0");

  private DomainListFile() {}

  /**
   * Adds every name of {@code file} to {@code names} with {@code value}; a name already there keeps its value.
   *
   * @return names read (repeats included)
   * @throws InvalidConfigException naming the key, the file and the line of what is wrong
   */
  static int read(Path file, NameIndex.Builder names, int value, FileLimits limits) {
    byte[] text = FileBytes.read(KEY, file, limits.maxBytes());
    int nul = FileBytes.binaryLine(text);
    if (nul > 0) {
      throw new InvalidConfigException(KEY, file + " line " + nul + ": binary data (a NUL byte), not a list of names");
    }
    byte[] wire = new byte[256];
    int count = 0;
    TextLines lines = new TextLines(text);
    while (lines.next()) {
      int line = lines.number();
      int pos = lines.start();
      int eol = lines.end();
      int end = eol;
      for (int k = pos; k < eol; k++) {
        if (text[k] == '#') {
          end = k;
          break;
        }
      }
      // Words of the line: a bare name, or an address and names.
      int words = 0;
      int w = pos;
      while (true) {
        while (w < end && isSpace(text[w])) {
          w++;
        }
        if (w >= end) {
          break;
        }
        int wEnd = w;
        while (wEnd < end && !isSpace(text[wEnd])) {
          wEnd++;
        }
        words++;
        boolean address = words == 1 && looksLikeAddress(text, w, wEnd) && hasMoreWords(text, wEnd, end);
        if (!address && !hostName(text, w, wEnd)) {
          if (toWire(text, w, wEnd, wire) < 0) {
            // The word is not quoted: a list pointed at a secret file must not print it.
            throw new InvalidConfigException(KEY, file + " line " + line + ": word " + words
                + " is not a domain name (letters, digits, '-' and '_' in labels of at most 63, 255 bytes in all)");
          }
          if (++count > limits.maxEntries()) {
            throw new InvalidConfigException(KEY, file + " line " + line + ": more than " + limits.maxEntries()
                + " names, the bound set by " + FileLimits.SECTION + ".max_entries");
          }
          names.putIfAbsent(wire, 0, value);
        }
        w = wEnd;
      }
    }
    return count;
  }

  private static boolean isSpace(byte b) {
    return b == ' ' || b == '\t' || b == '\r';
  }

  private static boolean hasMoreWords(byte[] t, int from, int end) {
    for (int k = from; k < end; k++) {
      if (!isSpace(t[k])) {
        return true;
      }
    }
    return false;
  }

  /** An IPv4 literal or anything with a colon (IPv6): the first word of a hosts-format line. */
  private static boolean looksLikeAddress(byte[] t, int from, int to) {
    boolean digitsAndDots = true;
    for (int k = from; k < to; k++) {
      if (t[k] == ':') {
        return true;
      }
      digitsAndDots &= (t[k] >= '0' && t[k] <= '9') || t[k] == '.';
    }
    return digitsAndDots;
  }

  private static boolean hostName(byte[] t, int from, int to) {
    if (to - from > 21) {
      return false;
    }
    return HOST_NAMES.contains(new String(t, from, to - from, java.nio.charset.StandardCharsets.US_ASCII).toLowerCase());
  }

  /**
   * Writes the name spelled in {@code t[from, to)} (letters, digits, '-', '_'; a final dot
   * optional; a leading "*." dropped) to {@code out} in wire form; returns its length, or -1 when
   * it is not such a name.
   */
  static int toWire(byte[] t, int from, int to, byte[] out) {
    int start = from;
    if (to - start >= 2 && t[start] == '*' && t[start + 1] == '.') {
      start += 2;
    }
    int end = to;
    if (end > start && t[end - 1] == '.') {
      end--;
    }
    if (end <= start) {
      return -1;
    }
    int o = 0;
    int labelAt = 0;
    out[0] = 0;
    o = 1;
    for (int k = start; k < end; k++) {
      byte c = t[k];
      if (c == '.') {
        int len = o - labelAt - 1;
        if (len == 0) {
          return -1;
        }
        out[labelAt] = (byte) len;
        labelAt = o;
        out[o++] = 0;
      } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || (c >= 'A' && c <= 'Z')) {
        if (o - labelAt > 63 || o >= 254) {
          return -1;
        }
        out[o++] = c;
      } else {
        return -1;
      }
    }
    int len = o - labelAt - 1;
    if (len == 0) {
      return -1;
    }
    out[labelAt] = (byte) len;
    out[o++] = 0;
    return o;
  }
}
