package io.shoal.dnssec;

import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.NSECRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;
import org.xbill.DNS.utils.base32;

/**
 * The NSEC and NSEC3 ranges of the secure denials one upstream group gave, kept to answer other
 * names they cover without asking upstream (RFC 8198). Per zone (the signer of the records), NSEC
 * ranges in canonical name order and NSEC3 ranges in hash order, each with its RRSIGs and the
 * zone's SOA, for min(record TTL, SOA minimum, SOA TTL) (RFC 8198 section 5.4, RFC 9077) and never
 * past a signature's expiration. NSEC3 opt-out ranges are not kept: they prove nothing about the
 * names they span (RFC 8198 section 4). At most {@link #MAX_RANGES} ranges and {@link #MAX_BYTES}
 * bytes of records; past either, the range kept longest ago goes first.
 *
 * <p>Only misses read it (a worker, before the owner hop and the upstream): a cache hit never
 * does. Reads share a lock; learning takes it alone, and happens once per proof, not per query.
 */
public final class DenialCache {
  /** Ranges kept per upstream group: a few zones' worth of random-subdomain floods. */
  static final int MAX_RANGES = 20_000;
  /** Wire bytes of the kept records per upstream group (the Java objects cost about three times that). */
  static final long MAX_BYTES = 8L << 20;

  private static final base32 BASE32HEX = new base32(base32.Alphabet.BASE32HEX, false, false);

  /** A denial made from kept ranges: the reply's wire (TTLs as signed) and until when it holds. */
  public record Synthesized(byte[] wire, boolean nxdomain, long expiresAtMillis) {}

  /** An NSEC3 hash, in the order of the chain (unsigned bytes). */
  private record Hash(byte[] bytes) implements Comparable<Hash> {
    @Override
    public int compareTo(Hash o) {
      return Arrays.compareUnsigned(bytes, o.bytes);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Hash h && Arrays.equals(bytes, h.bytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bytes);
    }
  }

  /** Where a range is kept: its zone and its owner (a Name for NSEC, a Hash for NSEC3). */
  private record Place(Name zone, Object owner) {}

  /** One NSEC or NSEC3 record, its signatures, and until when it proves anything. */
  private record Range(Place place, Record record, List<RRSIGRecord> sigs, long expiresAt, int bytes) {
    /** Whether names below this owner are not this zone's to deny: a delegation or a DNAME. */
    boolean cutsBelow() {
      return hasType(Type.DNAME) || (hasType(Type.NS) && !hasType(Type.SOA));
    }

    boolean hasType(int type) {
      return record instanceof NSECRecord n ? n.hasType(type) : ((NSEC3Record) record).hasType(type);
    }
  }

  /** What is kept of one signed zone. */
  private static final class Zone {
    final Name apex;
    SOARecord soa;
    List<RRSIGRecord> soaSigs = List.of();
    long soaExpires;
    final TreeMap<Name, Range> nsec = new TreeMap<>();
    final TreeMap<Hash, Range> nsec3 = new TreeMap<>();
    /** An NSEC3 record of the kept chain: its hash algorithm, iterations and salt hash names. */
    NSEC3Record nsec3Params;

    Zone(Name apex) {
      this.apex = apex;
    }
  }

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Map<Name, Zone> zones = new HashMap<>();
  /** Every kept range, the one kept longest ago first. */
  private final LinkedHashMap<Place, Range> kept = new LinkedHashMap<>();
  private long bytes;
  private final int maxRanges;
  private final long maxBytes;
  /** Whether any range is kept: a miss with none to look at does not parse its name. */
  private volatile boolean holding;

  /** A store with the bounds above. */
  public DenialCache() {
    this(MAX_RANGES, MAX_BYTES);
  }

  DenialCache(int maxRanges, long maxBytes) {
    this.maxRanges = maxRanges;
    this.maxBytes = maxBytes;
  }

