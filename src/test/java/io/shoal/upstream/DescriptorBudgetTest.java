package io.shoal.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The upstream socket cap leaves room for the TCP listener, the LMDB shards and a reserve. */
class DescriptorBudgetTest {

  @Test
  void halfOfWhatTheOthersLeave() {
    // 4096 files: 256 reserved, the 100 TCP connections configured, 2 x 16 for LMDB shards, half
    // of the rest.
    assertEquals((4096 - 256 - 100 - 32) / 2, DescriptorBudget.upstreamSockets(4096, 100, 16));
  }

  @Test
  void neverBelowTheFloorNorAboveTheCeiling() {
    assertEquals(DescriptorBudget.MIN, DescriptorBudget.upstreamSockets(256, 16, 0));
    assertEquals(DescriptorBudget.MAX, DescriptorBudget.upstreamSockets(1 << 20, 16384, 16));
  }
}
