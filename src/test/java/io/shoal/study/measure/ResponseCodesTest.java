package io.shoal.study.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The rcode counts of dnsperf's statistics block. */
class ResponseCodesTest {
  @Test
  void everyCodeDnsperfPrintsIsCountedInItsOrder() {
    String out = "Statistics:\n\n  Queries sent:         5000\n  Queries completed:    5000 (100.00%)\n"
        + "  Queries lost:         0 (0.00%)\n\n  Response codes:       NOERROR 4990 (99.80%), SERVFAIL 7 (0.14%), "
        + "NXDOMAIN 3 (0.06%)\n  Average packet size:  request 43, response 160\n";
    Map<String, Long> codes = ResponseCodes.parse(out);
    assertEquals(Map.of("NOERROR", 4990L, "SERVFAIL", 7L, "NXDOMAIN", 3L), codes);
    assertEquals(java.util.List.of("NOERROR", "SERVFAIL", "NXDOMAIN"), java.util.List.copyOf(codes.keySet()));
    assertEquals(7, ResponseCodes.of(codes, "SERVFAIL"));
    assertEquals(0, ResponseCodes.of(codes, "REFUSED"));
  }

  @Test
  void aRunWithoutAnswersHasNoCodesAndOutputWithoutStatisticsFails() {
    assertEquals(Map.of(), ResponseCodes.parse("  Response codes:       \n  Average packet size:  request 27\n"));
    assertThrows(IllegalArgumentException.class, () -> ResponseCodes.parse("dnsperf: invalid option\n"));
  }
}
