package io.shoal.recursion;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Type;

/**
 * The answers the walk received for its own use (DS, DNSKEY, NS and name-server A/AAAA sets, with
 * their RRSIGs, and denials of them; NXDOMAINs by name; CNAME links; names found to be no zone cut),
 * each until its TTL runs out, bounded, least recently used out. The validator asks for a zone's DS and DNSKEY again whenever
 * its own key cache does not hold them (a key set it found bogus, an insecure delegation below a
 * name it never kept, every new question after its short reuse window); a resolver that forgot
 * them would ask the parent and the zone again each time, as Unbound and Knot Resolver, keeping
 * every RRset they use, do not. Only records the walk accepted within the bailiwick rules get here,
 * and they leave with the TTL they have left, so nothing outlives what the authority said.
 */
final class RRsets {
  /** What is kept: an owner name and a type. */
  record Key(Name name, int type) {}

  /** A kept result and when it was learnt and must go (System.nanoTime). */
  private record Entry(Resolution.Result result, long learntAtNanos, long expiresAtNanos) {}

  /** Longest anything is kept, whatever its TTL: as for delegations. */
  private static final long MAX_TTL_SECONDS = 86_400;

  private final int max;
  private final LinkedHashMap<Key, Entry> entries;

  RRsets(int max) {
    this.max = max;
    this.entries = new LinkedHashMap<>(64, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Key, Entry> eldest) {
        return size() > RRsets.this.max;
      }
    };
  }

  /** Whether answers for {@code type} are kept here: the types a walk and its validator need. */
  static boolean kept(int type) {
    return type == Type.DS || type == Type.DNSKEY || type == Type.NS || type == Type.A || type == Type.AAAA;
  }

  /** The type a name's NXDOMAIN is kept under: it denies every type (RFC 8020). */
  private static final int NXDOMAIN = 0;

  /**
   * A kept NXDOMAIN for {@code name} itself, or for an ancestor when that one's denial came with
   * NSEC/NSEC3 proofs (RFC 8020; the validator checks they cover the name, as Unbound's
   * harden-below-nxdomain does), or null.
   */
  Resolution.Result nxdomain(Name name, long now) {
    for (Name n = name; n.labels() > 1; n = ZoneCuts.parent(n)) {
      Resolution.Result r = get(n, NXDOMAIN, now);
      if (r != null && (n == name || r.authority().stream().anyMatch(rec -> !(rec instanceof SOARecord)))) {
        return r;
      }
    }
    return null;
  }

  /** Keeps an NXDOMAIN for {@code name}: one with no answer chain and the SOA that bounds its TTL. */
  void putNxdomain(Name name, Resolution.Result result, long now) {
    if (result.rcode() == Rcode.NXDOMAIN && result.answer().isEmpty()) {
      keep(name, NXDOMAIN, result, now);
    }
  }

  /** Whether a NODATA for {@code name}/{@code type} is kept (a name the walk found to be no zone cut). */
  boolean nodata(Name name, int type, long now) {
    Resolution.Result r = get(name, type, now);
    return r != null && r.rcode() == Rcode.NOERROR && r.answer().isEmpty();
  }

  /**
   * Keeps a CNAME link (with its RRSIGs) for its owner, unless a wildcard made it: that one is
   * valid only with the denial proofs of its answer, which are not kept.
   */
  void putCname(Name name, List<Record> link, long now) {
    for (Record rec : link) {
      if (rec instanceof RRSIGRecord sig && sig.getLabels() < name.labels() - 1) {
        return;
      }
    }
    keep(name, Type.CNAME, new Resolution.Result(Rcode.NOERROR, link, List.of()), now);
  }

  /** The kept result for {@code name}/{@code type} with the TTLs it has left, or null. */
  synchronized Resolution.Result get(Name name, int type, long now) {
    Key k = new Key(name, type);
    Entry e = entries.get(k);
    if (e == null) {
      return null;
    }
    if (now - e.expiresAtNanos() >= 0) {
      entries.remove(k);
      return null;
    }
    long elapsed = TimeUnit.NANOSECONDS.toSeconds(now - e.learntAtNanos());
    return new Resolution.Result(e.result().rcode(), aged(e.result().answer(), elapsed),
        aged(e.result().authority(), elapsed));
  }

  /**
   * Keeps {@code result} for {@code name}/{@code type} when it is one kept here: data owned by the
   * name itself (no CNAME/DNAME chain, whose links belong to other names), or for DS and DNSKEY a
   * denial with its SOA. Kept for the smallest TTL among the records (for a denial, at most the
   * SOA's minimum, RFC 2308); a TTL of 0 is not kept.
   */
  void put(Name name, int type, Resolution.Result result, long now) {
    if (kept(type)) {
      keep(name, type, result, now);
    }
  }

  private void keep(Name name, int type, Resolution.Result result, long now) {
    long ttl = MAX_TTL_SECONDS;
    if (!result.answer().isEmpty()) {
      if (result.rcode() != Rcode.NOERROR) {
        return;
      }
      for (Record r : result.answer()) {
        int covered = r instanceof RRSIGRecord sig ? sig.getTypeCovered() : r.getType();
        if (!r.getName().equals(name) || covered != type) {
          return;
        }
        ttl = Math.min(ttl, r.getTTL());
      }
    } else {
      if (type == Type.A || type == Type.AAAA
          || (result.rcode() != Rcode.NOERROR && result.rcode() != Rcode.NXDOMAIN)) {
        return;
      }
      boolean soa = false;
      for (Record r : result.authority()) {
        ttl = Math.min(ttl, r.getTTL());
        if (r instanceof SOARecord s) {
          soa = true;
          ttl = Math.min(ttl, s.getMinimum());
        }
      }
      if (!soa) {
        return;
      }
    }
    if (ttl <= 0) {
      return;
    }
    Entry e = new Entry(result, now, now + TimeUnit.SECONDS.toNanos(ttl));
    synchronized (this) {
      entries.put(new Key(name, type), e);
    }
  }

  private static List<Record> aged(List<Record> records, long elapsed) {
    if (elapsed <= 0) {
      return records;
    }
    List<Record> out = new ArrayList<>(records.size());
    for (Record r : records) {
      long ttl = Math.max(0, r.getTTL() - elapsed);
      out.add(Record.newRecord(r.getName(), r.getType(), r.getDClass(), ttl, r.rdataToWireCanonical()));
    }
    return out;
  }

  /** Forgets every set owned at or below {@code name}; returns how many. */
  synchronized int flush(Name name) {
    int removed = 0;
    for (Iterator<Key> i = entries.keySet().iterator(); i.hasNext(); ) {
      if (i.next().name().subdomain(name)) {
        i.remove();
        removed++;
      }
    }
    return removed;
  }

  synchronized int size() {
    return entries.size();
  }
}
