package io.shoal.config;

import io.shoal.cache.CacheSettings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.cache.WhenFull;
import io.shoal.ingress.FillMode;
import io.shoal.wire.ReplyPolicy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Validation of the {@code shoal} configuration: good defaults, and bad values named by key. */
class ShoalConfigTest {
  /** Pins the upstream so the test machine's /etc/resolv.conf does not matter. */
  private static final String FIXED_UPSTREAM = "shoal.upstreams.default.servers = [\"127.0.0.1:5300\"]\n";

  private static Config config(String overrides) {
    return ConfigFactory.parseString(FIXED_UPSTREAM + overrides)
        .withFallback(ConfigLoader.load(Optional.empty()));
  }

  private static InvalidConfigException rejected(String overrides) {
    Config c = config(overrides);
    return assertThrows(InvalidConfigException.class, () -> ShoalConfig.from(c));
  }

  private static void assertMentions(InvalidConfigException e, String... words) {
    for (String w : words) {
      assertTrue(e.getMessage().contains(w), "'" + e.getMessage() + "' should mention " + w);
    }
  }

  @Test
  void serveStalePrefetchAndUpstreamHealthDefaultOnAndAreOptionalInAnAddedGroup() {
    ShoalConfig c = ShoalConfig.from(config("shoal.upstreams.extra { servers = [\"127.0.0.1:5301\"], timeout = 1s }"));

    assertEquals(new ServeStaleSettings(true, Duration.ofDays(1), Duration.ofMillis(1800)), c.serveStale());
    assertTrue(c.prefetch());
    UpstreamGroupSettings extra = c.upstreams().get("extra");
    assertEquals(3, extra.maxFails());
    assertEquals(Duration.ofSeconds(1), extra.backoff());
    assertEquals(Duration.ofSeconds(2), extra.maxBackoff());
    assertEquals(ServeStaleSettings.OFF, ShoalConfig.from(config("shoal.serve_stale.enabled = off")).serveStale());
  }

  @Test
  void badServeStaleAndHealthValuesNameTheirKey() {
    assertMentions(rejected("shoal.serve_stale.max_stale = 0s"), "shoal.serve_stale.max_stale");
    assertMentions(rejected("shoal.serve_stale.client_timeout = soon"), "shoal.serve_stale.client_timeout");
    assertMentions(rejected("shoal.upstreams.default.max_backoff = 100ms"), "shoal.upstreams.default.max_backoff",
        "at least backoff");
    assertMentions(rejected("shoal.prefetch.enabled = sometimes"), "shoal.prefetch.enabled");
  }

  @Test
  void embeddedDefaultsValidate() {
    ShoalConfig c = ShoalConfig.from(config(""));

    assertEquals(new InetSocketAddress("127.0.0.1", 5353), c.udpListen());
    assertEquals(new InetSocketAddress("127.0.0.1", 5353), c.tcpListen());
    assertEquals(8, c.workers());
    assertEquals(FillMode.WRITE_BEHIND, c.fill());
    assertEquals(List.of(new InetSocketAddress("127.0.0.1", 5300)), c.upstreams().get("default").servers());
    assertEquals(Duration.ofSeconds(2), c.upstreams().get("default").timeout());
    CacheSettings answers = c.cache("answers");
    assertEquals(CacheSettings.Backend.MEMORY, answers.backend());
    assertEquals(100_000, answers.maxEntries());
    assertEquals(WhenFull.EVICT_ONE, answers.whenFull());
    assertEquals(Duration.ZERO, answers.minTtl());
    assertEquals(Duration.ofDays(1), answers.maxTtl());
    assertEquals(Duration.ofMinutes(15), answers.negativeTtl());
    assertEquals(1, c.profiles().size());
    assertEquals(new ProfileSettings("default", List.of("."), "answers", "default"), c.profiles().get(0));
  }

  @Test
  void overridesTakeEffect() throws IOException {
    ShoalConfig c = ShoalConfig.from(config(
        "shoal.caches.answers.when_full = sample\n"
            + "shoal.caches.answers.backend = lmdb\n"
            + "shoal.ingress.fill = write-through\n"
            + "shoal.ingress.workers = 2\n"
            + "shoal.listen.udp = \"[::1]:53000\"\n"));

    assertEquals(WhenFull.SAMPLE, c.cache("answers").whenFull());
    assertEquals(CacheSettings.Backend.LMDB, c.cache("answers").backend());
    assertEquals(FillMode.WRITE_THROUGH, c.fill());
    assertEquals(2, c.workers());
    assertEquals(53000, c.udpListen().getPort());
    assertEquals(InetAddress.getByName("::1"), c.udpListen().getAddress());
  }

