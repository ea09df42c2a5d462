package io.shoal.transport.https;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** How a GET's query string yields its dns parameter. */
class DohExchangeTest {
  @Test
  void theDnsParameterIsFoundAmongOthersAndPercentDecoded() {
    assertEquals("AAAB", DohExchange.parameter("dns=AAAB", "dns"));
    assertEquals("AAAB", DohExchange.parameter("ct=x&dns=AAAB&z", "dns"));
    assertEquals("AA==", DohExchange.parameter("dns=AA%3D%3d", "dns"));
    assertEquals("A%zz", DohExchange.parameter("dns=A%zz", "dns"));
    assertEquals("", DohExchange.parameter("dns=", "dns"));
  }

  @Test
  void aParameterThatOnlyStartsLikeDnsIsNotIt() {
    assertNull(DohExchange.parameter("dnsx=AAAB", "dns"));
    assertNull(DohExchange.parameter("xdns=AAAB&dns", "dns"));
    assertNull(DohExchange.parameter("", "dns"));
  }
}
