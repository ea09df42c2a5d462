package io.shoal.study.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.FileInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class LoopbackPortTest {
  private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

  @Test
  void theEphemeralRangeIsReadWholeFromProc() throws Exception {
    assumeTrue(Files.exists(RANGE), "a Linux host");
    String whole;
    try (FileInputStream in = new FileInputStream(RANGE.toFile())) {
      whole = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    }
    int first = Integer.parseInt(whole.strip().split("\\s+")[0]);
    assertEquals(first, LoopbackPort.ephemeralStart());
  }

  @Test
  void aPickedPortIsBelowTheEphemeralRangeWhereThereIsRoom() throws Exception {
    int start = LoopbackPort.ephemeralStart();
    assumeTrue(start - LoopbackPort.LOWEST >= 1000, "room below the ephemeral range");
    for (int i = 0; i < 20; i++) {
      int port = LoopbackPort.pick();
      assertTrue(port >= LoopbackPort.LOWEST && port < start, "port " + port + " below " + start);
    }
  }
}