  @Test
  void warmJoinDefaultsOnAndBadValuesNameTheirKey() {
    assertEquals(new WarmJoinSettings(true, 2000, 200, Duration.ofSeconds(10), Duration.ofSeconds(60)),
        ShoalConfig.from(config("")).cluster().warmJoin());
    assertEquals(false, ShoalConfig.from(config("shoal.cluster.warm_join.enabled = off")).cluster().warmJoin().enabled());

    InvalidConfigException batch = rejected("shoal.cluster.warm_join { max_answers_per_second = 100, batch = 500 }");
    assertEquals("shoal.cluster.warm_join.batch", batch.key());
    assertMentions(batch, "max_answers_per_second", "500");
    assertEquals("shoal.cluster.warm_join.max_answers_per_second",
        rejected("shoal.cluster.warm_join.max_answers_per_second = 0").key());
    assertEquals("shoal.cluster.warm_join.min_ttl_left", rejected("shoal.cluster.warm_join.min_ttl_left = soon").key());
    assertMentions(rejected("shoal.cluster.warm_join.rate = 5"), "shoal.cluster.warm_join", "rate");
  }

  @Test
  void unknownWhenFullNamesKeyAndAllowedValues() {
    InvalidConfigException e = rejected("shoal.caches.answers.when_full = lru");

    assertEquals("shoal.caches.answers.when_full", e.key());
    assertMentions(e, "lru", "evict_one", "sample");
  }

  @Test
  void unknownBackendNamesKeyAndAllowedValues() {
    InvalidConfigException e = rejected("shoal.caches.answers.backend = redis");

    assertEquals("shoal.caches.answers.backend", e.key());
    assertMentions(e, "redis", "memory", "lmdb");
  }

  @Test
  void unknownFillModeNamesKeyAndAllowedValues() {
    InvalidConfigException e = rejected("shoal.ingress.fill = sometimes");

    assertEquals("shoal.ingress.fill", e.key());
    assertMentions(e, "sometimes", "write-behind", "write-through");
  }

  @Test
  void zeroWorkersIsRejected() {
    InvalidConfigException e = rejected("shoal.ingress.workers = 0");

    assertEquals("shoal.ingress.workers", e.key());
    assertMentions(e, "between 1 and 1024");
  }

  @Test
  void nonNumericWorkersIsRejected() {
    InvalidConfigException e = rejected("shoal.ingress.workers = many");

    assertEquals("shoal.ingress.workers", e.key());
    assertMentions(e, "whole number", "many");
  }

  @Test
  void misspeltKeyIsRejectedNotIgnored() {
    InvalidConfigException e = rejected("shoal.caches.answers.max_entry = 10");

    assertEquals("shoal.caches.answers.max_entry", e.key());
    assertMentions(e, "unknown key", "max_entries");
  }

  @Test
  void misspeltTopLevelKeyIsRejected() {
    InvalidConfigException e = rejected("shoal.ingres.workers = 4");

    assertEquals("shoal.ingres", e.key());
    assertMentions(e, "unknown key");
  }

  @Test
  void badDurationNamesKey() {
    InvalidConfigException e = rejected("shoal.caches.answers.negative_ttl = \"2 fortnights\"");

    assertEquals("shoal.caches.answers.negative_ttl", e.key());
    assertMentions(e, "duration", "2 fortnights");
  }

  @Test
  void badUpstreamTimeoutNamesKey() {
    InvalidConfigException e = rejected("shoal.upstreams.default.timeout = \"2 fortnights\"");

    assertEquals("shoal.upstreams.default.timeout", e.key());
  }

  @Test
  void durationOutOfRangeNamesBounds() {
    InvalidConfigException e = rejected("shoal.caches.answers.servfail_ttl = 1m");

    assertEquals("shoal.caches.answers.servfail_ttl", e.key());
    assertMentions(e, "30s", "60s");
  }

  @Test
  void minTtlAboveMaxTtlIsRejected() {
    InvalidConfigException e = rejected("shoal.caches.answers { min_ttl = 2h, max_ttl = 1h }");

    assertEquals("shoal.caches.answers.min_ttl", e.key());
    assertMentions(e, "max_ttl", "3600s", "7200s");
  }

