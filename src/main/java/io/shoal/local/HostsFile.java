package io.shoal.local;

import io.shoal.config.InvalidConfigException;
import io.shoal.files.FileBytes;
import io.shoal.files.FileLimits;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Name;
import org.xbill.DNS.PTRRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.ReverseMap;
import org.xbill.DNS.TextParseException;

/** Reads a file in /etc/hosts format into A, AAAA and (from each line's first name) PTR records. */
final class HostsFile {
  static final String KEY = "shoal.local.hosts_files";
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");

  private HostsFile() {}

  /**
   * Adds the file's records to {@code out}.
   *
   * @throws InvalidConfigException naming the key, the file and the line when the file cannot be
   *     read or a line is not "ADDRESS NAME [NAME...]"
   */
  static void read(Path file, List<Record> out, FileLimits limits) {
    byte[] bytes = FileBytes.read(KEY, file, limits.maxBytes());
    int nul = FileBytes.binaryLine(bytes);
    if (nul > 0) {
      throw new InvalidConfigException(KEY, file + " line " + nul + ": binary data (a NUL byte), not a hosts file");
    }
    String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
    long entries = 0;
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i];
      int hash = line.indexOf('#');
      String[] words = (hash >= 0 ? line.substring(0, hash) : line).trim().split("\\s+");
      if (words.length == 1 && words[0].isEmpty()) {
        continue;
      }
      // Messages never quote the line: a hosts file pointed at a secret file must not print it.
      String where = file + " line " + (i + 1) + ": ";
      if (words.length < 2) {
        throw new InvalidConfigException(KEY, where + "expected \"ADDRESS NAME [NAME...]\"");
      }
      entries += words.length - 1;
      if (entries > limits.maxEntries()) {
        throw new InvalidConfigException(KEY, where + "more than " + limits.maxEntries()
            + " names, the bound set by " + FileLimits.SECTION + ".max_entries");
      }
      InetAddress address = address(words[0]);
      if (address == null) {
        throw new InvalidConfigException(KEY, where + "the first word is not an IPv4 or IPv6 address");
      }
      Name first = null;
      for (int w = 1; w < words.length; w++) {
        Name name;
        try {
          name = Name.fromString(words[w], Name.root).canonicalize();
        } catch (TextParseException e) {
          throw new InvalidConfigException(KEY, where + "word " + (w + 1) + " is not a valid domain name");
        }
        out.add(address.getAddress().length == 4
            ? new ARecord(name, DClass.IN, LocalSettings.DEFAULT_TTL, address)
            : new AAAARecord(name, DClass.IN, LocalSettings.DEFAULT_TTL, address));
        if (first == null) {
          first = name;
        }
      }
      // 0.0.0.0 and :: are what blocking hosts files point names at: no one's address to name.
      if (!address.isAnyLocalAddress()) {
        out.add(new PTRRecord(ReverseMap.fromAddress(address), DClass.IN, LocalSettings.DEFAULT_TTL, first));
      }
    }
  }

  /** The address literal {@code word} (an IPv6 zone suffix dropped), or null; never a name look-up. */
  private static InetAddress address(String word) {
    int zone = word.indexOf('%');
    String literal = zone >= 0 ? word.substring(0, zone) : word;
    if (!IPV4.matcher(literal).matches() && !IPV6.matcher(literal).matches()) {
      return null;
    }
    try {
      return InetAddress.getByName(literal);
    } catch (UnknownHostException e) {
      return null;
    }
  }
}
