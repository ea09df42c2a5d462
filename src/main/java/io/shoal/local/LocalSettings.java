package io.shoal.local;

import io.shoal.files.FileLimits;
import io.shoal.files.ParserMessages;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Master;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * {@code shoal.local}: records written in the configuration, hosts files, and local zones. The
 * lists are checked here; the hosts files are read when the node starts (and again when they
 * change), within {@code limits} ({@code shoal.files}).
 */
public record LocalSettings(List<Record> records, List<Path> hostsFiles, List<Zone> zones, FileLimits limits) {
  /** Nothing local: every query goes on to the policy and the cache. */
  public static final LocalSettings NONE = new LocalSettings(List.of(), List.of(), List.of());

  /** The data, hosts files read within the default limits. */
  public LocalSettings(List<Record> records, List<Path> hostsFiles, List<Zone> zones) {
    this(records, hostsFiles, zones, FileLimits.DEFAULTS);
  }

  /** The record types {@code local.records} accepts. */
  static final List<Integer> TYPES = List.of(Type.A, Type.AAAA, Type.CNAME, Type.TXT, Type.PTR, Type.MX, Type.SRV);

  /** TTL of local data written without one, and of hosts-file records. */
  public static final long DEFAULT_TTL = 3600;

  /** A local zone: its apex and how it answers. */
  public record Zone(Name apex, ZoneType type) {}

  /** Whether there is anything to answer from. */
  public boolean configured() {
    return !records.isEmpty() || !hostsFiles.isEmpty() || !zones.isEmpty();
  }

  /**
   * Parses zone-file lines (absolute names; TTL and class optional).
   *
   * @throws IllegalArgumentException naming the line (1-based) and what is wrong
   */
  public static List<Record> records(List<String> lines) {
    List<Record> out = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.trim().startsWith("$")) {
        // $INCLUDE would read a file named in a record line, $GENERATE make any number of records.
        throw new IllegalArgumentException(where(i, line) + "a $ directive; give one record per line");
      }
      Record r;
      try (Master m = new Master(new ByteArrayInputStream(line.getBytes(StandardCharsets.UTF_8)), Name.root, DEFAULT_TTL)) {
        m.disableIncludes(true);
        m.expandGenerate(false);
        r = m.nextRecord();
        if (r != null && m.nextRecord() != null) {
          throw new IllegalArgumentException(where(i, line) + "one record per line");
        }
      } catch (IOException | RuntimeException e) {
        if (e instanceof IllegalArgumentException iae && iae.getMessage().startsWith("line ")) {
          throw iae;
        }
        throw new IllegalArgumentException(where(i, line) + ParserMessages.describe(e));
      }
      if (r == null) {
        throw new IllegalArgumentException(where(i, line) + "no record");
      }
      if (r.getDClass() != DClass.IN || !TYPES.contains(r.getType())) {
        throw new IllegalArgumentException(where(i, line) + "type " + Type.string(r.getType())
            + " is not served; allowed: A, AAAA, CNAME, TXT, PTR, MX, SRV (class IN)");
      }
      out.add(r);
    }
    return List.copyOf(out);
  }

  /**
   * Parses {@code "NAME TYPE"} lines.
   *
   * @throws IllegalArgumentException naming the line (1-based) and what is wrong
   */
  public static List<Zone> zones(List<String> lines) {
    List<Zone> out = new ArrayList<>();
    List<Name> seen = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      String[] words = line.trim().split("\\s+");
      ZoneType type = words.length == 2 ? ZoneType.named(words[1]) : null;
      if (type == null) {
        throw new IllegalArgumentException(where(i, line) + "expected \"NAME TYPE\" with TYPE one of "
            + String.join(", ", Arrays.stream(ZoneType.values()).map(ZoneType::configName).toList()));
      }
      Name apex;
      try {
        apex = Name.fromString(words[0], Name.root).canonicalize();
      } catch (TextParseException e) {
        throw new IllegalArgumentException(where(i, line) + "bad name: " + e.getMessage());
      }
      if (seen.contains(apex)) {
        throw new IllegalArgumentException(where(i, line) + apex + " is listed twice");
      }
      seen.add(apex);
      out.add(new Zone(apex, type));
    }
    return List.copyOf(out);
  }

  private static String where(int i, String line) {
    return "line " + (i + 1) + " (\"" + line + "\"): ";
  }
}