  @Test
  void profileNamingAMissingCacheIsRejected() {
    InvalidConfigException e = rejected(
        "shoal.profiles.internal { match = [\"cluster.local.\"], cache = nope, upstreams = default }");

    assertEquals("shoal.profiles.internal.cache", e.key());
    assertMentions(e, "nope", "answers");
  }

  @Test
  void profileNamingAMissingUpstreamGroupIsRejected() {
    InvalidConfigException e = rejected(
        "shoal.profiles.internal { match = [\"cluster.local.\"], cache = answers, upstreams = corp }");

    assertEquals("shoal.profiles.internal.upstreams", e.key());
    assertMentions(e, "corp", "default");
  }

  @Test
  void twoProfilesMatchingTheSameSuffixAreRejected() {
    // Written differently, the same name once canonical.
    InvalidConfigException e = rejected(
        "shoal.profiles.a { match = [\"example.com.\"], cache = answers, upstreams = default }\n"
            + "shoal.profiles.b { match = [\"Example.COM\"], cache = answers, upstreams = default }");

    assertEquals("shoal.profiles.b.match", e.key());
    assertMentions(e, "example.com.", "'a'");
  }

  @Test
  void aSecondProfileClaimingTheRootIsRejected() {
    InvalidConfigException e = rejected(
        "shoal.profiles.other { match = [\".\"], cache = answers, upstreams = default }");

    assertEquals("shoal.profiles.other.match", e.key());
    assertMentions(e, "'default'");
  }

  @Test
  void noProfileMatchingTheRootIsRejected() {
    InvalidConfigException e = rejected("shoal.profiles.default.match = [\"example.com.\"]");

    assertEquals("shoal.profiles", e.key());
    assertMentions(e, "\".\"");
  }

  @Test
  void listenAddressWithABadPortIsRejected() {
    InvalidConfigException e = rejected("shoal.listen.udp = \"127.0.0.1:abc\"");

    assertEquals("shoal.listen.udp", e.key());
    assertMentions(e, "127.0.0.1:abc", "port");
  }

  @Test
  void listenPortOutOfRangeIsRejected() {
    InvalidConfigException e = rejected("shoal.listen.tcp = \"127.0.0.1:70000\"");

    assertEquals("shoal.listen.tcp", e.key());
    assertMentions(e, "70000");
  }

  @Test
  void repliesDefaultToA1232ByteCapAndNoIdentity() {
    ShoalConfig c = ShoalConfig.from(config(""));

    assertEquals(new ReplyPolicy(1232, "", ""), c.replies());
  }

  @Test
  void maxUdpSizeAndChaosAnswersAreRead() {
    ShoalConfig c = ShoalConfig.from(config(
        "shoal.listen.max_udp_size = 4096\nshoal.chaos.identity = \"ns7\"\nshoal.chaos.version = \"v1\"\n"));

    assertEquals(new ReplyPolicy(4096, "ns7", "v1"), c.replies());
  }

  @Test
  void maxUdpSizeBelow512IsRejected() {
    InvalidConfigException e = rejected("shoal.listen.max_udp_size = 100");

    assertEquals("shoal.listen.max_udp_size", e.key());
    assertMentions(e, "512", "65535", "100");
  }

  @Test
  void anIdentityLongerThanOneTxtStringIsRejected() {
    InvalidConfigException e = rejected("shoal.chaos.identity = \"" + "x".repeat(256) + "\"");

    assertEquals("shoal.chaos.identity", e.key());
    assertMentions(e, "255");
  }

  @Test
  void upstreamOnPortZeroIsRejected() {
    InvalidConfigException e = rejected("shoal.upstreams.default.servers = [\"127.0.0.1:0\"]");

    assertEquals("shoal.upstreams.default.servers", e.key());
  }

  // --- resolv.conf ---

  private static Config withResolvConf() {
    // The embedded default: servers = ["resolv.conf"].
    return ConfigLoader.load(Optional.empty());
  }

  @Test
  void resolvConfNameserversBecomeTheUpstreams(@TempDir Path dir) throws IOException {
    Path resolv = dir.resolve("resolv.conf");
    Files.writeString(resolv, String.join("\n",
        "# Generated by NetworkManager",
        "search example.com corp.example.com",
        "nameserver 192.0.2.53",
        "; nameserver 192.0.2.99",
        "#nameserver 192.0.2.98",
        "  nameserver   2001:db8::53  ",
        "nameserver fe80::1%eth0",
        "options edns0 trust-ad",
        ""));

    ShoalConfig c = ShoalConfig.from(withResolvConf(), resolv);

    assertEquals(
        List.of(
            new InetSocketAddress(InetAddress.getByName("192.0.2.53"), 53),
            new InetSocketAddress(InetAddress.getByName("2001:db8::53"), 53),
            new InetSocketAddress(InetAddress.getByName("fe80::1"), 53)),
        c.upstreams().get("default").servers());
  }

