package io.shoal.policy;

import io.shoal.config.InvalidConfigException;
import io.shoal.local.NameIndex;
import io.shoal.metrics.PolicyMetrics;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One immutable snapshot of the response policy: the RPZ triggers of every RPZ file, then the names
 * of every domain list, each in a {@link NameIndex}. A look-up walks the query name's suffixes,
 * longest first: at most one probe per label and list kind, no allocation.
 */
public final class PolicyTable {
  /** A table that matches nothing. */
  public static final PolicyTable EMPTY = new PolicyTable(Rpz.NONE, Lists.NONE);

  final Rpz rpz;
  final Lists lists;

  PolicyTable(Rpz rpz, Lists lists) {
    this.rpz = rpz;
    this.lists = lists;
  }

  /** An exact trigger (the name itself) and a wildcard trigger (names strictly below it), either may be null. */
  record Triggers(Rule exact, Rule wildcard) {}

  /** The RPZ files' triggers. The most specific trigger over all files wins; on a tie, the earlier file. */
  record Rpz(NameIndex names, Triggers[] triggers) {
    static final Rpz NONE = new Rpz(NameIndex.EMPTY, new Triggers[0]);

    static Rpz load(List<Path> files, PolicyMetrics metrics) {
      if (files.isEmpty()) {
        return NONE;
      }
      Map<RpzFile.Trigger, Rule> all = new LinkedHashMap<>();
      for (Path file : files) {
        RpzFile.read(file, metrics).forEach(all::putIfAbsent);
      }
      NameIndex.Builder names = new NameIndex.Builder();
      List<Rule[]> pairs = new ArrayList<>();
      for (Map.Entry<RpzFile.Trigger, Rule> e : all.entrySet()) {
        int i = names.putIfAbsent(e.getKey().name().toWireCanonical(), 0, pairs.size());
        if (i == pairs.size()) {
          pairs.add(new Rule[2]);
        }
        pairs.get(i)[e.getKey().wildcard() ? 1 : 0] = e.getValue();
      }
      Triggers[] triggers = new Triggers[pairs.size()];
      for (int i = 0; i < triggers.length; i++) {
        triggers[i] = new Triggers(pairs.get(i)[0], pairs.get(i)[1]);
      }
      return new Rpz(names.build(), triggers);
    }
  }

  /** The domain lists' names, each with the index of its list's rule; a name in two lists belongs to the first. */
  record Lists(NameIndex names, Rule[] rules) {
    static final Lists NONE = new Lists(NameIndex.EMPTY, new Rule[0]);

    static Lists load(List<PolicySettings.DomainList> lists, PolicyMetrics metrics) {
      if (lists.isEmpty()) {
        return NONE;
      }
      if (lists.size() > Short.MAX_VALUE) {
        throw new InvalidConfigException(DomainListFile.KEY, "at most " + Short.MAX_VALUE + " lists");
      }
      NameIndex.Builder names = new NameIndex.Builder();
      Rule[] rules = new Rule[lists.size()];
      for (int i = 0; i < rules.length; i++) {
        PolicySettings.DomainList list = lists.get(i);
        String label = list.file().getFileName().toString();
        rules[i] = Rule.of(list.action(), label, metrics.hits(label, list.action().label()));
        DomainListFile.read(list.file(), names, i);
      }
      return new Lists(names.build(), rules);
    }
  }

  /** The rule for the question name in {@code packet} (at offset 12), or null when nothing matches. */
  Rule match(byte[] packet) {
    if (rpz.names.size() > 0) {
      for (int pos = 12; packet[pos] != 0; pos += (packet[pos] & 0xFF) + 1) {
        int i = rpz.names.get(packet, pos);
        if (i >= 0) {
          Triggers t = rpz.triggers[i];
          Rule r = pos == 12 ? t.exact() : t.wildcard();
          if (r != null) {
            return r;
          }
        }
      }
    }
    if (lists.names.size() > 0) {
      for (int pos = 12; packet[pos] != 0; pos += (packet[pos] & 0xFF) + 1) {
        int i = lists.names.get(packet, pos);
        if (i >= 0) {
          return lists.rules[i];
        }
      }
    }
    return null;
  }

  /** RPZ triggers and domain-list names held. */
  public int names() {
    return rpz.names.size() + lists.names.size();
  }

  /** Bytes of the name indexes (pools and slot tables). */
  public long indexBytes() {
    return rpz.names.bytes() + lists.names.bytes();
  }
}
