package io.shoal.recursion;

import java.net.InetSocketAddress;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.xbill.DNS.Name;

/**
 * The recursion's own memory of the DNS tree: delegations (NS names, glue, whether signed) and the
 * addresses of name servers, each until its TTL runs out, each map bounded (the least recently
 * used entry goes first). Not the answer cache: clients never see these records, so a referral a
 * server made up affects only where this node asks next, within the bailiwick rules.
 */
final class ZoneCuts {
  /** Addresses of one name-server name until they expire. */
  record Host(List<InetSocketAddress> addresses, long expiresAtNanos) {}

  private final int max;
  private final LinkedHashMap<Name, ZoneCut> cuts;
  private final LinkedHashMap<Name, Host> hosts;

  ZoneCuts(int max) {
    this.max = max;
    this.cuts = bounded(max);
    this.hosts = bounded(max);
  }

  private static <V> LinkedHashMap<Name, V> bounded(int max) {
    return new LinkedHashMap<>(64, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Name, V> eldest) {
        return size() > max;
      }
    };
  }

  /**
   * The deepest delegation known at or above {@code name} (strictly above it when {@code
   * parentSide}: a DS record is the parent's), or null when even the root's has expired.
   */
  synchronized ZoneCut closest(Name name, boolean parentSide, long now) {
    Name n = parentSide && name.labels() > 1 ? parent(name) : name;
    while (true) {
      ZoneCut c = cuts.get(n);
      if (c != null && !c.expired(now)) {
        return c;
      }
      if (c != null) {
        cuts.remove(n);
      }
      if (n.labels() <= 1) {
        return null;
      }
      n = parent(n);
    }
  }

  static Name parent(Name n) {
    return new Name(n, 1);
  }

  /** Learns {@code cut}; a configured (stub) delegation is never replaced by a learnt one. */
  synchronized void put(ZoneCut cut) {
    ZoneCut old = cuts.get(cut.zone());
    if (old != null && old.stub() && !cut.stub()) {
      return;
    }
    cuts.put(cut.zone(), cut);
  }

  synchronized Host host(Name name, long now) {
    Host h = hosts.get(name);
    if (h != null && now - h.expiresAtNanos() >= 0) {
      hosts.remove(name);
      return null;
    }
    return h;
  }

  synchronized void putHost(Name name, Host host) {
    hosts.put(name, host);
  }

  /** Forgets every delegation and address at or below {@code name} (configured stub zones stay); returns how many. */
  synchronized int flush(Name name) {
    int removed = 0;
    for (Iterator<Map.Entry<Name, ZoneCut>> i = cuts.entrySet().iterator(); i.hasNext(); ) {
      Map.Entry<Name, ZoneCut> e = i.next();
      if (e.getKey().subdomain(name) && !e.getValue().stub()) {
        i.remove();
        removed++;
      }
    }
    for (Iterator<Name> i = hosts.keySet().iterator(); i.hasNext(); ) {
      if (i.next().subdomain(name)) {
        i.remove();
        removed++;
      }
    }
    return removed;
  }

  synchronized int size() {
    return cuts.size() + hosts.size();
  }

  int max() {
    return max;
  }
}