  @Test
  void resolvConfWithoutNameserversIsRejected(@TempDir Path dir) throws IOException {
    Path resolv = dir.resolve("resolv.conf");
    Files.writeString(resolv, "# nameserver 192.0.2.1\nsearch example.com\n");

    InvalidConfigException e =
        assertThrows(InvalidConfigException.class, () -> ShoalConfig.from(withResolvConf(), resolv));

    assertEquals("shoal.upstreams.default.servers", e.key());
    assertMentions(e, "no nameserver", resolv.toString());
  }

  @Test
  void missingResolvConfIsRejected(@TempDir Path dir) {
    Path resolv = dir.resolve("absent.conf");

    InvalidConfigException e =
        assertThrows(InvalidConfigException.class, () -> ShoalConfig.from(withResolvConf(), resolv));

    assertEquals("shoal.upstreams.default.servers", e.key());
    assertMentions(e, resolv.toString());
  }

  @Test
  void resolvConfCombinesWithExplicitServers(@TempDir Path dir) throws IOException {
    Path resolv = dir.resolve("resolv.conf");
    Files.writeString(resolv, "nameserver 192.0.2.53\n");
    Config c = ConfigFactory.parseString("shoal.upstreams.default.servers = [\"198.51.100.1:5300\", \"resolv.conf\"]")
        .withFallback(ConfigLoader.load(Optional.empty()));

    ShoalConfig sc = ShoalConfig.from(c, resolv);

    assertEquals(
        List.of(new InetSocketAddress("198.51.100.1", 5300), new InetSocketAddress("192.0.2.53", 53)),
        sc.upstreams().get("default").servers());
  }

  @Test
  void hardeningDefaults() {
    ShoalConfig c = ShoalConfig.from(config(""));
    assertEquals(new TcpSettings(TcpSettings.AUTO, Duration.ofSeconds(10), 0, 1024), c.tcp());
    assertEquals(1024, c.tcp().connectionCap(4096), "auto is a quarter of the file limit");
    assertEquals(16384, c.tcp().connectionCap(1 << 20), "and at most 16384");
    assertEquals(8, c.accessControl().size());
    assertEquals("127.0.0.0/8 allow", c.accessControl().get(0).toString());
    assertEquals(new RateLimitSettings(0, 2, false, 65536), c.rateLimit());
    assertEquals(Path.of("data/admin-8559.token"), c.admin().tokenFileFor(c.admin().port()));
    assertEquals(AdminSettings.DEFAULT_TOKEN_FILE, c.admin().tokenFile(), "the default the CLI looks for");
    ShoalConfig set = ShoalConfig.from(config(
        "shoal.listen.tcp_max_connections = 200\nshoal.access_control = [\"0.0.0.0/0 allow\"]"));
    assertEquals(200, set.tcp().connectionCap(4096));
    assertEquals(1, set.accessControl().size());
  }

  @Test
  void streamListenersHaveSafeDeadlinesAndShareTheAutoCap(@TempDir Path dir) throws IOException {
    Path cert = Files.writeString(dir.resolve("c.pem"), "");
    Path key = Files.writeString(dir.resolve("k.pem"), "");
    ShoalConfig c = ShoalConfig.from(config(""));
    assertEquals(Duration.ofSeconds(5), c.tcp().handshakeTimeout());
    assertEquals(Duration.ofSeconds(5), c.tcp().firstQueryTimeout());
    long gib = 1L << 30;
    assertEquals(1024, c.tcp().connectionCap(1 << 20, gib), "a quarter of a 1 GiB heap at 256 KiB a connection");
    assertEquals(1024, c.tcp().connectionCap(4096, 64 * gib), "or of the file limit, the smaller");
    ShoalConfig three = ShoalConfig.from(config(String.join("\n",
        "shoal.listen.tls = \"127.0.0.1:8853\"", "shoal.listen.https = \"127.0.0.1:8443\"",
        "shoal.tls.certificate = \"" + cert + "\"", "shoal.tls.private_key = \"" + key + "\"",
        "shoal.listen.tls_handshake_timeout = 2s", "shoal.listen.tcp_first_query_timeout = 3s")));
    assertEquals(3, three.tcp().streamListeners());
    assertEquals(341, three.tcp().connectionCap(4096, 64 * gib), "TCP, DoT and DoH share the quarter");
    assertEquals(Duration.ofSeconds(2), three.tcp().handshakeTimeout());
    assertEquals(Duration.ofSeconds(3), three.tcp().firstQueryTimeout());
    InvalidConfigException e = org.junit.jupiter.api.Assertions.assertThrows(InvalidConfigException.class,
        () -> ShoalConfig.from(config("shoal.listen.tls_handshake_timeout = 0s")));
    assertTrue(e.getMessage().contains("shoal.listen.tls_handshake_timeout"), e.getMessage());
  }