  /**
   * Keeps the NSEC and NSEC3 ranges among {@code authority}, the authority section of a denial
   * validated as secure (with its SOA and RRSIGs), whose TTLs count from {@code now}. Returns
   * whether a range was new (not already kept and alive): such a proof is worth telling other
   * nodes about.
   */
  public boolean learn(List<Record> authority, long now) {
    SOARecord soa = null;
    List<RRSIGRecord> soaSigs = new ArrayList<>();
    List<Record> denials = new ArrayList<>();
    Map<Name, List<RRSIGRecord>> sigsByOwner = new HashMap<>();
    for (Record r : authority) {
      if (r instanceof SOARecord s) {
        soa = s;
      } else if (r instanceof NSECRecord || r instanceof NSEC3Record) {
        denials.add(r);
      } else if (r instanceof RRSIGRecord sig) {
        sigsByOwner.computeIfAbsent(sig.getName(), n -> new ArrayList<>()).add(sig);
      }
    }
    if (soa == null || denials.isEmpty() || soa.getDClass() != DClass.IN) {
      return false;
    }
    Name apex = soa.getName();
    for (RRSIGRecord sig : sigsByOwner.getOrDefault(apex, List.of())) {
      if (sig.getTypeCovered() == Type.SOA && sig.getSigner().equals(apex)) {
        soaSigs.add(sig);
      }
    }
    if (soaSigs.isEmpty()) {
      return false;
    }
    long negativeTtl = Math.min(soa.getTTL(), soa.getMinimum());
    long soaExpires = Math.min(now + negativeTtl * 1000, earliestExpiry(soaSigs));
    boolean learned = false;
    lock.writeLock().lock();
    try {
      Zone zone = zones.computeIfAbsent(apex, Zone::new);
      if (zone.soa == null || soaExpires > zone.soaExpires) {
        zone.soa = soa;
        zone.soaSigs = List.copyOf(soaSigs);
        zone.soaExpires = soaExpires;
      }
      for (Record r : denials) {
        if (!r.getName().subdomain(apex) || r.getDClass() != DClass.IN) {
          continue;
        }
        List<RRSIGRecord> sigs = new ArrayList<>();
        for (RRSIGRecord sig : sigsByOwner.getOrDefault(r.getName(), List.of())) {
          if (sig.getTypeCovered() == r.getType() && sig.getSigner().equals(apex)) {
            sigs.add(sig);
          }
        }
        if (sigs.isEmpty()) {
          continue;
        }
        long expires = Math.min(soaExpires, Math.min(now + Math.min(r.getTTL(), negativeTtl) * 1000, earliestExpiry(sigs)));
        if (expires <= now) {
          continue;
        }
        Object owner;
        if (r instanceof NSEC3Record n3) {
          owner = nsec3Owner(n3, apex);
          if (owner == null || (n3.getFlags() & 1) != 0) {
            continue; // not a hashed owner of this zone, or opt-out: proves nothing
          }
          if (zone.nsec3Params != null && !sameChain(zone.nsec3Params, n3)) {
            // The zone moved to another salt or iteration count: the old ranges hash other names.
            for (Range old : List.copyOf(zone.nsec3.values())) {
              forget(zone, old);
            }
          }
          zone.nsec3Params = n3;
        } else {
          owner = r.getName();
        }
        Place place = new Place(apex, owner);
        Range old = kept.get(place);
        if (old != null && old.expiresAt > now && old.record.equals(r)) {
          continue;
        }
        if (old != null) {
          forget(zone, old);
        }
        int size = r.toWire(Section.AUTHORITY).length;
        for (RRSIGRecord sig : sigs) {
          size += sig.toWire(Section.AUTHORITY).length;
        }
        Range range = new Range(place, r, List.copyOf(sigs), expires, size);
        kept.put(place, range);
        bytes += size;
        if (owner instanceof Hash h) {
          zone.nsec3.put(h, range);
        } else {
          zone.nsec.put((Name) owner, range);
        }
        learned = true;
      }
      evict(now);
      holding = !kept.isEmpty();
    } finally {
      lock.writeLock().unlock();
    }
    return learned;
  }

