package io.shoal.local;

import io.shoal.config.InvalidConfigException;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.Rcode;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * One immutable snapshot of local data: names with their records and the local zones, looked up
 * straight from a query's bytes. Replaced whole when a hosts file changes.
 */
public final class LocalTable {
  /** A table that answers nothing. */
  public static final LocalTable EMPTY = new LocalTable(NameIndex.EMPTY, new Node[0], NameIndex.EMPTY, new ZoneEntry[0]);

  private static final int TYPE_ANY = 255;
  /** CNAMEs followed inside local data before the answer stops. */
  private static final int MAX_CHAIN = 8;
  private static final Name SOA_HOST = Name.fromConstantString("localhost.");
  private static final Name SOA_MAILBOX = Name.fromConstantString("nobody.invalid.");
  private static final byte[] NO_RECORDS = new byte[0];

  private final NameIndex names;
  private final Node[] nodes;
  private final NameIndex zoneIndex;
  private final ZoneEntry[] zones;

  private LocalTable(NameIndex names, Node[] nodes, NameIndex zoneIndex, ZoneEntry[] zones) {
    this.names = names;
    this.nodes = nodes;
    this.zoneIndex = zoneIndex;
    this.zones = zones;
  }

  /** A name's records, grouped by type; an empty node is an ancestor of local data (an empty non-terminal). */
  private record Node(Name name, byte[] wire, int[] types, byte[][] sets, int[] counts, byte[] cnameTarget) {
    boolean empty() {
      return types.length == 0;
    }

    int find(int type) {
      for (int i = 0; i < types.length; i++) {
        if (types[i] == type) {
          return i;
        }
      }
      return -1;
    }
  }

  private record ZoneEntry(byte[] apex, ZoneType type, byte[] soa) {}

  /**
   * Reads the settings' hosts files and builds the table.
   *
   * @throws InvalidConfigException naming the key, the file and the line of what is wrong
   */
  public static LocalTable load(LocalSettings settings) {
    List<Record> records = new ArrayList<>(settings.records());
    for (Path file : settings.hostsFiles()) {
      HostsFile.read(file, records, settings.limits());
    }
    return of(records, settings.zones());
  }

  /** The table of {@code records} and {@code zones}. */
  static LocalTable of(List<Record> records, List<LocalSettings.Zone> zones) {
    Map<Name, Map<Integer, Set<Record>>> byName = new LinkedHashMap<>();
    for (Record r : records) {
      Name owner = r.getName().canonicalize();
      Record canonical = r.withName(owner);
      byName.computeIfAbsent(owner, n -> new LinkedHashMap<>())
          .computeIfAbsent(r.getType(), t -> new LinkedHashSet<>())
          .add(canonical);
    }
    NameIndex.Builder nameIndex = new NameIndex.Builder();
    List<Node> nodes = new ArrayList<>();
    for (Map.Entry<Name, Map<Integer, Set<Record>>> e : byName.entrySet()) {
      Map<Integer, Set<Record>> sets = e.getValue();
      if (sets.containsKey(Type.CNAME) && (sets.size() > 1 || sets.get(Type.CNAME).size() > 1)) {
        throw new InvalidConfigException("shoal.local.records",
            e.getKey() + " has a CNAME and other data (a CNAME must be the name's only record)");
      }
      nameIndex.putIfAbsent(e.getKey().toWireCanonical(), 0, nodes.size());
      nodes.add(node(e.getKey(), sets));
    }
    // Ancestors of local data exist (empty non-terminals): NODATA in a static zone, not NXDOMAIN.
    for (Name name : byName.keySet()) {
      for (int drop = 1; drop < name.labels() - 1; drop++) {
        Name ancestor = new Name(name, drop);
        if (nameIndex.putIfAbsent(ancestor.toWireCanonical(), 0, nodes.size()) == nodes.size()) {
          nodes.add(new Node(ancestor, ancestor.toWireCanonical(), new int[0], new byte[0][], new int[0], null));
        }
      }
    }
    NameIndex.Builder zoneIndex = new NameIndex.Builder();
    List<ZoneEntry> zoneList = new ArrayList<>();
    for (LocalSettings.Zone z : zones) {
      zoneIndex.putIfAbsent(z.apex().toWireCanonical(), 0, zoneList.size());
      zoneList.add(new ZoneEntry(z.apex().toWireCanonical(), z.type(), soa(z.apex())));
    }
    return new LocalTable(nameIndex.build(), nodes.toArray(new Node[0]), zoneIndex.build(),
        zoneList.toArray(new ZoneEntry[0]));
  }

  private static Node node(Name name, Map<Integer, Set<Record>> sets) {
    int[] types = new int[sets.size()];
    byte[][] wire = new byte[sets.size()][];
    int[] counts = new int[sets.size()];
    byte[] cname = null;
    int i = 0;
    for (Map.Entry<Integer, Set<Record>> e : sets.entrySet()) {
      types[i] = e.getKey();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (Record r : e.getValue()) {
        byte[] full = r.toWire(Section.ANSWER);
        // Without its owner: the owner is written per answer (a pointer to the question, or a chain's name).
        out.write(full, name.length(), full.length - name.length());
        if (r instanceof CNAMERecord c) {
          cname = c.getTarget().toWireCanonical();
        }
      }
      wire[i] = out.toByteArray();
      counts[i] = e.getValue().size();
      i++;
    }
    return new Node(name, name.toWireCanonical(), types, wire, counts, cname);
  }

