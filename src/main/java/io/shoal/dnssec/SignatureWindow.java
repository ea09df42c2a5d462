package io.shoal.dnssec;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;

/**
 * Names the reason of a bogus answer more exactly than dnsjava 3.6 does for answer RRsets: its
 * positive-answer path reports every failed answer signature as DNSSEC Bogus, though the verifier
 * knew it was expired. No cryptography here, only the signatures' validity windows: when every
 * RRSIG in the answer section is past its expiration (or before its inception) at {@code now},
 * no signature could have validated, and the extended error says so (7 or 8).
 */
final class SignatureWindow {
  private SignatureWindow() {}

  /**
   * {@code code}, or Signature Expired / Not Yet Valid when every answer RRSIG is outside its
   * window, or RRSIGs Missing when the upstream's answer (asked with DO) holds no RRSIG in any
   * section: a bogus answer without signatures is what an upstream that strips them gives, and
   * Unbound says 10 for it where dnsjava says 6.
   */
  static int refine(byte[] upstreamAnswer, Instant now, int code) {
    List<RRSIGRecord> sigs = new ArrayList<>();
    boolean anySignature = false;
    try {
      Message m = new Message(upstreamAnswer);
      for (Record r : m.getSection(Section.ANSWER)) {
        if (r instanceof RRSIGRecord sig) {
          sigs.add(sig);
        }
      }
      for (int section = Section.ANSWER; section <= Section.ADDITIONAL; section++) {
        for (Record r : m.getSection(section)) {
          anySignature |= r.getType() == org.xbill.DNS.Type.RRSIG;
        }
      }
    } catch (IOException e) {
      return code;
    }
    if (!anySignature) {
      return ExtendedErrorCodeOption.RRSIGS_MISSING;
    }
    return refine(sigs, now, code);
  }

  /** {@code code}, or Signature Expired / Not Yet Valid when every one of {@code sigs} is outside its window. */
  static int refine(List<RRSIGRecord> sigs, Instant now, int code) {
    boolean any = false;
    boolean allExpired = true;
    boolean allEarly = true;
    for (RRSIGRecord sig : sigs) {
      any = true;
      allExpired &= sig.getExpire().isBefore(now);
      allEarly &= sig.getTimeSigned().isAfter(now);
    }
    if (!any) {
      return code;
    }
    return allExpired ? ExtendedErrorCodeOption.SIGNATURE_EXPIRED
        : allEarly ? ExtendedErrorCodeOption.SIGNATURE_NOT_YET_VALID : code;
  }
}
