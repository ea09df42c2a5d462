package io.shoal.dnssec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;
import org.xbill.DNS.Name;
import org.xbill.DNS.dnssec.R;

class KeysetWindowTest {
  @Test
  void theZoneIsReadFromDnsjavasChainOfTrustReason() throws Exception {
    String text = R.get("validate.bogus.badkey", Name.fromString("sec.example."), R.get("dnskey.ds_match_mismatch"));
    assertEquals(Name.fromString("sec.example."), KeysetWindow.zoneOf(text));
  }

  @Test
  void otherReasonsNameNoZone() {
    assertNull(KeysetWindow.zoneOf(R.get("dnskey.ds_match_mismatch")));
    assertNull(KeysetWindow.zoneOf(""));
  }
}
