package io.shoal.dnssec;

import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.NSECRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Type;

/**
 * What a {@link DenialCache} keeps of one signed zone: its SOA with RRSIGs, its NSEC ranges in
 * canonical name order and its NSEC3 ranges in hash order, and the records those ranges are made
 * of. The cache's lock guards every field.
 */
final class DenialZone {

  /** An NSEC3 hash, in the order of the chain (unsigned bytes). */
  record Hash(byte[] bytes) implements Comparable<Hash> {
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
  record Place(Name zone, Object owner) {}

  /** One NSEC or NSEC3 record, its signatures, and until when it proves anything. */
  record Range(Place place, Record record, List<RRSIGRecord> sigs, long expiresAt, int bytes) {
    /** Whether names below this owner are not this zone's to deny: a delegation or a DNAME. */
    boolean cutsBelow() {
      return hasType(Type.DNAME) || (hasType(Type.NS) && !hasType(Type.SOA));
    }

    boolean hasType(int type) {
      return record instanceof NSECRecord n ? n.hasType(type) : ((NSEC3Record) record).hasType(type);
    }
  }

  final Name apex;
  SOARecord soa;
  List<RRSIGRecord> soaSigs = List.of();
  long soaExpires;
  final TreeMap<Name, Range> nsec = new TreeMap<>();
  final TreeMap<Hash, Range> nsec3 = new TreeMap<>();
  /** An NSEC3 record of the kept chain: its hash algorithm, iterations and salt hash names. */
  NSEC3Record nsec3Params;

  DenialZone(Name apex) {
    this.apex = apex;
  }

  /** Drops {@code range} from this zone's ranges, if it is the one kept at its owner. */
  void remove(Range range) {
    if (range.place().owner() instanceof Hash h) {
      nsec3.remove(h, range);
    } else {
      nsec.remove((Name) range.place().owner(), range);
    }
  }
}