  @Test
  void udpReadersTakeSixteenDatagramsPerCallUnlessSetOtherwise() {
    assertEquals(16, ShoalConfig.from(config("")).udpBatch());
    assertEquals(Math.max(1, Runtime.getRuntime().availableProcessors() / 2), ShoalConfig.from(config("")).udpSockets(),
        "one socket per two cores");
    assertEquals(3, ShoalConfig.from(config("shoal.listen.udp_sockets = 3")).udpSockets());
    assertEquals(1, ShoalConfig.from(config("shoal.listen.udp_batch = 1")).udpBatch());
    assertEquals(64, ShoalConfig.from(config("shoal.listen.udp_batch = 64")).udpBatch());
    assertMentions(rejected("shoal.listen.udp_batch = 0"), "shoal.listen.udp_batch", "between 1 and 64");
    assertMentions(rejected("shoal.listen.udp_batch = 65"), "shoal.listen.udp_batch", "between 1 and 64");
    assertMentions(rejected("shoal.listen.udp_batch = many"), "shoal.listen.udp_batch", "whole number");
  }

  @Test
  void udpReadersWaitForFullerBatchesOnlyAsLongAsSet(@TempDir Path dir) throws IOException {
    assertEquals(Duration.ZERO, ShoalConfig.from(config("")).udpBatchWait(), "read again at once unless set");
    assertEquals(Duration.ofMillis(100), ShoalConfig.from(config("shoal.listen.udp_batch_wait = 100ms")).udpBatchWait());
    assertEquals(Duration.ofNanos(250_000), ShoalConfig.from(config("shoal.listen.udp_batch_wait = 250us")).udpBatchWait());
    assertEquals(Duration.ZERO, ShoalConfig.from(config("shoal.listen.udp_batch_wait = 0")).udpBatchWait());
    assertMentions(rejected("shoal.listen.udp_batch_wait = 101ms"), "shoal.listen.udp_batch_wait",
        "between 0ms and 100ms", "101ms");
    assertMentions(rejected("shoal.listen.udp_batch_wait = -1us"), "shoal.listen.udp_batch_wait", "-1us");
    assertMentions(rejected("shoal.listen.udp_batch_wait = briefly"), "shoal.listen.udp_batch_wait", "duration",
        "briefly");
    Path conf = Files.writeString(dir.resolve("shoal.conf"), "shoal.listen.udp_batch_wait = 1s\n");
    assertEquals(2, io.shoal.testing.ShoalCli.run("config", "--config", conf.toString()).status(),
        "shoal config refuses the value");
  }

  @Test
  void badHardeningValuesNameTheirKey() {
    assertMentions(rejected("shoal.listen.tcp_max_connections = lots"),
        "shoal.listen.tcp_max_connections", "whole number");
    assertMentions(rejected("shoal.listen.tcp_max_connections = 0"), "shoal.listen.tcp_max_connections", "between 1");
    assertMentions(rejected("shoal.listen.tcp_idle_timeout = 0s"), "shoal.listen.tcp_idle_timeout");
    assertMentions(rejected("shoal.listen.tcp_backlog = 0"), "shoal.listen.tcp_backlog");
    assertMentions(rejected("shoal.access_control = [\"10.0.0.0/8 permit\"]"),
        "shoal.access_control", "allowed actions: allow, refuse, deny");
    assertMentions(rejected("shoal.rate_limit.slip = -1"), "shoal.rate_limit.slip");
    assertMentions(rejected("shoal.rate_limit.typo = 1"), "shoal.rate_limit.typo", "unknown key");
    assertMentions(rejected("shoal.admin.token_file = \"\""), "shoal.admin.token_file");
  }

