package io.shoal.config;

import io.shoal.access.AccessRule;
import io.shoal.cache.CacheSettings;
import io.shoal.files.FileLimits;
import io.shoal.ingress.FillMode;
import io.shoal.local.LocalSettings;
import io.shoal.policy.PolicySettings;
import io.shoal.wire.ReplyPolicy;
import com.typesafe.config.Config;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.xbill.DNS.Name;
import org.xbill.DNS.TextParseException;

/**
 * The validated {@code shoal} configuration. Every value is checked here, before anything binds a
 * socket; a bad one raises {@link InvalidConfigException} naming the key and what is allowed.
 * The larger sections are read where their settings are: the upstream groups by
 * {@link UpstreamGroupSettings}, the caches by {@link CachesSection}, the profiles by
 * {@link ProfileSettings}, others by their own settings' {@code from}.
 */
public record ShoalConfig(
    InetSocketAddress udpListen,
    InetSocketAddress tcpListen,
    int udpSockets,
    int udpBatch,
    boolean udpQueueTime,
    Duration udpBatchWait,
    int workers,
    FillMode fill,
    int maxPendingPerWorker,
    Map<String, UpstreamGroupSettings> upstreams,
    Map<String, CacheSettings> caches,
    List<ProfileSettings> profiles,
    boolean metricsEnabled,
    String metricsHost,
    int metricsPort,
    Duration shutdownGrace,
    Duration shutdownLameduck,
    ClusterSettings cluster,
    AdminSettings admin,
    TcpSettings tcp,
    List<AccessRule> accessControl,
    RateLimitSettings rateLimit,
    MissBudgetSettings missBudget,
    ReplyPolicy replies,
    ServeStaleSettings serveStale,
    boolean prefetch,
    LocalSettings local,
    PolicySettings policy,
    TlsSettings tls,
    DnssecSettings dnssec,
    QueryLogSettings queryLog,
    boolean reloadWatch) {

  private static final Duration WEEK = Duration.ofDays(7);

  /** Reads and validates {@code shoal} from a resolved Typesafe config. */
  public static ShoalConfig from(Config root) {
    return from(root, Path.of("/etc/resolv.conf"));
  }

  /**
   * {@link #from(Config)} for a node that runs already, as a reload reads its config: the LMDB
   * maps are not checked against the address space left, since the node's own maps (which a reload
   * cannot change) are already counted as used there.
   */
  public static ShoalConfig forRunningNode(Config root) {
    return from(root, Path.of("/etc/resolv.conf"), AddressSpace.UNKNOWN);
  }

  static ShoalConfig from(Config root, Path resolvConf) {
    return from(root, resolvConf, AddressSpace.left());
  }

  /** @param addressSpaceLeft virtual memory the LMDB maps may use at most half of */
  static ShoalConfig from(Config root, Path resolvConf, long addressSpaceLeft) {
    if (!root.hasPath("shoal")) {
      throw new InvalidConfigException("shoal", "missing: the configuration has no shoal { } block");
    }
    Section shoal = new Section(root.getConfig("shoal"), "shoal");
    // lmdb-dispatcher is Akka dispatcher config, read by Akka itself, not by this class.
    shoal.allowOnly("listen", "ingress", "upstreams", "caches", "profiles", "metrics", "shutdown", "cluster", "admin",
        "access_control", "rate_limit", "chaos", "serve_stale", "prefetch", "dnssec", "lmdb-dispatcher",
        "local", "policy", "tls", "log", "reload", "miss_budget", "files");
    FileLimits fileLimits = fileLimits(shoal.section("files"));

    Section listen = shoal.section("listen");
    listen.allowOnly("udp", "tcp", "udp_sockets", "udp_batch", "udp_batch_wait", "udp_queue_time", "tcp_max_connections", "tcp_idle_timeout", "tcp_max_queries", "tcp_backlog",
        "tcp_first_query_timeout", "tls_handshake_timeout",
        "max_udp_size", "tls", "https", "https_plaintext");
    InetSocketAddress udp = listen.address("udp", 53);
    InetSocketAddress tcp = listen.address("tcp", 53);
    int maxUdpSize = (int) listen.integer("max_udp_size", 512, 65535);
    int udpSockets = (int) listen.integer("udp_sockets", 0, 256);
    if (udpSockets == 0) {
      // One reader answers a few hundred thousand hits a second in batches; more readers than
      // that need mostly wait and wake, which costs (docs/performance.md, "Datagrams in batches").
      udpSockets = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    }
    int udpBatch = (int) listen.integer("udp_batch", 1, 64);
    boolean udpQueueTime = listen.bool("udp_queue_time");
    Duration udpBatchWait = listen.duration("udp_batch_wait", Duration.ZERO, Duration.ofMillis(100));
    TcpSettings tcpLimits = new TcpSettings(
        listen.string("tcp_max_connections").equals("auto")
            ? TcpSettings.AUTO : (int) listen.integer("tcp_max_connections", 1, 1_000_000),
        listen.duration("tcp_idle_timeout", Duration.ofMillis(100), Duration.ofMinutes(5)),
        (int) listen.integer("tcp_max_queries", 0, 1_000_000),
        (int) listen.integer("tcp_backlog", 1, 65535),
        listen.duration("tls_handshake_timeout", Duration.ofMillis(100), Duration.ofMinutes(5)),
        listen.duration("tcp_first_query_timeout", Duration.ofMillis(100), Duration.ofMinutes(5)),
        1 + (listen.string("tls").isEmpty() ? 0 : 1) + (listen.string("https").isEmpty() ? 0 : 1));

    List<AccessRule> access = new ArrayList<>();
    for (String rule : shoal.strings("access_control")) {
      try {
        access.add(AccessRule.parse(rule));
      } catch (IllegalArgumentException e) {
        throw new InvalidConfigException(shoal.key("access_control"), e.getMessage());
      }
    }

    Section rl = shoal.section("rate_limit");
    rl.allowOnly("responses_per_second", "slip", "include_loopback", "table_size");
    RateLimitSettings rateLimit = new RateLimitSettings(
        (int) rl.integer("responses_per_second", 0, 1_000_000),
        (int) rl.integer("slip", 0, 100),
        rl.bool("include_loopback"),
        (int) rl.integer("table_size", 1024, 1 << 24));

    Section chaos = shoal.section("chaos");
    chaos.allowOnly("identity", "version");
    ReplyPolicy replies = new ReplyPolicy(maxUdpSize, chaosText(chaos, "identity"), chaosText(chaos, "version"));

    Section stale = shoal.section("serve_stale");
    stale.allowOnly("enabled", "max_stale", "client_timeout");
    ServeStaleSettings serveStale = new ServeStaleSettings(stale.bool("enabled"),
        stale.duration("max_stale", Duration.ofSeconds(1), WEEK),
        stale.duration("client_timeout", Duration.ofMillis(10), Duration.ofSeconds(30)));
    Section prefetchSection = shoal.section("prefetch");
    prefetchSection.allowOnly("enabled");
    boolean prefetch = prefetchSection.bool("enabled");

    Section ingress = shoal.section("ingress");
    ingress.allowOnly("workers", "fill", "max_pending");
    int workers = (int) ingress.integer("workers", 1, 1024);
    FillMode fill = ingress.choice("fill", FillMode.class, FillMode::configName);
    int maxPending = (int) ingress.integer("max_pending", 1, 1_000_000);

    Map<String, UpstreamGroupSettings> upstreams = new LinkedHashMap<>();
    Section ups = shoal.section("upstreams");
    for (String name : ups.children()) {
      upstreams.put(name, UpstreamGroupSettings.from(ups.section(name), name, resolvConf));
    }
    if (upstreams.isEmpty()) {
      throw new InvalidConfigException("shoal.upstreams", "at least one upstream group is needed");
    }

    Map<String, CacheSettings> caches = CachesSection.read(shoal.section("caches"), addressSpaceLeft);

    List<ProfileSettings> profiles = ProfileSettings.readAll(shoal.section("profiles"), caches.keySet(), upstreams.keySet());

    Section metrics = shoal.section("metrics");
    metrics.allowOnly("enabled", "prometheus");
    boolean metricsEnabled = metrics.bool("enabled");
    Section prom = metrics.section("prometheus");
    prom.allowOnly("host", "port");
    String metricsHost = prom.string("host");
    int metricsPort = (int) prom.integer("port", 0, 65535);

    Section shutdown = shoal.section("shutdown");
    shutdown.allowOnly("grace", "lameduck");
    Duration grace = shutdown.duration("grace", Duration.ZERO, Duration.ofMinutes(5));
    Duration lameduck = shutdown.duration("lameduck", Duration.ZERO, Duration.ofMinutes(5));

    Section adminSection = shoal.section("admin");
    adminSection.allowOnly("enabled", "host", "port", "token_file");
    String tokenFile = adminSection.string("token_file");
    if (tokenFile.isEmpty()) {
      throw new InvalidConfigException(adminSection.key("token_file"), "must name a file, e.g. \"" + AdminSettings.DEFAULT_TOKEN_FILE + "\"");
    }
    AdminSettings admin = new AdminSettings(adminSection.bool("enabled"), adminSection.string("host"),
        (int) adminSection.integer("port", 0, 65535), tokenFile);

    return new ShoalConfig(
        udp, tcp, udpSockets, udpBatch, udpQueueTime, udpBatchWait, workers, fill, maxPending, Map.copyOf(upstreams), Map.copyOf(caches),
        List.copyOf(profiles), metricsEnabled, metricsHost, metricsPort, grace, lameduck,
        ClusterSettings.from(shoal.section("cluster")), admin, tcpLimits, List.copyOf(access), rateLimit,
        MissBudgetSettings.from(shoal.section("miss_budget")), replies,
        serveStale.enabled() ? serveStale : ServeStaleSettings.OFF, prefetch, local(shoal.section("local"), fileLimits),
        policy(shoal.section("policy"), fileLimits), TlsSettings.from(listen, shoal.section("tls")),
        DnssecSettings.from(shoal.section("dnssec"), fileLimits), QueryLogSettings.from(shoal.section("log")),
        reloadWatch(shoal.section("reload")));
  }

  /** {@code shoal.reload.watch}: whether the --config file is watched and reloaded when it changes. */
  private static boolean reloadWatch(Section s) {
    s.allowOnly("watch");
    return s.bool("watch");
  }

  /**
   * {@code shoal.files}: the bounds every file shoal reads is held to (RPZ, trust anchors, hosts
   * files, domain lists), so a runaway file is refused with a message, never an OutOfMemoryError.
   */
  private static FileLimits fileLimits(Section s) {
    s.allowOnly("max_bytes", "max_entries", "max_include_depth", "max_generate");
    return new FileLimits(s.bytes("max_bytes", 1, Integer.MAX_VALUE - 8),
        s.integer("max_entries", 1, 1_000_000_000), (int) s.integer("max_include_depth", 0, 16),
        s.integer("max_generate", 1, 100_000_000));
  }

  /** {@code shoal.local} and {@code shoal.policy}: lines checked here, files read when the node starts. */
  private static LocalSettings local(Section s, FileLimits limits) {
    s.allowOnly("records", "hosts_files", "zones");
    return new LocalSettings(listed(s, "records", LocalSettings::records),
        s.strings("hosts_files").stream().map(Path::of).toList(), listed(s, "zones", LocalSettings::zones), limits);
  }

  private static PolicySettings policy(Section s, FileLimits limits) {
    s.allowOnly("rpz_files", "domain_lists");
    return new PolicySettings(s.strings("rpz_files").stream().map(Path::of).toList(),
        listed(s, "domain_lists", PolicySettings::domainLists), limits);
  }

  private static <T> List<T> listed(Section s, String name, java.util.function.Function<List<String>, List<T>> parse) {
    try {
      return parse.apply(s.strings(name));
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException(s.key(name), e.getMessage());
    }
  }

  private static String chaosText(Section chaos, String name) {
    String text = chaos.string(name);
    if (text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > ReplyPolicy.MAX_TEXT) {
      throw new InvalidConfigException(chaos.key(name),
          "at most " + ReplyPolicy.MAX_TEXT + " bytes (one TXT string), got " + text.length() + " characters");
    }
    return text;
  }

  /** Lower-cased, absolute (trailing dot), validated by dnsjava. */
  static String canonicalSuffix(String suffix, String key) {
    String s = suffix.trim().toLowerCase(Locale.ROOT);
    if (s.startsWith(".") && s.length() > 1) {
      s = s.substring(1);
    }
    if (!s.endsWith(".")) {
      s = s + ".";
    }
    try {
      return Name.fromString(s).toString();
    } catch (TextParseException e) {
      throw new InvalidConfigException(key, "'" + suffix + "' is not a domain name: " + e.getMessage());
    }
  }

  /** Finds a cache's settings; the profiles were checked to name only existing caches. */
  public CacheSettings cache(String name) {
    return caches.get(name);
  }
}
