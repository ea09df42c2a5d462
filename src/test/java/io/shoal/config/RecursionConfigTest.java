package io.shoal.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.testing.ShoalCli;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keys of a resolving upstream group: mode, root hints, query_loopback and the limits. */
class RecursionConfigTest {
  @TempDir
  Path dir;

  private static Config config(String overrides) {
    return ConfigFactory.parseString("shoal.upstreams.default.servers = [\"192.0.2.1:53\"]\n" + overrides)
        .withFallback(ConfigLoader.load(Optional.empty()));
  }

  private static InvalidConfigException rejected(String overrides) {
    Config c = config(overrides);
    return assertThrows(InvalidConfigException.class, () -> ShoalConfig.from(c));
  }

  @Test
  void forwardIsTheDefaultAndReadsNoRecursionKeys() {
    UpstreamGroupSettings g = ShoalConfig.from(config("")).upstreams().get("default");
    assertEquals(UpstreamGroupSettings.Mode.FORWARD, g.mode());
    assertNull(g.recursion());
    InvalidConfigException e = rejected("shoal.upstreams.default.query_loopback = on");
    assertTrue(e.getMessage().contains("shoal.upstreams.default.query_loopback"), e.getMessage());
  }

  @Test
  void recursiveModeShipsTheIanaRootHintsAndSafeLimits() throws Exception {
    UpstreamGroupSettings g = ShoalConfig.from(config("shoal.upstreams.default.mode = recursive")).upstreams()
        .get("default");
    assertEquals(UpstreamGroupSettings.Mode.RECURSIVE, g.mode());
    RecursionSettings r = g.recursion();
    assertTrue(r.hintAddresses().contains(InetAddress.getByName("198.41.0.4")), "a.root-servers.net");
    assertEquals(26, r.hintAddresses().size(), "13 root servers, IPv4 and IPv6");
    assertFalse(r.queryLoopback());
    assertEquals(64, r.maxQueries());
    assertEquals(3, r.maxNsNames());
    assertEquals(11, r.maxCnameLinks());
    assertEquals(Duration.ofSeconds(8), g.deadline());
  }

  @Test
  void aHintsFileAndLimitsAreRead() throws Exception {
    Path hints = Files.writeString(dir.resolve("root.hints"),
        ".  3600000 IN NS a.root-servers.\na.root-servers. 3600000 IN A 127.53.1.1\n");
    RecursionSettings r = ShoalConfig.from(config("shoal.upstreams.default { mode = recursive, root_hints = \""
        + hints + "\", query_loopback = on, max_queries = 32, max_ns_names = 2 }")).upstreams().get("default")
        .recursion();
    assertEquals(java.util.List.of(InetAddress.getByName("127.53.1.1")), r.hintAddresses());
    assertTrue(r.queryLoopback());
    assertEquals(32, r.maxQueries());
    assertEquals(2, r.maxNsNames());
  }

  @Test
  void aBadHintsFileIsNamedWithItsLine() throws Exception {
    Path hints = Files.writeString(dir.resolve("bad.hints"),
        ".  3600000 IN NS a.root-servers.\na.root-servers. 3600000 IN A 300.1.1.1\n");
    InvalidConfigException e = rejected("shoal.upstreams.default { mode = recursive, root_hints = \"" + hints + "\" }");
    assertTrue(e.getMessage().contains("shoal.upstreams.default.root_hints"), e.getMessage());
    assertTrue(e.getMessage().contains(hints + ":2"), e.getMessage());
    Path missing = dir.resolve("missing.hints");
    e = rejected("shoal.upstreams.default { mode = recursive, root_hints = \"" + missing + "\" }");
    assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    Path noAddress = Files.writeString(dir.resolve("empty.hints"), ".  3600000 IN NS a.root-servers.\n");
    e = rejected("shoal.upstreams.default { mode = recursive, root_hints = \"" + noAddress + "\" }");
    assertTrue(e.getMessage().contains("no root server with an address"), e.getMessage());
  }

  @Test
  void shoalConfigExitsTwoOnABadHintsFile() throws Exception {
    Path hints = Files.writeString(dir.resolve("bad.hints"), ". 3600000 IN NS a.root-servers.\nthis is not a record\n");
    Path conf = Files.writeString(dir.resolve("shoal.conf"),
        "shoal.upstreams.default { mode = recursive, root_hints = \"" + hints + "\" }\n");
    assertEquals(2, ShoalCli.run("config", "--config", conf.toString()).status());
  }

  @Test
  void badModesAndLimitsAreRefusedByKey() {
    InvalidConfigException e = rejected("shoal.upstreams.default.mode = iterate");
    assertTrue(e.getMessage().contains("forward, recursive, stub"), e.getMessage());
    e = rejected("shoal.upstreams.default { mode = recursive, max_queries = 0 }");
    assertTrue(e.getMessage().contains("shoal.upstreams.default.max_queries"), e.getMessage());
    e = rejected("shoal.upstreams.default { mode = stub, servers = [\"resolv.conf\"] }");
    assertTrue(e.getMessage().contains("shoal.upstreams.default.servers"), e.getMessage());
  }

  @Test
  void aStubGroupKeepsItsServersAndPorts() {
    UpstreamGroupSettings g = ShoalConfig.from(config("shoal.upstreams.default.mode = stub\n"
        + "shoal.upstreams.default.servers = [\"127.0.0.1:5300\"]")).upstreams().get("default");
    assertEquals(UpstreamGroupSettings.Mode.STUB, g.mode());
    assertEquals(5300, g.servers().get(0).getPort());
  }
}