  @Test
  void lmdbMapsThatCannotFitTheAddressSpaceAreRefusedNamingTheKeys() {
    String lmdb = "shoal.caches.answers.backend = lmdb\nshoal.caches.answers.lmdb.shard_count = 16\n";
    long left = 100L << 30;
    ShoalConfig fits = ShoalConfig.from(config(lmdb + "shoal.caches.answers.lmdb.map_size = 2GiB"),
        Path.of("/etc/resolv.conf"), left);
    assertEquals(2L << 30, fits.cache("answers").lmdb().mapSize());
    Config tooBig = config(lmdb + "shoal.caches.answers.lmdb.map_size = 4GiB");
    InvalidConfigException e = assertThrows(InvalidConfigException.class,
        () -> ShoalConfig.from(tooBig, Path.of("/etc/resolv.conf"), left));
    assertEquals("shoal.caches.answers.lmdb.map_size", e.key());
    assertMentions(e, "shoal.caches.answers.lmdb.map_size (4.0 GiB)", "shoal.caches.answers.lmdb.shard_count (16)",
        "64.0 GiB", "100.0 GiB left");
    // A memory cache maps nothing.
    ShoalConfig.from(config("shoal.caches.answers.lmdb.map_size = 1TiB\nshoal.caches.answers.lmdb.shard_count = 256"),
        Path.of("/etc/resolv.conf"), left);
  }

  @Test
  void theAddressSpaceIsReadFromProc() {
    assertEquals(1L << 47, AddressSpace.userTop(List.of(
        "55d0c0000000-55d0c0021000 r--p 00000000 fe:00 1 /usr/bin/java",
        "7fffe4291000-7fffe42b2000 rw-p 00000000 00:00 0 [stack]",
        "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]")));
    assertEquals(AddressSpace.UNKNOWN, AddressSpace.addressLimit(List.of(
        "Max address space         unlimited            unlimited            bytes")));
    assertEquals(8L << 30, AddressSpace.addressLimit(List.of(
        "Max address space         8589934592           unlimited            bytes")));
    assertEquals(3892L * 1024, AddressSpace.vmSize(List.of("Name: java", "VmSize:\t    3892 kB")));
  }

  @Test
  void localDataAndPolicyAreOffByDefaultAndTheirLinesAreChecked() {
    ShoalConfig c = ShoalConfig.from(config(""));
    assertTrue(!c.local().configured() && !c.policy().configured());
    ShoalConfig set = ShoalConfig.from(config(String.join("\n",
        "shoal.local.records = [\"nas.home.arpa. A 192.168.1.10\"]",
        "shoal.local.zones = [\"home.arpa. static\"]",
        "shoal.policy.domain_lists = [\"/var/lib/shoal/ads.txt nxdomain\"]")));
    assertEquals(1, set.local().records().size());
    assertEquals(io.shoal.local.ZoneType.STATIC, set.local().zones().get(0).type());
    assertEquals(io.shoal.policy.PolicyAction.NXDOMAIN, set.policy().domainLists().get(0).action());
    assertMentions(rejected("shoal.local.records = [\"x.test. A 1.2.3.4\", \"x.test. A nope\"]"),
        "shoal.local.records", "line 2");
    assertMentions(rejected("shoal.local.zones = [\"home.arpa. statik\"]"), "shoal.local.zones", "static");
    assertMentions(rejected("shoal.policy.domain_lists = [\"ads.txt block\"]"), "shoal.policy.domain_lists",
        "nxdomain, nodata, refuse, drop");
    assertMentions(rejected("shoal.policy.rpz = []"), "shoal.policy");
  }

  @Test
  void encryptedListenersAreOffByDefault() {
    TlsSettings tls = ShoalConfig.from(config("")).tls();
    assertEquals(null, tls.dot());
    assertEquals(null, tls.doh());
    assertEquals(false, tls.needsCertificate());
  }

  @Test
  void aTlsListenerNeedsReadableCertificateFilesNamedByKey(@TempDir Path dir) throws IOException {
    assertMentions(rejected("shoal.listen.tls = \"127.0.0.1:853\""), "shoal.tls.certificate", "PEM");
    Path cert = Files.writeString(dir.resolve("cert.pem"), "x");
    assertMentions(rejected("shoal.listen.https = \"127.0.0.1:443\"\nshoal.tls.certificate = \"" + cert
        + "\"\nshoal.tls.private_key = \"" + dir.resolve("missing.key") + "\""), "shoal.tls.private_key", "missing.key");
    assertMentions(rejected("shoal.tls.reload = 5s"), "shoal.tls.reload", "unknown key");
    // Plain-HTTP DoH (behind a TLS-terminating proxy) needs no certificate.
    TlsSettings plain = ShoalConfig.from(config(
        "shoal.listen.https = \"127.0.0.1:8053\"\nshoal.listen.https_plaintext = on")).tls();
    assertEquals(new InetSocketAddress("127.0.0.1", 8053), plain.doh());
    assertEquals(false, plain.needsCertificate());
    assertEquals(853, ShoalConfig.from(config("shoal.listen.tls = \"127.0.0.1\"\nshoal.tls.certificate = \"" + cert
        + "\"\nshoal.tls.private_key = \"" + cert + "\"")).tls().dot().getPort());
  }

