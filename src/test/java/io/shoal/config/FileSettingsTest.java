package io.shoal.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.files.FileLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code shoal.files}, and the trust-anchor files read within it. */
class FileSettingsTest {
  private static final String SECRET = "root:$6$s3cr3tSALT$ZmFrZWhhc2hmb3J0ZXN0aW5nb25seQ:19000:0:99999:7:::";
  private static final String DS = "example.test. 3600 IN DS 12345 13 2 "
      + "E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D";

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

  private String anchors(Path file) {
    return "shoal.dnssec { validation = on, trust_anchors = [\"" + file + "\"] }";
  }

  @Test
  void theDefaultsAreTheDocumentedOnes() {
    ShoalConfig c = ShoalConfig.from(config(""));
    assertEquals(FileLimits.DEFAULTS, c.policy().limits());
    assertEquals(FileLimits.DEFAULTS, c.local().limits());
    ShoalConfig set = ShoalConfig.from(config("shoal.files { max_bytes = 1MiB, max_entries = 10, max_include_depth = 0,"
        + " max_generate = 5 }"));
    assertEquals(new FileLimits(1 << 20, 10, 0, 5), set.policy().limits());
  }

  @Test
  void badLimitsNameTheirKey() {
    InvalidConfigException depth = rejected("shoal.files.max_include_depth = 100");
    assertTrue(depth.getMessage().startsWith("shoal.files.max_include_depth: "), depth.getMessage());
    InvalidConfigException bytes = rejected("shoal.files.max_bytes = lots");
    assertTrue(bytes.getMessage().startsWith("shoal.files.max_bytes: "), bytes.getMessage());
    InvalidConfigException typo = rejected("shoal.files.max_entrys = 5");
    assertTrue(typo.getMessage().startsWith("shoal.files.max_entrys: unknown key"), typo.getMessage());
  }

  @Test
  void aTrustAnchorFileOfSecretsIsNotQuoted() throws Exception {
    Path f = Files.writeString(dir.resolve("shadow"), SECRET + "\n");
    InvalidConfigException e = rejected(anchors(f));
    assertTrue(e.getMessage().startsWith("shoal.dnssec.trust_anchors: " + f + " line 1:"), e.getMessage());
    assertFalse(e.getMessage().contains("s3cr3t"), e.getMessage());
  }

  @Test
  void aTrustAnchorFileThatIncludesItselfIsRefused() throws Exception {
    Path f = dir.resolve("self.key");
    Files.writeString(f, DS + "\n$INCLUDE " + f + "\n");
    InvalidConfigException e = rejected(anchors(f));
    assertTrue(e.getMessage().startsWith("shoal.dnssec.trust_anchors: " + f + " line 2:")
        && e.getMessage().contains("cycle"), e.getMessage());
  }

  @Test
  void aTrustAnchorFileThatIsEmptyBinaryADirectoryOrMalformedIsRefused() throws Exception {
    Path empty = Files.writeString(dir.resolve("empty.key"), "");
    assertTrue(rejected(anchors(empty)).getMessage().contains("holds no DS or DNSKEY"));
    Path binary = Files.write(dir.resolve("binary.key"), new byte[] {1, 2, 0, 3});
    assertTrue(rejected(anchors(binary)).getMessage().contains(binary + " line 1: binary data"));
    Path directory = Files.createDirectory(dir.resolve("keys.d"));
    assertTrue(rejected(anchors(directory)).getMessage().contains(directory + ": is a directory"));
    Path ttl = Files.writeString(dir.resolve("ttl.key"), DS + "\nexample.test. 12x IN DS 1 13 2 AA\n");
    InvalidConfigException e = rejected(anchors(ttl));
    assertTrue(e.getMessage().contains(ttl + " line 2: not a valid TTL"), e.getMessage());
    Path ok = Files.writeString(dir.resolve("ok.key"), DS + "\n");
    assertEquals(1, ShoalConfig.from(config(anchors(ok))).dnssec().trustAnchors().size());
  }
}
