package io.shoal.dnssec;

import io.shoal.dnssec.DenialZone.Hash;
import io.shoal.dnssec.DenialZone.Range;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.NSECRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Makes a denial from the ranges a {@link DenialCache} keeps of one zone (RFC 8198): finds the
 * NSEC or NSEC3 ranges that prove a name or type absent, and writes the reply that carries them.
 * Reads the zone only; the caller holds the cache's read lock.
 */
final class DenialSynthesis {

  private DenialSynthesis() {}

  /**
   * The denial of {@code qname}/{@code qtype} that {@code zone}'s live ranges prove at {@code now},
   * or null when they prove none; see {@link DenialCache#synthesize}.
   */
  static DenialCache.Synthesized synthesize(DenialZone zone, Name qname, int qtype, boolean dnssecOk, long now) {
    List<Range> proof = zone.nsec.isEmpty() ? null : nsecProof(zone, qname, qtype, now);
    if (proof == null && !zone.nsec3.isEmpty()) {
      proof = nsec3Proof(zone, qname, qtype, now);
    }
    if (proof == null) {
      return null;
    }
    boolean nxdomain = !proof.get(0).record().getName().equals(qname) && !matchesHashed(proof.get(0), qname);
    return new DenialCache.Synthesized(
        reply(zone, proof, qname, qtype, nxdomain, dnssecOk), nxdomain, expiry(zone, proof));
  }

  /** NSEC: [matching record] for NODATA, or [covering, wildcard's covering] for NXDOMAIN. */
  private static List<Range> nsecProof(DenialZone zone, Name qname, int qtype, long now) {
    Map.Entry<Name, Range> floor = zone.nsec.floorEntry(qname);
    if (floor == null || floor.getValue().expiresAt() <= now) {
      return null;
    }
    Range at = floor.getValue();
    if (floor.getKey().equals(qname)) {
      NSECRecord n = (NSECRecord) at.record();
      boolean delegation = n.hasType(Type.NS) && !n.hasType(Type.SOA);
      return delegation || n.hasType(qtype) || n.hasType(Type.CNAME) || n.hasType(Type.DNAME) ? null : List.of(at);
    }
    if (!covers(at, qname)) {
      return null;
    }
    Name next = ((NSECRecord) at.record()).getNext();
    Name encloser = commonAncestor(qname, at.record().getName());
    Name other = commonAncestor(qname, next);
    if (other.labels() > encloser.labels() && other.subdomain(zone.apex)) {
      encloser = other;
    }
    Name wildcard = wildcard(encloser);
    if (wildcard == null) {
      return null;
    }
    Map.Entry<Name, Range> wfloor = zone.nsec.floorEntry(wildcard);
    if (wfloor == null || wfloor.getValue().expiresAt() <= now || wfloor.getKey().equals(wildcard)
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
    Name owner = range.record().getName();
    Name next = ((NSECRecord) range.record()).getNext();
    boolean last = next.compareTo(owner) <= 0; // the chain's last record points back to the apex
    boolean inside = owner.compareTo(name) < 0 && (last || name.compareTo(next) < 0);
    return inside && !(name.subdomain(owner) && range.cutsBelow()) && !(!last && next.subdomain(name));
  }

  /**
   * NSEC3: [matching record] for NODATA, or [closest encloser's record, next closer's covering,
   * wildcard's covering] for NXDOMAIN.
   */
  private static List<Range> nsec3Proof(DenialZone zone, Name qname, int qtype, long now) {
    try {
      NSEC3Record params = zone.nsec3Params;
      Range own = nsec3At(zone, new Hash(params.hashName(qname)), now);
      if (own != null) {
        NSEC3Record n = (NSEC3Record) own.record();
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

  private static Range nsec3At(DenialZone zone, Hash hash, long now) {
    Range r = zone.nsec3.get(hash);
    return r != null && r.expiresAt() > now ? r : null;
  }

  /** The NSEC3 range strictly covering {@code hash}, or null. */
  private static Range nsec3Covering(DenialZone zone, Hash hash, long now) {
    Map.Entry<Hash, Range> floor = zone.nsec3.lowerEntry(hash);
    if (floor == null) {
      // Below the first owner kept: only the chain's last record (pointing back round) covers it.
      floor = zone.nsec3.lastEntry();
      Hash next = new Hash(((NSEC3Record) floor.getValue().record()).getNext());
      boolean wraps = next.compareTo(floor.getKey()) <= 0;
      return wraps && hash.compareTo(next) < 0 && floor.getValue().expiresAt() > now ? floor.getValue() : null;
    }
    Range r = floor.getValue();
    Hash next = new Hash(((NSEC3Record) r.record()).getNext());
    boolean wraps = next.compareTo(floor.getKey()) <= 0;
    return (wraps || hash.compareTo(next) < 0) && r.expiresAt() > now ? r : null;
  }

  /** Whether {@code range} is an NSEC3 record whose hashed owner is {@code qname}'s (a NODATA proof). */
  private static boolean matchesHashed(Range range, Name qname) {
    if (!(range.record() instanceof NSEC3Record n3)) {
      return false;
    }
    try {
      return range.place().owner().equals(new Hash(n3.hashName(qname)));
    } catch (NoSuchAlgorithmException e) {
      return false;
    }
  }

  private static byte[] reply(DenialZone zone, List<Range> proof, Name qname, int qtype, boolean nxdomain, boolean dnssecOk) {
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
        m.addRecord(r.record(), Section.AUTHORITY);
        r.sigs().forEach(s -> m.addRecord(s, Section.AUTHORITY));
      }
    }
    return m.toWire();
  }

  private static long expiry(DenialZone zone, List<Range> proof) {
    long e = zone.soaExpires;
    for (Range r : proof) {
      e = Math.min(e, r.expiresAt());
    }
    return e;
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
}
