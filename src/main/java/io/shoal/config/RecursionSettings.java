package io.shoal.config;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.Master;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.TextParseException;

/**
 * How a {@code recursive} or {@code stub} upstream group resolves: where the walk starts (the
 * root hints), which authorities it may ask, and the limits each resolution works within.
 *
 * @param rootHints the root's NS records and their A/AAAA records
 * @param hintsSource where the hints came from, for logs ("the IANA root hints in the jar" or a path)
 * @param queryLoopback whether authorities on 127.0.0.0/8 and ::1 may be asked
 * @param qnameMinimisation whether authorities are asked one label below their zone at a time (RFC 9156, relaxed)
 * @param maxQueries authority queries one client query may cause, sub-resolutions included
 * @param maxNsNames NS names without glue one referral may have resolved
 * @param maxReferrals referrals one client query may follow, sub-resolutions included
 * @param maxCnameLinks CNAME and DNAME links one answer may follow
 * @param maxGluelessDepth how deep name-server address look-ups may nest (an NS name's NS name's ...)
 * @param zoneCuts delegations and name-server addresses kept at most
 * @param servers authority addresses whose round-trip times and failures are kept at most
 * @param deadline how long one resolution may take, sub-resolutions included
 */
public record RecursionSettings(
    List<Record> rootHints, String hintsSource, boolean queryLoopback, boolean qnameMinimisation, int maxQueries,
    int maxNsNames, int maxReferrals, int maxCnameLinks, int maxGluelessDepth, int zoneCuts, int servers,
    Duration deadline) {

  static final String JAR_HINTS = "the IANA root hints in the jar";

  /** The settings with every limit at its default and the jar's root hints. */
  public static RecursionSettings defaults(boolean queryLoopback) {
    return new RecursionSettings(jarHints("root_hints"), JAR_HINTS, queryLoopback, true, 64, 3, 30, 11, 4, 10_000,
        10_000, Duration.ofSeconds(8));
  }

  /** Reads the recursion keys of group section {@code s}, each optional. */
  static RecursionSettings read(Section s) {
    RecursionSettings d = defaults(false);
    String file = s.has("root_hints") ? s.string("root_hints") : "";
    List<Record> hints = file.isEmpty() ? d.rootHints() : fileHints(Path.of(file), s.key("root_hints"));
    return new RecursionSettings(
        hints,
        file.isEmpty() ? JAR_HINTS : file,
        s.has("query_loopback") && s.bool("query_loopback"),
        !s.has("qname_minimisation") || s.bool("qname_minimisation"),
        s.has("max_queries") ? (int) s.integer("max_queries", 4, 1000) : d.maxQueries(),
        s.has("max_ns_names") ? (int) s.integer("max_ns_names", 1, 20) : d.maxNsNames(),
        s.has("max_referrals") ? (int) s.integer("max_referrals", 2, 100) : d.maxReferrals(),
        s.has("max_cname_links") ? (int) s.integer("max_cname_links", 0, 30) : d.maxCnameLinks(),
        s.has("max_glueless_depth") ? (int) s.integer("max_glueless_depth", 1, 10) : d.maxGluelessDepth(),
        s.has("zone_cuts") ? (int) s.integer("zone_cuts", 100, 10_000_000) : d.zoneCuts(),
        s.has("servers_tracked") ? (int) s.integer("servers_tracked", 100, 10_000_000) : d.servers(),
        s.has("deadline") ? s.duration("deadline", Duration.ofMillis(100), Duration.ofSeconds(60)) : d.deadline());
  }

  private static List<Record> jarHints(String key) {
    try (InputStream in = RecursionSettings.class.getResourceAsStream("/recursion/root.hints")) {
      if (in == null) {
        throw new InvalidConfigException(key, JAR_HINTS + " are missing");
      }
      return hints(new Master(in, Name.root, 3600000), JAR_HINTS, key);
    } catch (IOException e) {
      throw new InvalidConfigException(key, "cannot read " + JAR_HINTS + ": " + e.getMessage());
    }
  }

  private static List<Record> fileHints(Path file, String key) {
    if (!Files.isReadable(file)) {
      throw new InvalidConfigException(key, "cannot read " + file + (Files.exists(file) ? "" : ": no such file"));
    }
    try {
      return hints(new Master(file.toString(), Name.root, 3600000), file.toString(), key);
    } catch (NoSuchFileException e) {
      throw new InvalidConfigException(key, "cannot read " + file + ": no such file");
    } catch (IOException e) {
      throw new InvalidConfigException(key, "cannot read " + file + ": " + e.getMessage());
    }
  }

  /**
   * The root NS records of a hints file and the addresses of their names; a syntax error is
   * reported with the file and line (dnsjava's "FILE:LINE: ..."), a file naming no root server
   * with an address is refused.
   */
  private static List<Record> hints(Master master, String source, String key) throws IOException {
    List<Record> records = new ArrayList<>();
    try (master) {
      for (Record r = master.nextRecord(); r != null; r = master.nextRecord()) {
        if (r instanceof NSRecord ns) {
          if (!ns.getName().equals(Name.root)) {
            throw new InvalidConfigException(key, source + ": NS record for " + ns.getName()
                + "; root hints hold NS records of the root (.) only");
          }
          records.add(r);
        } else if (r instanceof ARecord || r instanceof AAAARecord) {
          records.add(r);
        } else {
          throw new InvalidConfigException(key, source + ": " + r + " is not an NS, A or AAAA record");
        }
      }
    } catch (TextParseException e) {
      throw new InvalidConfigException(key, "cannot parse " + describe(e.getMessage(), source));
    }
    boolean usable = records.stream().filter(r -> r instanceof NSRecord).anyMatch(ns ->
        records.stream().anyMatch(a -> !(a instanceof NSRecord) && a.getName().equals(((NSRecord) ns).getTarget())));
    if (!usable) {
      throw new InvalidConfigException(key, source + " names no root server with an address (NS records for . and "
          + "the A or AAAA records of their names)");
    }
    return List.copyOf(records);
  }

  /** dnsjava says "<none>:LINE: ..." for a stream and "NAME:LINE: ..." for a file; the operator gets the path. */
  private static String describe(String message, String source) {
    String m = message == null ? "" : message;
    if (m.startsWith("<none>")) {
      return source + m.substring("<none>".length());
    }
    // dnsjava names the file by its last component; the operator gets the path they configured.
    String base = Path.of(source).getFileName().toString();
    return m.startsWith(base + ":") ? source + m.substring(base.length()) : m;
  }

  /** The addresses the hints give, for checks. */
  public List<InetAddress> hintAddresses() {
    List<InetAddress> out = new ArrayList<>();
    for (Record r : rootHints) {
      if (r instanceof ARecord a) {
        out.add(a.getAddress());
      } else if (r instanceof AAAARecord a) {
        out.add(a.getAddress());
      }
    }
    return out;
  }
}
