package io.shoal.dnssec;

import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.dnssec.R;

/**
 * Names a broken delegation the way RFC 8914 does where dnsjava 3.6 does not: when the parent's DS
 * names a key of the child (same key tag and algorithm) but no DNSKEY of the child hashes to its
 * digest, dnsjava reports 6 "DNSSEC Bogus" with its reason "did not match a DS to a DNSKEY". No
 * DNSKEY matches the DS, which is 9 "DNSKEY Missing" ("a DS record existed at a parent, but no
 * supported matching DNSKEY record could be found for the child"), and what Unbound sends for the
 * same zone. A DS whose key tag matches no key at all dnsjava already reports as 9.
 */
final class DsMismatch {
  /** dnsjava's message key for that reason; {@link R} formats it as the validator did. */
  private static final String NO_DS_MATCH = "dnskey.no_ds_match";

  private DsMismatch() {}

  /** {@code code}, or DNSKEY Missing when {@code code} is DNSSEC Bogus for want of a DNSKEY matching the DS. */
  static int refine(int code, String reason) {
    if (code != ExtendedErrorCodeOption.DNSSEC_BOGUS || reason == null) {
      return code;
    }
    return reason.contains(R.get(NO_DS_MATCH)) ? ExtendedErrorCodeOption.DNSKEY_MISSING : code;
  }
}