  /** The SOA written with a negative answer from local data, so clients may cache it (RFC 2308). */
  private static byte[] soa(Name owner) {
    return new SOARecord(owner, DClass.IN, LocalSettings.DEFAULT_TTL, SOA_HOST, SOA_MAILBOX, 1, 3600, 1200, 604800,
        LocalSettings.DEFAULT_TTL).toWire(Section.AUTHORITY);
  }

  /** Whether the table holds anything to answer from. */
  public boolean isEmpty() {
    return nodes.length == 0 && zones.length == 0;
  }

  /** Names held (with their empty ancestors) and local zones. */
  public int names() {
    return names.size();
  }

  /**
   * The reply from local data, or null when the query is not local data's to answer (resolve it
   * as usual).
   *
   * @param sizeLimit the largest reply the query's transport carries
   */
  public byte[] answer(DnsQuery query, int sizeLimit) {
    if (query.qclass() != DClass.IN) {
      return null; // local data is class IN only
    }
    byte[] p = query.packet();
    ZoneEntry zone = null;
    if (zones.length > 0) {
      for (int pos = 12; ; pos += (p[pos] & 0xFF) + 1) {
        int z = zoneIndex.get(p, pos);
        if (z >= 0) {
          zone = zones[z];
          break;
        }
        if (p[pos] == 0) {
          break;
        }
      }
    }
    int n = nodes.length == 0 ? -1 : names.get(p, 12);
    Node node = n < 0 ? null : nodes[n];
    if (zone == null || zone.type == ZoneType.TRANSPARENT) {
      return node == null || node.empty() ? null : fromNode(query, node, zone, sizeLimit);
    }
    switch (zone.type) {
      case ALWAYS_NXDOMAIN:
        return negative(query, Rcode.NXDOMAIN, zone.soa, sizeLimit);
      case REDIRECT: {
        int a = names.get(zone.apex, 0);
        Node apex = a < 0 ? null : nodes[a];
        return apex == null || apex.empty()
            ? negative(query, Rcode.NOERROR, zone.soa, sizeLimit) : fromNode(query, apex, zone, sizeLimit);
      }
      case REFUSE:
        return node == null || node.empty()
            ? query.ownAnswer(Rcode.REFUSED, true, NO_RECORDS, 0, 0, null, sizeLimit)
            : fromNode(query, node, zone, sizeLimit);
      default: // STATIC
        return node == null
            ? negative(query, Rcode.NXDOMAIN, zone.soa, sizeLimit) : fromNode(query, node, zone, sizeLimit);
    }
  }

  /** The answer from {@code node}'s records for the query's type, following CNAMEs inside local data; else NODATA. */
  private byte[] fromNode(DnsQuery query, Node node, ZoneEntry zone, int sizeLimit) {
    int qtype = query.qtype();
    ByteArrayOutputStream out = new ByteArrayOutputStream(128);
    int count = 0;
    Node at = node;
    byte[] owner = null; // null: the question's name, written as a pointer to it
    for (int hop = 0; at != null && hop <= MAX_CHAIN; hop++) {
      if (qtype == TYPE_ANY) {
        for (int i = 0; i < at.types.length; i++) {
          count += write(out, owner, at.sets[i]);
        }
        break;
      }
      int set = at.find(qtype);
      if (set >= 0) {
        count += write(out, owner, at.sets[set]);
        break;
      }
      if (at.cnameTarget == null || qtype == Type.CNAME) {
        break;
      }
      count += write(out, owner, at.sets[at.find(Type.CNAME)]);
      owner = at.cnameTarget;
      int next = names.get(owner, 0);
      at = next < 0 ? null : nodes[next];
    }
    if (count == 0) {
      return negative(query, Rcode.NOERROR, zone != null ? zone.soa : soa(node.name), sizeLimit);
    }
    return query.ownAnswer(Rcode.NOERROR, true, out.toByteArray(), count, 0, null, sizeLimit);
  }

  /** Writes each record of {@code set} with {@code owner} (null: a pointer to the question); returns how many. */
  private static int write(ByteArrayOutputStream out, byte[] owner, byte[] set) {
    int count = 0;
    int pos = 0;
    while (pos < set.length) {
      int len = 10 + (((set[pos + 8] & 0xFF) << 8) | (set[pos + 9] & 0xFF));
      if (owner == null) {
        out.write(0xC0);
        out.write(12);
      } else {
        out.write(owner, 0, owner.length);
      }
      out.write(set, pos, len);
      pos += len;
      count++;
    }
    return count;
  }

  private static byte[] negative(DnsQuery query, int rcode, byte[] soa, int sizeLimit) {
    return query.ownAnswer(rcode, true, soa, 0, 1, null, sizeLimit);
  }

  @Override
  public String toString() {
    return "LocalTable(" + nodes.length + " names, " + zones.length + " zones)";
  }
}
