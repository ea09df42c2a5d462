package io.shoal.dnssec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.dnssec.R;

class DsMismatchTest {
  private static final String CHAIN = "Could not establish a chain of trust to keys for [child.example.]. Reason: ";

  @Test
  void aDsMatchingNoKeysDigestIsDnskeyMissing() {
    assertEquals(ExtendedErrorCodeOption.DNSKEY_MISSING,
        DsMismatch.refine(ExtendedErrorCodeOption.DNSSEC_BOGUS, CHAIN + R.get("dnskey.no_ds_match")));
  }

  @Test
  void otherBogusReasonsStayAsTheyAre() {
    assertEquals(ExtendedErrorCodeOption.DNSSEC_BOGUS,
        DsMismatch.refine(ExtendedErrorCodeOption.DNSSEC_BOGUS, CHAIN + R.get("dnskey.no_match")));
    assertEquals(ExtendedErrorCodeOption.DNSSEC_BOGUS, DsMismatch.refine(ExtendedErrorCodeOption.DNSSEC_BOGUS, null));
    assertEquals(ExtendedErrorCodeOption.SIGNATURE_EXPIRED,
        DsMismatch.refine(ExtendedErrorCodeOption.SIGNATURE_EXPIRED, CHAIN + R.get("dnskey.no_ds_match")));
  }
}
