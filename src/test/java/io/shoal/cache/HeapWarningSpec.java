package io.shoal.cache;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.ShoalProcess;
import java.util.List;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;

/** A node whose heap cannot hold max_entries says so in its log at start, with the -Xmx that can. */
public class HeapWarningSpec extends JUnitSuite {

  /** 1,000,000 answers: 256 MiB and 1,000,000 x 1 KiB, 1232.6 MiB, rounded up. */
  private static final String[] SERVE = {"serve", "-Dshoal.listen.udp=127.0.0.1:0", "-Dshoal.listen.tcp=127.0.0.1:0",
      "-Dshoal.upstreams.default.servers.0=127.0.0.1:9", "-Dshoal.metrics.enabled=off",
      "-Dshoal.caches.answers.max_entries=1000000"};

  private static String startAndStop(String heap) throws Exception {
    // G1 as the launchers use it: its largest heap is the -Xmx given (Serial's leaves a survivor out).
    ShoalProcess p = ShoalProcess.launchWith(null, List.of("-XX:+UseG1GC", heap), SERVE);
    try {
      p.awaitStarted(90);
    } finally {
      p.process.destroy();
      assertEquals(p.output(), 0, p.exit(30));
    }
    return p.output();
  }

  @Test
  public void aHeapTooSmallForMaxEntriesIsLoggedWithTheRemedyAndTheNodeStillServes() throws Exception {
    String out = startAndStop("-Xmx128m");
    assertTrue(out, out.contains("WARN"));
    assertTrue(out, out.contains("the Java heap (at most 128 MiB) is smaller than the 1232 MiB that 1000000 cached"
        + " answers (max_entries) may need"));
    assertTrue(out, out.contains("Start it with -Xmx1233m (bin/shoal does so), or lower max_entries"));
  }

  @Test
  public void theHeapConfigJavaHeapPrintsIsEnoughAndNothingIsLogged() throws Exception {
    String out = startAndStop("-Xmx1233m");
    assertFalse(out, out.contains("is smaller than the"));
    assertTrue(out, out.contains("answering on"));
  }
}
