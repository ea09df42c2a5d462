package io.shoal.upstream;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.metrics.ServerMetrics;
import org.junit.jupiter.api.Test;

class UpstreamSelectorTest {
  /**
   * Query IDs are what an off-path attacker must guess: every one in 16 bits, spread over the
   * whole range, also across the refills of the buffer they are drawn from (2,048 IDs each).
   * 400,000 uniform draws leave about 0.2% of the 65,536 values unseen (a standard deviation
   * of about 12 values) and no value drawn 40 times (6.1 on average); a generator stuck on part
   * of the range, or repeating a buffer, fails both.
   */
  @Test
  void queryIdsCoverTheWholeSixteenBitRange() throws Exception {
    try (UpstreamSelector selector = new UpstreamSelector(4, new ServerMetrics())) {
      int[] seen = new int[65536];
      for (int i = 0; i < 400_000; i++) {
        int id = selector.newQueryId();
        assertTrue(id >= 0 && id <= 0xffff, "ID out of 16 bits: " + id);
        seen[id]++;
      }
      int unseen = 0;
      int most = 0;
      for (int n : seen) {
        unseen += n == 0 ? 1 : 0;
        most = Math.max(most, n);
      }
      assertTrue(unseen < 655, unseen + " of 65,536 IDs never drawn in 400,000");
      assertTrue(most < 40, "one ID drawn " + most + " times in 400,000");
    }
  }
}