  @Test
  void dnssecValidatesByDefaultFromTheShippedRootAnchor() {
    DnssecSettings d = ShoalConfig.from(config("")).dnssec();
    assertEquals(DnssecSettings.Mode.ON, d.mode());
    assertEquals(List.of(20326, 38696),
        d.trustAnchors().stream().map(r -> ((org.xbill.DNS.DSRecord) r).getFootprint()).sorted().toList());
    assertTrue(d.trustAnchors().stream().allMatch(r -> r.getName().equals(org.xbill.DNS.Name.root)));
    assertEquals(DnssecSettings.OFF, ShoalConfig.from(config("shoal.dnssec.validation = off")).dnssec());
  }

  @Test
  void dnssecReadsAnchorFilesModeAndNegativeAnchors(@TempDir Path dir) throws IOException {
    Path anchor = dir.resolve("example.key");
    Files.writeString(anchor, "example.test. 3600 IN DS 12345 13 2 "
        + "E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D\n");
    DnssecSettings d = ShoalConfig.from(config("shoal.dnssec { validation = permissive, trust_anchors = [\""
        + anchor + "\"], negative_trust_anchors = [\"Broken.Example\"] }")).dnssec();
    assertEquals(DnssecSettings.Mode.PERMISSIVE, d.mode());
    assertEquals(1, d.trustAnchors().size());
    assertEquals(List.of(org.xbill.DNS.Name.fromConstantString("broken.example.")), d.negativeTrustAnchors());
  }

  @Test
  void badDnssecValuesNameTheirKeyAndFile(@TempDir Path dir) throws IOException {
    assertMentions(rejected("shoal.dnssec.validation = maybe"), "shoal.dnssec.validation", "permissive");
    assertMentions(rejected("shoal.dnssec.validaton = on"), "shoal.dnssec.validaton", "unknown key");
    Path missing = dir.resolve("missing.key");
    assertMentions(rejected("shoal.dnssec.trust_anchors = [\"" + missing + "\"]"),
        "shoal.dnssec.trust_anchors", missing.toString());
    Path garbage = dir.resolve("garbage.key");
    Files.writeString(garbage, "example.test. IN DS not a ds record\n");
    assertMentions(rejected("shoal.dnssec.trust_anchors = [\"" + garbage + "\"]"),
        "shoal.dnssec.trust_anchors", garbage.toString());
    Path a = dir.resolve("a.key");
    Files.writeString(a, "example.test. IN A 192.0.2.1\n");
    assertMentions(rejected("shoal.dnssec.trust_anchors = [\"" + a + "\"]"), "shoal.dnssec.trust_anchors",
        "not a DS or DNSKEY");
    assertMentions(rejected("shoal.dnssec.negative_trust_anchors = [\"bad..name\"]"),
        "shoal.dnssec.negative_trust_anchors");
  }

  @Test
  void queryLogsAreOffByDefault() {
    QueryLogSettings q = ShoalConfig.from(config("")).queryLog();
    assertEquals(false, q.enabled());
    assertEquals(null, q.dnstapSocket());
    assertEquals(null, q.dnstapFile());
    assertEquals(false, q.forwarder());
    assertEquals(65536, q.queue());
    assertEquals(0.01, q.sample());
  }

  @Test
  void queryLogsParse() {
    QueryLogSettings q = ShoalConfig.from(config("shoal.log { dnstap { file = \"/tmp/x.dnstap\", forwarder = on,"
        + " queue = 100, identity = ns1 }, queries { enabled = on, sample = 1 } }")).queryLog();
    assertEquals(Path.of("/tmp/x.dnstap"), q.dnstapFile());
    assertTrue(q.dnstap() && q.forwarder() && q.queries() && q.enabled());
    assertEquals(100, q.queue());
    assertEquals("ns1", q.identity());
    assertEquals(1.0, q.sample());
  }