  /**
   * The denial of {@code qname}/{@code qtype} (class IN) the kept ranges prove at {@code now}, or
   * null when they do not: NXDOMAIN when a range covers the name and one covers the wildcard at
   * its closest encloser (for NSEC3: the encloser's own record, and ranges covering the next
   * closer name and the wildcard), NODATA when the name's own record lacks the type (and CNAME).
   * The authority section holds the SOA and the records of the proof, with their RRSIGs when
   * {@code dnssecOk} (without both for other clients, as for any answer they get); AD is set.
   */
  public Synthesized synthesize(Name qname, int qtype, boolean dnssecOk, long now) {
    if (qtype == Type.ANY || qtype == Type.DS || qtype == Type.RRSIG || qtype == Type.NSEC3) {
      return null; // DS is the parent side's to deny; the others are not for synthesis
    }
    lock.readLock().lock();
    try {
      Zone zone = zoneOf(qname);
      if (zone == null || zone.soa == null || zone.soaExpires <= now) {
        return null;
      }
      List<Range> proof = zone.nsec.isEmpty() ? null : nsecProof(zone, qname, qtype, now);
      if (proof == null && !zone.nsec3.isEmpty()) {
        proof = nsec3Proof(zone, qname, qtype, now);
      }
      if (proof == null) {
        return null;
      }
      boolean nxdomain = !proof.get(0).record.getName().equals(qname) && !matchesHashed(zone, proof.get(0), qname);
      return new Synthesized(reply(zone, proof, qname, qtype, nxdomain, dnssecOk), nxdomain, expiry(zone, proof));
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Whether any range is kept (read without the lock). */
  public boolean holdsAny() {
    return holding;
  }

  /** Ranges kept now (expired ones stay until evicted or replaced). */
  public int ranges() {
    lock.readLock().lock();
    try {
      return kept.size();
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Wire bytes of the kept ranges' records and signatures. */
  public long bytes() {
    lock.readLock().lock();
    try {
      return bytes;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The closest zone we keep ranges of that encloses {@code qname}. */
  private Zone zoneOf(Name qname) {
    for (int strip = 0; strip < qname.labels(); strip++) {
      Zone z = zones.get(strip == 0 ? qname : new Name(qname, strip));
      if (z != null) {
        return z;
      }
    }
    return null;
  }

  /** NSEC: [matching record] for NODATA, or [covering, wildcard's covering] for NXDOMAIN. */
  private static List<Range> nsecProof(Zone zone, Name qname, int qtype, long now) {
    Map.Entry<Name, Range> floor = zone.nsec.floorEntry(qname);
    if (floor == null || floor.getValue().expiresAt <= now) {
      return null;
    }
    Range at = floor.getValue();
    if (floor.getKey().equals(qname)) {
      NSECRecord n = (NSECRecord) at.record;
      boolean delegation = n.hasType(Type.NS) && !n.hasType(Type.SOA);
      return delegation || n.hasType(qtype) || n.hasType(Type.CNAME) || n.hasType(Type.DNAME) ? null : List.of(at);
    }
    if (!covers(at, qname)) {
      return null;
    }
    Name next = ((NSECRecord) at.record).getNext();
    Name encloser = commonAncestor(qname, at.record.getName());
    Name other = commonAncestor(qname, next);
    if (other.labels() > encloser.labels() && other.subdomain(zone.apex)) {
      encloser = other;
    }
    Name wildcard = wildcard(encloser);
    if (wildcard == null) {
      return null;
    }
    Map.Entry<Name, Range> wfloor = zone.nsec.floorEntry(wildcard);
    if (wfloor == null || wfloor.getValue().expiresAt <= now || wfloor.getKey().equals(wildcard)
        || !covers(wfloor.getValue(), wildcard)) {
      return null;
    }
    return wfloor.getValue() == at ? List.of(at) : List.of(at, wfloor.getValue());
  }

  /**
   * Whether NSEC {@code range} proves {@code name} absent: strictly inside it, not below a cut at
   * its owner, and not above its next name (then {@code name} is an empty non-terminal: it exists).
   */
  private static boolean covers(Range range, Name name) {
    Name owner = range.record.getName();
    Name next = ((NSECRecord) range.record).getNext();
    boolean last = next.compareTo(owner) <= 0; // the chain's last record points back to the apex
    boolean inside = owner.compareTo(name) < 0 && (last || name.compareTo(next) < 0);
    return inside && !(name.subdomain(owner) && range.cutsBelow()) && !(!last && next.subdomain(name));
  }

  /**
   * NSEC3: [matching record] for NODATA, or [closest encloser's record, next closer's covering,
   * wildcard's covering] for NXDOMAIN.
   */
  private static List<Range> nsec3Proof(Zone zone, Name qname, int qtype, long now) {
    try {
      NSEC3Record params = zone.nsec3Params;
      Range own = nsec3At(zone, new Hash(params.hashName(qname)), now);
      if (own != null) {
        NSEC3Record n = (NSEC3Record) own.record;
        boolean delegation = n.hasType(Type.NS) && !n.hasType(Type.SOA);
        return delegation || n.hasType(qtype) || n.hasType(Type.CNAME) || n.hasType(Type.DNAME) ? null : List.of(own);
      }
      for (int strip = 1; qname.labels() - strip >= zone.apex.labels(); strip++) {
        Name encloser = new Name(qname, strip);
        Range match = nsec3At(zone, new Hash(params.hashName(encloser)), now);
        if (match == null) {
          continue;
        }
        if (match.cutsBelow()) {
          return null;
        }
        Name nextCloser = new Name(qname, strip - 1);
        Range closer = nsec3Covering(zone, new Hash(params.hashName(nextCloser)), now);
        Name wildcard = wildcard(encloser);
        if (closer == null || wildcard == null) {
          return null;
        }
        Hash wildHash = new Hash(params.hashName(wildcard));
        if (nsec3At(zone, wildHash, now) != null) {
          return null; // the wildcard exists: the answer would be synthesized from it, not denied
        }
        Range wild = nsec3Covering(zone, wildHash, now);
        if (wild == null) {
          return null;
        }
        List<Range> proof = new ArrayList<>(List.of(closer, match));
        if (wild != closer && wild != match) {
          proof.add(wild);
        }
        return proof;
      }
      return null;
    } catch (NoSuchAlgorithmException e) {
      return null;
    }
  }

  private static Range nsec3At(Zone zone, Hash hash, long now) {
    Range r = zone.nsec3.get(hash);
    return r != null && r.expiresAt > now ? r : null;
  }

  /** The NSEC3 range strictly covering {@code hash}, or null. */
  private static Range nsec3Covering(Zone zone, Hash hash, long now) {
    Map.Entry<Hash, Range> floor = zone.nsec3.lowerEntry(hash);
    if (floor == null) {
      // Below the first owner kept: only the chain's last record (pointing back round) covers it.
      floor = zone.nsec3.lastEntry();
      Hash next = new Hash(((NSEC3Record) floor.getValue().record).getNext());
      boolean wraps = next.compareTo(floor.getKey()) <= 0;
      return wraps && hash.compareTo(next) < 0 && floor.getValue().expiresAt > now ? floor.getValue() : null;
    }
    Range r = floor.getValue();
    Hash next = new Hash(((NSEC3Record) r.record).getNext());
    boolean wraps = next.compareTo(floor.getKey()) <= 0;
    return (wraps || hash.compareTo(next) < 0) && r.expiresAt > now ? r : null;
  }

  /** Whether {@code range} is an NSEC3 record whose hashed owner is {@code qname}'s (a NODATA proof). */
  private static boolean matchesHashed(Zone zone, Range range, Name qname) {
    if (!(range.record instanceof NSEC3Record n3)) {
      return false;
    }
    try {
      return range.place.owner.equals(new Hash(n3.hashName(qname)));
    } catch (NoSuchAlgorithmException e) {
      return false;
    }
  }

  private static byte[] reply(Zone zone, List<Range> proof, Name qname, int qtype, boolean nxdomain, boolean dnssecOk) {
    Message m = new Message(0);
    m.getHeader().setFlag(Flags.QR);
    m.getHeader().setFlag(Flags.RA);
    m.getHeader().setFlag(Flags.AD);
    m.getHeader().setRcode(nxdomain ? Rcode.NXDOMAIN : Rcode.NOERROR);
    m.addRecord(Record.newRecord(qname, qtype, DClass.IN), Section.QUESTION);
    m.addRecord(zone.soa, Section.AUTHORITY);
    if (dnssecOk) {
      zone.soaSigs.forEach(s -> m.addRecord(s, Section.AUTHORITY));
      for (Range r : proof) {
        m.addRecord(r.record, Section.AUTHORITY);
        r.sigs.forEach(s -> m.addRecord(s, Section.AUTHORITY));
      }
    }
    return m.toWire();
  }

  private static long expiry(Zone zone, List<Range> proof) {
    long e = zone.soaExpires;
    for (Range r : proof) {
      e = Math.min(e, r.expiresAt);
    }
    return e;
  }

  private static long earliestExpiry(List<RRSIGRecord> sigs) {
    long e = Long.MAX_VALUE;
    for (RRSIGRecord s : sigs) {
      e = Math.min(e, s.getExpire().toEpochMilli());
    }
    return e;
  }

  /** The hash an NSEC3 record's owner stands for, or null when it is not one label below {@code apex}. */
  private static Hash nsec3Owner(NSEC3Record r, Name apex) {
    Name owner = r.getName();
    if (owner.labels() != apex.labels() + 1 || !owner.subdomain(apex)) {
      return null;
    }
    try {
      byte[] hash = BASE32HEX.fromString(owner.getLabelString(0).toUpperCase(Locale.ROOT));
      return hash == null || hash.length == 0 ? null : new Hash(hash);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static boolean sameChain(NSEC3Record a, NSEC3Record b) {
    return a.getHashAlgorithm() == b.getHashAlgorithm() && a.getIterations() == b.getIterations()
        && Arrays.equals(a.getSalt(), b.getSalt());
  }

  /** The longest name both {@code a} and {@code b} are at or below. */
  private static Name commonAncestor(Name a, Name b) {
    int la = a.labels();
    int lb = b.labels();
    int common = 0;
    while (common < la && common < lb
        && a.getLabelString(la - 1 - common).equalsIgnoreCase(b.getLabelString(lb - 1 - common))) {
      common++;
    }
    return new Name(a, la - common);
  }

  /** {@code *.encloser}, or null when that name would be too long. */
  private static Name wildcard(Name encloser) {
    try {
      return Name.concatenate(Name.fromConstantString("*"), encloser);
    } catch (Exception e) {
      return null;
    }
  }

  private void forget(Zone zone, Range range) {
    if (kept.remove(range.place, range)) {
      bytes -= range.bytes;
    }
    if (range.place.owner instanceof Hash h) {
      zone.nsec3.remove(h, range);
    } else {
      zone.nsec.remove((Name) range.place.owner, range);
    }
  }

  /** Drops the ranges kept longest ago while over a bound, and zones left with nothing. */
  private void evict(long now) {
    Iterator<Range> oldest = kept.values().iterator();
    while ((kept.size() > maxRanges || bytes > maxBytes) && oldest.hasNext()) {
      Range r = oldest.next();
      oldest.remove();
      bytes -= r.bytes;
      Zone zone = zones.get(r.place.zone);
      if (r.place.owner instanceof Hash h) {
        zone.nsec3.remove(h, r);
      } else {
        zone.nsec.remove((Name) r.place.owner, r);
      }
    }
    zones.values().removeIf(z -> z.nsec.isEmpty() && z.nsec3.isEmpty() && z.soaExpires <= now);
  }
}
