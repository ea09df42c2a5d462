package io.shoal.study.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which programs a scenario needs, and what a user without them is told. */
class PrerequisitesTest {

  @Test
  void aMissingProgramIsNamedWithTheCommandThatInstallsIt(@TempDir Path dir) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (StartedProcesses p = new StartedProcesses()) {
      // not root: nothing is installed, the advice says what to do
      Prerequisites.MissingTools e = assertThrows(Prerequisites.MissingTools.class, () -> Prerequisites.ensure(
          List.of("shoal-study-no-such-program"), false, new PrintStream(out), p, dir));
      assertTrue(e.advice().contains("shoal-study-no-such-program"), e.advice());
      assertTrue(e.advice().contains("sudo apt-get install -y shoal-study-no-such-program"), e.advice());
    }
  }

  @Test
  void eachKindBringsItsBinariesAndIsolationBringsUnshareAndIp() {
    Member unbound = new Member("u", MemberKind.UNBOUND, com.typesafe.config.ConfigFactory.empty());
    Member kresd = new Member("k", MemberKind.KRESD, com.typesafe.config.ConfigFactory.empty());
    assertEquals(List.of("dnsperf", "knotd", "knotc", "unbound", "unbound-control", "tar", "xz"),
        Prerequisites.binariesFor(List.of(unbound), false));
    assertEquals(List.of("dnsperf", "knotd", "knotc", "kresd", "kres-cache-gc", "unshare", "ip", "tar", "xz"),
        Prerequisites.binariesFor(List.of(kresd), true));
    assertEquals("knot", Prerequisites.packageOf("knotd"));
    assertEquals("dnsmasq-base", Prerequisites.packageOf("dnsmasq"));
    assertEquals("pdns-recursor", Prerequisites.packageOf("rec_control"));
  }

  @Test
  void aMemberQueriedOverDotOrDohBringsOpensslForItsCertificate() {
    Member dot = new Member("d", MemberKind.SHOAL, com.typesafe.config.ConfigFactory.empty(), 1, false, null, null,
        io.shoal.study.scenario.Transport.DOT);
    assertEquals(List.of("dnsperf", "knotd", "knotc", "openssl", "tar", "xz"),
        Prerequisites.binariesFor(List.of(dot), false));
    assertEquals("openssl", Prerequisites.packageOf("openssl"));
  }

  @Test
  void aRobustnessRunWithDotAndDohHoldersBringsOpensslForItsMembersCertificate() {
    io.shoal.study.scenario.Scenario robustness = io.shoal.study.scenario.Scenario.load(
        java.nio.file.Path.of("bench", "scenarios", "robustness.conf"));
    assertEquals(List.of("dnsperf", "knotd", "knotc", "unbound", "unbound-control", "openssl", "tar", "xz"),
        Prerequisites.binariesFor(robustness, List.of(robustness.members().get(1)), false));
    // a scenario without them: as before
    io.shoal.study.scenario.Scenario plain = io.shoal.study.scenario.Scenario.load(
        java.nio.file.Path.of("bench", "scenarios", "query_path.conf"));
    assertEquals(Prerequisites.binariesFor(plain.members(), false, false),
        Prerequisites.binariesFor(plain, plain.members(), false));
  }
}
