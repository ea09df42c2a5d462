package io.shoal.policy;

import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.Rcode;
import java.io.ByteArrayOutputStream;
import kamon.metric.Counter;

/**
 * What one trigger of a list does: its action, the records it answers with (RPZ local data, or the
 * CNAME of a redirect), and the counter its hits go to.
 *
 * @param types for LOCAL_DATA and CNAME: the record types held, parallel to {@code sets}
 * @param sets each type's records in wire form without owner (type, class, TTL, RDLENGTH, RDATA)
 */
record Rule(PolicyAction action, String list, int[] types, byte[][] sets, int[] counts, Counter hits) {
  /** RFC 8914 Blocked: a list (or an RPZ rule) turned the name away. */
  static final ExtendedError BLOCKED = new ExtendedError(15, "blocked");
  /** RFC 8914 Forged Answer: the answer was written by policy (RPZ local data or redirect). */
  static final ExtendedError FORGED = new ExtendedError(4, "");
  private static final byte[] NO_RECORDS = new byte[0];
  private static final int TYPE_ANY = 255;

  /** A rule with no records of its own. */
  static Rule of(PolicyAction action, String list, Counter hits) {
    return new Rule(action, list, new int[0], new byte[0][], new int[0], hits);
  }

  /** The reply this rule gives {@code query}; {@link ResponsePolicy#DROP} for no reply; null to resolve it. */
  byte[] reply(DnsQuery query, int sizeLimit) {
    switch (action) {
      case NXDOMAIN:
        return query.ownAnswer(Rcode.NXDOMAIN, true, NO_RECORDS, 0, 0, BLOCKED, sizeLimit);
      case NODATA:
        return query.ownAnswer(Rcode.NOERROR, true, NO_RECORDS, 0, 0, BLOCKED, sizeLimit);
      case REFUSE:
        return query.refused(BLOCKED);
      case DROP:
        return ResponsePolicy.DROP;
      case PASSTHRU:
        return null;
      default:
        return records(query, sizeLimit);
    }
  }

  /** This rule's records of the query's type (a redirect's CNAME for any type), owned by the question's name. */
  private byte[] records(DnsQuery query, int sizeLimit) {
    int qtype = query.qtype();
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    int count = 0;
    for (int i = 0; i < types.length; i++) {
      if (action == PolicyAction.CNAME || qtype == TYPE_ANY || types[i] == qtype) {
        int pos = 0;
        byte[] set = sets[i];
        while (pos < set.length) {
          int len = 10 + (((set[pos + 8] & 0xFF) << 8) | (set[pos + 9] & 0xFF));
          out.write(0xC0);
          out.write(12);
          out.write(set, pos, len);
          pos += len;
        }
        count += counts[i];
      }
    }
    return query.ownAnswer(Rcode.NOERROR, true, count == 0 ? NO_RECORDS : out.toByteArray(), count, 0, FORGED,
        sizeLimit);
  }
}
