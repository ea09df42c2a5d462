package io.shoal.policy;

import io.shoal.config.InvalidConfigException;
import io.shoal.files.FileLimits;
import io.shoal.files.ZoneFile;
import io.shoal.metrics.PolicyMetrics;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;
import kamon.metric.Counter;

/**
 * Reads an RPZ zone file (its apex from $ORIGIN or the SOA): QNAME triggers with their actions —
 * {@code CNAME .} NXDOMAIN, {@code CNAME *.} NODATA, {@code CNAME rpz-passthru.} PASSTHRU, {@code
 * CNAME rpz-drop.} DROP, any other CNAME a redirect, other records local data — and wildcard
 * triggers {@code *.name}. Triggers on addresses and name servers (rpz-ip, rpz-nsdname, rpz-nsip,
 * rpz-client-ip) and rpz-tcp-only are skipped with a warning.
 */
final class RpzFile {
  static final String KEY = "shoal.policy.rpz_files";
  private static final Logger log = LoggerFactory.getLogger(RpzFile.class);
  private static final Name PASSTHRU = Name.fromConstantString("rpz-passthru.");
  private static final Name DROP = Name.fromConstantString("rpz-drop.");
  private static final Name TCP_ONLY = Name.fromConstantString("rpz-tcp-only.");
  private static final Name WILD_ROOT = Name.fromConstantString("*.");
  private static final Set<String> OTHER_TRIGGERS = Set.of("rpz-ip", "rpz-nsdname", "rpz-nsip", "rpz-client-ip");

  /** A trigger's name and whether it is the wildcard below that name. */
  record Trigger(Name name, boolean wildcard) {}

  private RpzFile() {}

  /**
   * The file's triggers and rules, in file order.
   *
   * @throws InvalidConfigException naming the key, the file and the line (or the trigger) of what is wrong
   */
  static Map<Trigger, Rule> read(Path file, PolicyMetrics metrics, FileLimits limits) {
    Map<Trigger, List<Record>> byTrigger = new LinkedHashMap<>();
    // The line of each CNAME, for the one message that needs it (a CNAME beside other records).
    Map<Record, Integer> lines = new IdentityHashMap<>();
    Name[] apex = new Name[1];
    ZoneFile.read(KEY, file, null, -1, limits, (r, in, line) -> {
      // Messages name the line and never quote it: only the record's type, which the parser checked.
      String where = in + " line " + line + ": ";
      if (apex[0] == null) {
        if (!(r instanceof SOARecord)) {
          throw new InvalidConfigException(KEY, where + "the first record must be the zone's SOA, not a "
              + Type.string(r.getType()) + " record");
        }
        apex[0] = r.getName().canonicalize();
        return;
      }
      Name owner = r.getName().canonicalize();
      if (owner.equals(apex[0]) && (r instanceof SOARecord || r instanceof NSRecord)) {
        return;
      }
      if (!owner.subdomain(apex[0]) || owner.equals(apex[0])) {
        throw new InvalidConfigException(KEY, where + "the owner name is not a trigger below the zone's apex"
            + " (the SOA's name)");
      }
      Name relative = owner.relativize(apex[0]);
      String last = relative.getLabelString(relative.labels() - 1);
      if (OTHER_TRIGGERS.contains(last)) {
        log.warn("{} line {}: skipped: only QNAME triggers are supported", in, line);
        return;
      }
      boolean wildcard = relative.isWild();
      Name name;
      try {
        name = Name.concatenate(wildcard ? new Name(relative, 1) : relative, Name.root);
      } catch (org.xbill.DNS.NameTooLongException e) {
        throw new InvalidConfigException(KEY, where + "a trigger name longer than 255 bytes");
      }
      byTrigger.computeIfAbsent(new Trigger(name, wildcard), t -> new ArrayList<>()).add(r);
      if (r instanceof CNAMERecord) {
        lines.put(r, line);
      }
    });
    if (apex[0] == null) {
      throw new InvalidConfigException(KEY, file + ": no records (an RPZ file starts with its SOA)");
    }
    String list = file.getFileName().toString();
    Map<PolicyAction, Counter> counters = new LinkedHashMap<>();
    Map<Trigger, Rule> rules = new LinkedHashMap<>();
    for (Map.Entry<Trigger, List<Record>> e : byTrigger.entrySet()) {
      Rule rule = rule(file, e.getKey(), e.getValue(), lines, list, counters, metrics);
      if (rule != null) {
        rules.put(e.getKey(), rule);
      }
    }
    return rules;
  }

  private static Rule rule(Path file, Trigger trigger, List<Record> records, Map<Record, Integer> lines, String list,
      Map<PolicyAction, Counter> counters, PolicyMetrics metrics) {
    CNAMERecord cname = null;
    for (Record r : records) {
      if (r instanceof CNAMERecord c) {
        cname = c;
      }
    }
    PolicyAction action = PolicyAction.LOCAL_DATA;
    if (cname != null) {
      if (records.size() > 1) {
        throw new InvalidConfigException(KEY, file + " line " + lines.get(cname)
            + ": a CNAME where the same owner has other records (a CNAME must be its owner's only record)");
      }
      Name target = cname.getTarget();
      if (target.equals(Name.root)) {
        action = PolicyAction.NXDOMAIN;
      } else if (target.equals(WILD_ROOT)) {
        action = PolicyAction.NODATA;
      } else if (target.equals(PASSTHRU)) {
        action = PolicyAction.PASSTHRU;
      } else if (target.equals(DROP)) {
        action = PolicyAction.DROP;
      } else if (target.equals(TCP_ONLY) || target.isWild()) {
        log.warn("{} line {}: skipped: a CNAME to rpz-tcp-only. or to a wildcard is not supported", file,
            lines.get(cname));
        return null;
      } else {
        action = PolicyAction.CNAME;
      }
    }
    Counter hits = counters.computeIfAbsent(action, a -> metrics.hits(list, a.label()));
    if (action != PolicyAction.LOCAL_DATA && action != PolicyAction.CNAME) {
      return Rule.of(action, list, hits);
    }
    Map<Integer, Set<Record>> byType = new LinkedHashMap<>();
    for (Record r : records) {
      byType.computeIfAbsent(r.getType(), t -> new LinkedHashSet<>()).add(r);
    }
    int[] types = new int[byType.size()];
    byte[][] sets = new byte[byType.size()][];
    int[] counts = new int[byType.size()];
    int i = 0;
    for (Map.Entry<Integer, Set<Record>> e : byType.entrySet()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (Record r : e.getValue()) {
        byte[] full = r.toWire(Section.ANSWER);
        int ownerLength = r.getName().length();
        out.write(full, ownerLength, full.length - ownerLength);
      }
      types[i] = e.getKey();
      sets[i] = out.toByteArray();
      counts[i] = e.getValue().size();
      i++;
    }
    return new Rule(action, list, types, sets, counts, hits);
  }
}
