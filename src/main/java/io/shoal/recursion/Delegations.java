package io.shoal.recursion;

import static io.shoal.recursion.ReplyRecords.isBelow;
import static io.shoal.recursion.ReplyRecords.records;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * What a {@link Resolution} learns for the zone-cut cache: the delegation a referral (or an
 * authoritative NS answer) names, with the glue the parent's bailiwick allows, and the addresses
 * a name server's lookup found; each kept for its TTL, at least 5 s and at most a day.
 */
final class Delegations {

  /** Longest a learnt delegation or address is kept, whatever its TTL. */
  private static final long MAX_TTL_SECONDS = 86_400;
  /** Shortest: a TTL of 0 would make every question walk again from the root. */
  private static final long MIN_TTL_SECONDS = 5;

  private final RecursiveUpstream r;

  Delegations(RecursiveUpstream r) {
    this.r = r;
  }

  /**
   * The delegation in {@code m}, when it is a referral downward from {@code cut} towards {@code
   * name}; null when it is none (an answer or a denial). An upward or sideways one never gets
   * here: {@link ReplyRecords#lameReason} turned it away.
   */
  ZoneCut referral(Message m, ZoneCut cut, Name name) {
    if (m.getRcode() != Rcode.NOERROR || !m.getSection(Section.ANSWER).isEmpty()
        || !records(m, Section.AUTHORITY, null, Type.SOA).isEmpty()) {
      return null;
    }
    List<Record> ns = records(m, Section.AUTHORITY, null, Type.NS);
    if (ns.isEmpty()) {
      return null;
    }
    // Lower case: the owner often points at our 0x20-mixed question name.
    Name zone = ns.get(0).getName().canonicalize();
    if (!isBelow(zone, cut.zone()) || !name.subdomain(zone)) {
      return null;
    }
    return cut(m, cut, zone, records(m, Section.AUTHORITY, zone, Type.NS), Section.AUTHORITY);
  }

  /** The delegation of {@code zone} named by {@code ns}, with the glue {@code from}'s zone may give. */
  ZoneCut cut(Message m, ZoneCut from, Name zone, List<Record> ns, int nsSection) {
    List<Name> names = new ArrayList<>();
    long ttl = MAX_TTL_SECONDS;
    for (Record rec : ns) {
      Name target = ((NSRecord) rec).getTarget().canonicalize();
      if (!names.contains(target)) {
        names.add(target);
      }
      ttl = Math.min(ttl, rec.getTTL());
    }
    Map<Name, List<InetSocketAddress>> glue = new LinkedHashMap<>();
    for (Record rec : m.getSection(Section.ADDITIONAL)) {
      if ((rec instanceof ARecord || rec instanceof AAAARecord) && names.contains(rec.getName().canonicalize())
          && rec.getName().subdomain(from.zone())) {
        InetSocketAddress a = r.authority(rec instanceof ARecord ar ? ar.getAddress() : ((AAAARecord) rec).getAddress());
        if (a != null) {
          glue.computeIfAbsent(rec.getName().canonicalize(), k -> new ArrayList<>()).add(a);
        }
      }
    }
    boolean signed = !records(m, nsSection, zone, Type.DS).isEmpty();
    long now = System.nanoTime();
    return new ZoneCut(zone, List.copyOf(names), Map.copyOf(glue), signed,
        now + TimeUnit.SECONDS.toNanos(Math.max(MIN_TTL_SECONDS, ttl)), false);
  }

  /**
   * The addresses of name server {@code host} in {@code result} (its A or AAAA lookup), kept in
   * the zone-cut cache when there are any.
   */
  List<InetSocketAddress> hostAddresses(Resolution.Result result, Name host) {
    List<InetSocketAddress> out = new ArrayList<>();
    long ttl = MAX_TTL_SECONDS;
    for (Record rec : result.answer()) {
      InetSocketAddress a = null;
      if (rec instanceof ARecord ar) {
        a = r.authority(ar.getAddress());
      } else if (rec instanceof AAAARecord ar) {
        a = r.authority(ar.getAddress());
      } else {
        continue;
      }
      ttl = Math.min(ttl, rec.getTTL());
      if (a != null && !out.contains(a)) {
        out.add(a);
      }
    }
    if (!out.isEmpty()) {
      r.cuts.putHost(host, new ZoneCuts.Host(List.copyOf(out),
          System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(MIN_TTL_SECONDS, ttl))));
    }
    return out;
  }
}
