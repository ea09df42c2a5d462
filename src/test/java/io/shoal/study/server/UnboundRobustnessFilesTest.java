package io.shoal.study.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.attack.AttackMemberConfig;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The unbound member of the robustness scenario: knotd as a stub-zone, its budgets, the hostile forward-zone. */
class UnboundRobustnessFilesTest {

  private static String written(Member m, Scenario s, Path dir) throws IOException {
    try (StartedProcesses processes = new StartedProcesses()) {
      UnboundPeer peer = new UnboundPeer(m, s.recipe(), dir, new InetSocketAddress("127.0.0.1", 5353), processes,
          new Prerequisites.Tools(Map.of()), null);
      Files.createDirectories(dir);
      peer.writeConfig();
      assertTrue(peer.setupNote().contains("stub-zone") == m.config().hasPath(Member.UNBOUND_STUB_ZONE),
          peer.setupNote());
      return Files.readString(dir.resolve("unbound.conf"));
    }
  }

  @Test
  void theRobustnessUnboundAsksKnotdAsAStubWithItsBudgetsAndForwardsTheHostileZone(@TempDir Path dir)
      throws IOException, InterruptedException {
    Scenario s = Scenario.load(Path.of("bench", "scenarios", "robustness.conf"));
    Member u = s.members().get(1);
    Member hostile = new Member(u.name(), u.kind(), AttackMemberConfig.withHostileForward(u.config(), s.attacks(),
        new InetSocketAddress("127.0.0.1", 5399)));
    String conf = written(hostile, s, dir.resolve("u"));
    assertTrue(conf.contains("stub-zone:\n  name: \"bench.test.\"\n  stub-addr: 127.0.0.1@5353\n"), conf);
    assertTrue(conf.contains("forward-zone:\n  name: \"hostile.test.\"\n  forward-addr: 127.0.0.1@5399\n"), conf);
    assertFalse(conf.contains("forward-addr: 127.0.0.1@5353"), conf);
    assertTrue(conf.contains("  ratelimit: 3000\n"), conf);
    assertTrue(conf.contains("  incoming-num-tcp: 1024\n"), conf);
    assertTrue(conf.contains("  num-threads: 1\n"), conf);
    // as many answers as shoal's max_entries
    assertTrue(conf.contains("  msg-cache-size: " + s.recipe().maxEntries() * UnboundPeer.MSG_BYTES_PER_ENTRY), conf);
    Path checkconf = Path.of("/usr/sbin/unbound-checkconf");
    if (Files.isExecutable(checkconf)) {
      Process p = new ProcessBuilder(checkconf.toString(), dir.resolve("u").resolve("unbound.conf").toString())
          .redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      assertTrue(p.waitFor(30, TimeUnit.SECONDS));
      assertEquals(0, p.exitValue(), out);
    }
  }

  @Test
  void otherStudiesUnboundStillForwards(@TempDir Path dir) throws IOException {
    Scenario s = Scenario.load(Path.of("bench", "scenarios", "peers.conf"));
    Member u = s.members().stream().filter(m -> m.name().equals("unbound")).findFirst().orElseThrow();
    String conf = written(u, s, dir.resolve("p"));
    assertTrue(conf.contains("forward-zone:\n  name: \"bench.test.\"\n  forward-addr: 127.0.0.1@5353\n"), conf);
    assertFalse(conf.contains("stub-zone"), conf);
    assertFalse(conf.contains("hostile"), conf);
  }

  @Test
  void unboundsRefusalsAreItsRequestListAndIpRatelimitCounters() {
    assertEquals(Map.of("requestlist_exceeded", 12L, "requestlist_overwritten", 3L, "ip_ratelimited", 0L,
        "ratelimited", 90089L),
        UnboundPeer.refusals(Map.of("total.requestlist.exceeded", "12", "total.requestlist.overwritten", "3",
            "total.num.queries", "99", "num.query.ratelimited", "90089")));
  }
}
