package io.shoal.study.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.scenario.LoadSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** dnsperf's command line: the recipe's flags, and -Q for a paced member only. */
class DnsperfTest {
  private static final LoadSettings LOAD =
      new LoadSettings(8, 200, 1, Duration.ofSeconds(30), Duration.ofSeconds(20), null);

  private static List<String> command(LoadSettings load) {
    try (StartedProcesses processes = new StartedProcesses()) {
      Dnsperf dnsperf = new Dnsperf(new Prerequisites.Tools(Map.of("dnsperf", Path.of("/usr/bin/dnsperf"))), processes);
      return dnsperf.command(5353, Path.of("queries-1.txt"), load, load.duration(), List.of("-v"));
    }
  }

  @Test
  void anUnpacedRunHasNoRateLimit() {
    List<String> cmd = command(LOAD);
    assertEquals(List.of("/usr/bin/dnsperf", "-s", "127.0.0.1", "-p", "5353", "-d", "queries-1.txt", "-c", "8", "-q",
        "200", "-T", "1", "-l", "30", "-v"), cmd);
    assertFalse(cmd.contains("-Q"));
  }

  @Test
  void aPacedRunIsHeldToItsQueriesPerSecond() {
    assertEquals(List.of("/usr/bin/dnsperf", "-s", "127.0.0.1", "-p", "5353", "-d", "queries-1.txt", "-c", "8", "-q",
        "200", "-T", "1", "-l", "30", "-Q", "3292", "-v"), command(LOAD.paced(3292)));
    // --quick shortens the window, not the pace
    LoadSettings quick = LOAD.paced(3292).shortened(Duration.ofSeconds(3), Duration.ofSeconds(5));
    assertEquals(3292, quick.maxQps());
    assertEquals(List.of("-l", "3", "-Q", "3292"), command(quick).subList(13, 17));
    assertThrows(IllegalArgumentException.class, () -> LOAD.paced(0));
  }

  @Test
  void theRobustnessHonestClientsAskAtHonestQpsOverUdpAndAsFastAsAnswersComeOverTcp() {
    io.shoal.study.scenario.Scenario s = io.shoal.study.scenario.Scenario.load(
        Path.of("bench", "scenarios", "robustness.conf"));
    io.shoal.study.attack.AttackPhases phases = new io.shoal.study.attack.AttackPhases(s, s.recipe().quick(),
        Path.of("queries-1.txt"), Path.of("dir"), null, System.out);
    List<String> udp = command(phases.honestLoad(io.shoal.study.scenario.AttackPlan.Phase.MISS_FLOOD));
    assertEquals(List.of("/usr/bin/dnsperf", "-s", "127.0.0.1", "-p", "5353", "-d", "queries-1.txt", "-c", "8", "-q",
        "5000", "-T", "1", "-l", "3", "-Q", "10000", "-v"), udp);
    List<String> tcp = command(phases.honestLoad(io.shoal.study.scenario.AttackPlan.Phase.TCP_HOLDERS));
    assertFalse(tcp.contains("-Q"));
    assertEquals("100", tcp.get(tcp.indexOf("-q") + 1));
  }
}