  @Test
  void badQueryLogValuesNameTheirKey() {
    assertMentions(rejected("shoal.log.dnstap { socket = \"/tmp/a\", file = \"/tmp/b\" }"), "shoal.log.dnstap.file", "not both");
    assertMentions(rejected("shoal.log.queries.sample = 1.5"), "shoal.log.queries.sample", "between 0 and 1");
    assertMentions(rejected("shoal.log.queries.sample = often"), "shoal.log.queries.sample");
    assertMentions(rejected("shoal.log.dnstap.queue = 0"), "shoal.log.dnstap.queue");
    assertMentions(rejected("shoal.log.dnstap.forwarder = maybe"), "shoal.log.dnstap.forwarder");
    assertMentions(rejected("shoal.log.dnstap.sockett = \"/tmp/a\""), "shoal.log.dnstap.sockett", "unknown key");
    assertMentions(rejected("shoal.log.dnstap.socket = \"/" + "x".repeat(120) + "\""), "shoal.log.dnstap.socket", "107");
  }

  @Test
  void tlsServersKeepTheirPlaceAmongUdpServersWithTheirNameCaFileAndPins() throws Exception {
    io.shoal.testing.TestCertificates ca = io.shoal.testing.TestCertificates.newCa();
    String pin = java.util.Base64.getEncoder().encodeToString(new byte[32]);
    ShoalConfig c = ShoalConfig.from(config(String.join("\n",
        "shoal.upstreams.mixed {",
        "  servers = [\"192.0.2.1:53\", \"tls://192.0.2.53:853#dns.example\", \"tls://[2001:db8::53]#dns6.example.\"]",
        "  timeout = 1s",
        "  tls_ca_file = \"" + ca.caCertificate + "\"",
        "  tls_spki_pins = [\"sha256/" + pin + "\"]",
        "}")));

    UpstreamGroupSettings g = c.upstreams().get("mixed");
    InetSocketAddress dot4 = new InetSocketAddress(InetAddress.getByName("192.0.2.53"), 853);
    InetSocketAddress dot6 = new InetSocketAddress(InetAddress.getByName("2001:db8::53"), 853);
    assertEquals(List.of(new InetSocketAddress(InetAddress.getByName("192.0.2.1"), 53), dot4, dot6), g.servers());
    assertEquals(new DotServerSettings(dot4, "dns.example", ca.caCertificate, List.of(pin)), g.dot().get(dot4));
    assertEquals("dns6.example", g.dot().get(dot6).name());
    assertEquals(2, g.dot().size());
    assertTrue(c.upstreams().get("default").dot().isEmpty());
  }

  @Test
  void badTlsServerEntriesAndKeysAreRejectedByName(@TempDir Path dir) throws IOException {
    assertMentions(rejected("shoal.upstreams.default.servers = [\"tls://192.0.2.53:853\"]"),
        "shoal.upstreams.default.servers", "'#'", "tls://192.0.2.53:853#dns.example");
    assertMentions(rejected("shoal.upstreams.default.servers = [\"tls://192.0.2.53:853#bad name\"]"),
        "shoal.upstreams.default.servers", "not a host name");
    assertMentions(rejected("shoal.upstreams.default.tls_ca_file = \"" + dir.resolve("none.pem") + "\""),
        "shoal.upstreams.default.tls_ca_file");
    Path garbage = Files.writeString(dir.resolve("garbage.pem"), "not a certificate\n");
    assertMentions(rejected(String.join("\n",
            "shoal.upstreams.default.servers = [\"tls://192.0.2.53#dns.example\"]",
            "shoal.upstreams.default.tls_ca_file = \"" + garbage + "\"")),
        "shoal.upstreams.default.tls_ca_file", "garbage.pem");
    assertMentions(rejected(String.join("\n",
            "shoal.upstreams.default.servers = [\"tls://192.0.2.53#dns.example\"]",
            "shoal.upstreams.default.tls_spki_pins = [\"abc\"]")),
        "shoal.upstreams.default.tls_spki_pins", "openssl");
    assertMentions(rejected("shoal.upstreams.default.tls_spki_pins = [\""
            + java.util.Base64.getEncoder().encodeToString(new byte[32]) + "\"]"),
        "shoal.upstreams.default.tls_spki_pins", "tls:// servers");
    assertMentions(rejected(
            "shoal.upstreams.default.servers = [\"192.0.2.53:853\", \"tls://192.0.2.53:853#dns.example\"]"),
        "shoal.upstreams.default.servers", "listed twice");
  }
}
