package io.shoal.policy;

import io.shoal.config.InvalidConfigException;
import io.shoal.files.FileLimits;
import io.shoal.local.NameIndex;
import io.shoal.metrics.PolicyMetrics;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.xbill.DNS.Name;

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

  /**
   * The RPZ files' triggers: a name's own trigger under the name, a wildcard trigger under
   * {@code *.name}. The most specific trigger over all files wins (the name's own, then the
   * longest wildcard); on a tie, the earlier file.
   */
  record Rpz(NameIndex names, Rule[] rules) {
    static final Rpz NONE = new Rpz(NameIndex.EMPTY, new Rule[0]);

    static Rpz load(List<Path> files, PolicyMetrics metrics, FileLimits limits) {
      if (files.isEmpty()) {
        return NONE;
      }
      NameIndex.Builder names = new NameIndex.Builder();
      List<Rule> rules = new ArrayList<>();
      for (Path file : files) {
        for (Map.Entry<RpzFile.Trigger, Rule> e : RpzFile.read(file, metrics, limits).entrySet()) {
          Name trigger = e.getKey().name();
          byte[] key = e.getKey().wildcard() ? wildcardOf(trigger) : trigger.toWireCanonical();
          if (names.putIfAbsent(key, 0, rules.size()) == rules.size()) {
            rules.add(e.getValue());
          }
        }
      }
      return new Rpz(names.build(), rules.toArray(new Rule[0]));
    }

    private static byte[] wildcardOf(Name name) {
      byte[] wire = name.toWireCanonical();
      byte[] w = new byte[wire.length + 2];
      w[0] = 1;
      w[1] = '*';
      System.arraycopy(wire, 0, w, 2, wire.length);
      return w;
    }
  }

  /** The domain lists' names, each with the index of its list's rule; a name in two lists belongs to the first. */
  record Lists(NameIndex names, Rule[] rules) {
    static final Lists NONE = new Lists(NameIndex.EMPTY, new Rule[0]);

    static Lists load(List<PolicySettings.DomainList> lists, PolicyMetrics metrics, FileLimits limits) {
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
        DomainListFile.read(list.file(), names, i, limits);
      }
      return new Lists(names.build(), rules);
    }
  }

  /**
   * The rule for the question name in {@code packet} (at offset 12), or null when nothing matches.
   * The name's suffixes are hashed from the root up, each byte once, and each probed (at most one
   * probe per label and kind of trigger); nothing is allocated.
   */
  Rule match(byte[] packet) {
    int labels = NameIndex.labels(packet, 12);
    if (rpz.names.size() > 0) {
      Rule best = null;
      long h = NameIndex.ROOT;
      // The root first: a "*" trigger at the RPZ apex ("*.ORIGIN") covers every name.
      int above = labels > 0 ? NameIndex.labelAt(packet, 12, labels) : -1;
      for (int j = labels - 1; j >= 0; j--) {
        if (above >= 0) {
          // *.S matches the names strictly below S, and the query name is below the suffix hashed so far.
          int below = rpz.names.getWildcard(NameIndex.wildcard(h), packet, above);
          if (below >= 0) {
            best = rpz.rules[below]; // longer than any found before
          }
        }
        above = NameIndex.labelAt(packet, 12, j);
        h = NameIndex.extend(h, packet, above);
      }
      int own = labels == 0 ? -1 : rpz.names.get(h, packet, 12);
      if (own >= 0) {
        return rpz.rules[own];
      }
      if (best != null) {
        return best;
      }
    }
    if (lists.names.size() > 0) {
      int best = -1;
      long h = NameIndex.ROOT;
      for (int j = labels - 1; j >= 0; j--) {
        int at = NameIndex.labelAt(packet, 12, j);
        h = NameIndex.extend(h, packet, at);
        int i = lists.names.get(h, packet, at);
        if (i >= 0) {
          best = i; // the longest listed suffix decides
        }
      }
      return best < 0 ? null : lists.rules[best];
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
