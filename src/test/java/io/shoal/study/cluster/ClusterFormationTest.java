package io.shoal.study.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.measure.DnsperfReportTest;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** Akka Management's {@code GET /cluster/members}, as recorded from real shoal nodes. */
class ClusterFormationTest {

  @Test
  void threeNodesUp() throws IOException {
    ClusterFormation.View v = ClusterFormation.View.parse(DnsperfReportTest.resource("cluster/members-formed.json"));
    assertEquals(new ClusterFormation.View(3, 3, 0), v);
    assertTrue(v.settledAt(3));
    assertFalse(v.settledAt(2));
  }

  @Test
  void aKilledNodeStaysUpButUnreachableUntilItIsDowned() throws IOException {
    ClusterFormation.View v = ClusterFormation.View.parse(
        DnsperfReportTest.resource("cluster/members-unreachable.json"));
    assertEquals(new ClusterFormation.View(3, 3, 1), v);
    assertFalse(v.settledAt(3));
    assertFalse(v.settledAt(2));
  }

  @Test
  void afterTheKilledNodeWasRemoved() throws IOException {
    ClusterFormation.View v = ClusterFormation.View.parse(
        DnsperfReportTest.resource("cluster/members-after-kill.json"));
    assertTrue(v.settledAt(2));
  }

  @Test
  void somethingElseIsNoView() {
    assertNull(ClusterFormation.View.parse("<html>Service Unavailable</html>"));
    assertNull(ClusterFormation.View.parse("{\"members\": []}"));
    assertEquals(new ClusterFormation.View(1, 2, 0), ClusterFormation.View.parse(
        "{\"members\":[{\"status\":\"Up\"},{\"status\":\"Joining\"}],\"unreachable\":[]}"));
  }

  @Test
  void theRemoteLookupOverheadIsPerRemoteLookup() {
    // recorded probe: first pass 10.32 ms mean over 1000 queries, 570 of them remote; repeat 6.873 ms
    assertEquals((10.32 - 6.873) * 1000 / 570, RemoteLookupProbe.overheadMillis(10.32, 6.873, 1000, 570), 1e-9);
    assertEquals(0.5, RemoteLookupProbe.overheadMillis(1.0, 0.5, 100, 100), 1e-9);
    assertNull(RemoteLookupProbe.overheadMillis(1.0, 0.5, 100, 0));
    assertNull(RemoteLookupProbe.overheadMillis(1.0, 0.5, 0, 0));
  }
}
