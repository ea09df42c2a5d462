package io.shoal.dnssec;

import io.shoal.dnssec.DenialZone.Hash;
import io.shoal.dnssec.DenialZone.Place;
import io.shoal.dnssec.DenialZone.Range;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.xbill.DNS.DClass;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.NSECRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
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
 *
 * <p>Each zone's ranges are a {@link DenialZone}; {@link DenialSynthesis} makes the denials from them.
 */
public final class DenialCache {
  /** Ranges kept per upstream group: a few zones' worth of random-subdomain floods. */
  static final int MAX_RANGES = 20_000;
  /** Wire bytes of the kept records per upstream group (the Java objects cost about three times that). */
  static final long MAX_BYTES = 8L << 20;

  private static final base32 BASE32HEX = new base32(base32.Alphabet.BASE32HEX, false, false);

  /** A denial made from kept ranges: the reply's wire (TTLs as signed) and until when it holds. */
  public record Synthesized(byte[] wire, boolean nxdomain, long expiresAtMillis) {}

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Map<Name, DenialZone> zones = new HashMap<>();
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
      DenialZone zone = zones.computeIfAbsent(apex, DenialZone::new);
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
        if (old != null && old.expiresAt() > now && old.record().equals(r)) {
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
      DenialZone zone = zoneOf(qname);
      if (zone == null || zone.soa == null || zone.soaExpires <= now) {
        return null;
      }
      return DenialSynthesis.synthesize(zone, qname, qtype, dnssecOk, now);
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
  private DenialZone zoneOf(Name qname) {
    for (int strip = 0; strip < qname.labels(); strip++) {
      DenialZone z = zones.get(strip == 0 ? qname : new Name(qname, strip));
      if (z != null) {
        return z;
      }
    }
    return null;
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

  private void forget(DenialZone zone, Range range) {
    if (kept.remove(range.place(), range)) {
      bytes -= range.bytes();
    }
    zone.remove(range);
  }

  /** Drops the ranges kept longest ago while over a bound, and zones left with nothing. */
  private void evict(long now) {
    Iterator<Range> oldest = kept.values().iterator();
    while ((kept.size() > maxRanges || bytes > maxBytes) && oldest.hasNext()) {
      Range r = oldest.next();
      oldest.remove();
      bytes -= r.bytes();
      zones.get(r.place().zone()).remove(r);
    }
    zones.values().removeIf(z -> z.nsec.isEmpty() && z.nsec3.isEmpty() && z.soaExpires <= now);
  }
}
