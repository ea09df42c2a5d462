package io.shoal.config;

import io.shoal.access.AccessRule;
import io.shoal.cache.CacheSettings;
import io.shoal.cache.WhenFull;
import io.shoal.cache.lmdb.LmdbSettings;
import io.shoal.cache.lmdb.SyncMode;
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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.xbill.DNS.Name;
import org.xbill.DNS.TextParseException;

/**
 * The validated {@code shoal} configuration. Every value is checked here, before anything binds a
 * socket; a bad one raises {@link InvalidConfigException} naming the key and what is allowed.
 */
public record ShoalConfig(
    InetSocketAddress udpListen,
    InetSocketAddress tcpListen,
    int udpSockets,
    int udpBatch,
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

  private static final Duration DAY = Duration.ofDays(1);
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
    listen.allowOnly("udp", "tcp", "udp_sockets", "udp_batch", "tcp_max_connections", "tcp_idle_timeout", "tcp_max_queries", "tcp_backlog",
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
      upstreams.put(name, upstreamGroup(ups.section(name), name, resolvConf));
    }
    if (upstreams.isEmpty()) {
      throw new InvalidConfigException("shoal.upstreams", "at least one upstream group is needed");
    }

    Map<String, CacheSettings> caches = new LinkedHashMap<>();
    Section cs = shoal.section("caches");
    for (String name : cs.children()) {
      caches.put(name, cache(cs.section(name), name));
    }
    if (caches.isEmpty()) {
      throw new InvalidConfigException("shoal.caches", "at least one cache is needed");
    }
    checkDistinctLmdbPaths(caches);
    checkLmdbMapsFit(caches, addressSpaceLeft);

    List<ProfileSettings> profiles = new ArrayList<>();
    Map<String, String> suffixOwner = new HashMap<>();
    Section ps = shoal.section("profiles");
    for (String name : ps.children()) {
      Section p = ps.section(name);
      p.allowOnly("match", "cache", "upstreams");
      List<String> match = new ArrayList<>();
      for (String suffix : p.strings("match")) {
        String canonical = canonicalSuffix(suffix, p.key("match"));
        String other = suffixOwner.putIfAbsent(canonical, name);
        if (other != null) {
          throw new InvalidConfigException(
              p.key("match"), "'" + canonical + "' is already matched by profile '" + other + "'");
        }
        match.add(canonical);
      }
      if (match.isEmpty()) {
        throw new InvalidConfigException(p.key("match"), "list at least one name suffix, e.g. [\".\"]");
      }
      String cache = p.string("cache");
      if (!caches.containsKey(cache)) {
        throw new InvalidConfigException(
            p.key("cache"), "no cache named '" + cache + "'; defined caches: " + String.join(", ", caches.keySet()));
      }
      String group = p.string("upstreams");
      if (!upstreams.containsKey(group)) {
        throw new InvalidConfigException(
            p.key("upstreams"),
            "no upstream group named '" + group + "'; defined groups: " + String.join(", ", upstreams.keySet()));
      }
      profiles.add(new ProfileSettings(name, List.copyOf(match), cache, group));
    }
    if (!suffixOwner.containsKey(".")) {
      throw new InvalidConfigException(
          "shoal.profiles", "no profile matches \".\": every name needs a profile (add match = [\".\"] to one)");
    }

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
        udp, tcp, udpSockets, udpBatch, workers, fill, maxPending, Map.copyOf(upstreams), Map.copyOf(caches),
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

  private static UpstreamGroupSettings upstreamGroup(Section s, String name, Path resolvConf) {
    s.allowOnly("servers", "timeout", "max_fails", "backoff", "max_backoff", "tls_ca_file", "tls_spki_pins",
        "mode", "root_hints", "query_loopback", "qname_minimisation", "max_queries", "max_ns_names",
        "max_referrals", "max_cname_links", "max_glueless_depth", "zone_cuts", "servers_tracked", "deadline");
    UpstreamGroupSettings.Mode mode = s.has("mode")
        ? s.choice("mode", UpstreamGroupSettings.Mode.class, UpstreamGroupSettings.Mode::configName)
        : UpstreamGroupSettings.Mode.FORWARD;
    if (mode == UpstreamGroupSettings.Mode.FORWARD) {
      for (String key : List.of("root_hints", "query_loopback", "qname_minimisation", "max_queries", "max_ns_names",
          "max_referrals", "max_cname_links", "max_glueless_depth", "zone_cuts", "servers_tracked", "deadline")) {
        if (s.has(key)) {
          throw new InvalidConfigException(s.key(key), "only read with mode = recursive or stub (this group forwards)");
        }
      }
    } else {
      return resolvingGroup(s, name, mode);
    }
    List<InetSocketAddress> servers = new ArrayList<>();
    Map<InetSocketAddress, DotServerSettings> dot = new LinkedHashMap<>();
    DotServers dotServers = new DotServers(s);
    for (String server : s.strings("servers")) {
      if (server.equals("resolv.conf")) {
        servers.addAll(Addresses.fromResolvConf(resolvConf, s.key("servers")));
      } else if (DotServers.isDot(server)) {
        DotServerSettings d = dotServers.entry(server);
        servers.add(d.address());
        dot.put(d.address(), d);
      } else {
        servers.add(Addresses.parse(server, 53, s.key("servers")));
      }
    }
    dotServers.check(servers, dot);
    if (servers.isEmpty()) {
      throw new InvalidConfigException(s.key("servers"), "list at least one server, e.g. [\"192.0.2.1:53\"] or [\"resolv.conf\"]");
    }
    for (InetSocketAddress a : servers) {
      if (a.getPort() == 0) {
        throw new InvalidConfigException(s.key("servers"), "port 0 is not a server port: " + a);
      }
    }
    Duration timeout = s.duration("timeout", Duration.ofMillis(10), Duration.ofSeconds(30));
    // Optional in a group, so a group an operator adds needs only servers and timeout.
    UpstreamGroupSettings health = new UpstreamGroupSettings(name, List.copyOf(servers), timeout);
    int maxFails = s.has("max_fails") ? (int) s.integer("max_fails", 0, 1000) : health.maxFails();
    Duration backoff = s.has("backoff")
        ? s.duration("backoff", Duration.ofMillis(10), Duration.ofHours(1)) : health.backoff();
    Duration maxBackoff = s.has("max_backoff")
        ? s.duration("max_backoff", Duration.ofMillis(10), Duration.ofHours(1)) : health.maxBackoff();
    if (maxBackoff.compareTo(backoff) < 0) {
      throw new InvalidConfigException(s.key("max_backoff"), "must be at least backoff (" + backoff + ")");
    }
    return new UpstreamGroupSettings(name, List.copyOf(servers), timeout, maxFails, backoff, maxBackoff, Map.copyOf(dot));
  }

  /**
   * A group that resolves itself: {@code recursive} reads no {@code servers} (the defaults' may
   * still be there); {@code stub} lists its authorities, port 53 unless given.
   */
  private static UpstreamGroupSettings resolvingGroup(Section s, String name, UpstreamGroupSettings.Mode mode) {
    RecursionSettings recursion = RecursionSettings.read(s);
    List<InetSocketAddress> servers = new ArrayList<>();
    if (mode == UpstreamGroupSettings.Mode.STUB) {
      for (String server : s.strings("servers")) {
        if (server.equals("resolv.conf") || DotServers.isDot(server)) {
          throw new InvalidConfigException(s.key("servers"),
              "a stub group lists the authoritative servers of its zones as ADDRESS[:PORT], got '" + server + "'");
        }
        InetSocketAddress a = Addresses.parse(server, 53, s.key("servers"));
        if (a.getPort() == 0) {
          throw new InvalidConfigException(s.key("servers"), "port 0 is not a server port: " + a);
        }
        servers.add(a);
      }
      if (servers.isEmpty()) {
        throw new InvalidConfigException(s.key("servers"), "a stub group lists at least one authoritative server");
      }
    }
    // Per authority attempt, the longest an address's smoothed round-trip time may stretch it to.
    Duration timeout = s.has("timeout") ? s.duration("timeout", Duration.ofMillis(50), Duration.ofSeconds(30))
        : Duration.ofSeconds(2);
    UpstreamGroupSettings health = new UpstreamGroupSettings(name, List.copyOf(servers), timeout);
    return new UpstreamGroupSettings(name, List.copyOf(servers), timeout, health.maxFails(), health.backoff(),
        health.maxBackoff(), Map.of(), mode, recursion);
  }

  private static CacheSettings cache(Section s, String name) {
    s.allowOnly("backend", "max_entries", "when_full", "min_ttl", "max_ttl", "negative_ttl", "servfail_ttl", "lmdb");
    CacheSettings.Backend backend = s.choice("backend", CacheSettings.Backend.class, CacheSettings.Backend::configName);
    long maxEntries = s.integer("max_entries", 1, 1L << 31);
    WhenFull whenFull = s.choice("when_full", WhenFull.class, WhenFull::configName);
    Duration minTtl = s.duration("min_ttl", Duration.ZERO, DAY);
    Duration maxTtl = s.duration("max_ttl", Duration.ofSeconds(1), WEEK);
    if (minTtl.compareTo(maxTtl) > 0) {
      throw new InvalidConfigException(
          s.key("min_ttl"), "must not exceed max_ttl (" + Section.show(maxTtl) + "), got " + Section.show(minTtl));
    }
    Duration negativeTtl = s.duration("negative_ttl", Duration.ZERO, DAY);
    Duration servfailTtl = s.duration("servfail_ttl", Duration.ZERO, Duration.ofSeconds(30));
    Section l = s.section("lmdb");
    l.allowOnly("path", "shard_count", "sync", "sync_interval", "map_size", "commit_window", "hot_entries");
    LmdbSettings lmdb = new LmdbSettings(
        Path.of(l.string("path")),
        (int) l.integer("shard_count", 1, 256),
        l.choice("sync", SyncMode.class, SyncMode::configName),
        l.duration("sync_interval", Duration.ofMillis(10), Duration.ofMinutes(10)),
        l.bytes("map_size", 1L << 20, 1L << 40),
        l.duration("commit_window", Duration.ZERO, Duration.ofSeconds(1)),
        l.integer("hot_entries", 0, 100_000_000));
    return new CacheSettings(name, backend, maxEntries, whenFull, minTtl, maxTtl, negativeTtl, servfailTtl, lmdb);
  }

  private static void checkDistinctLmdbPaths(Map<String, CacheSettings> caches) {
    Map<Path, String> owners = new HashMap<>();
    for (CacheSettings c : caches.values()) {
      if (c.backend() != CacheSettings.Backend.LMDB) {
        continue;
      }
      String other = owners.putIfAbsent(c.lmdb().path().toAbsolutePath().normalize(), c.name());
      if (other != null) {
        throw new InvalidConfigException(
            "shoal.caches." + c.name() + ".lmdb.path", "same path as cache '" + other + "'; each LMDB cache needs its own directory");
      }
    }
  }

  /**
   * Every LMDB shard maps {@code map_size} of address space when it opens; maps that do not fit
   * fail one shard after another with ENOMEM while the node runs on without them. Refuse at
   * start instead, leaving half the space for the maps to grow into (a full map grows) and for
   * the JVM.
   */
  private static void checkLmdbMapsFit(Map<String, CacheSettings> caches, long addressSpaceLeft) {
    long total = 0;
    List<String> terms = new ArrayList<>();
    String firstKey = null;
    for (CacheSettings c : caches.values()) {
      if (c.backend() != CacheSettings.Backend.LMDB) {
        continue;
      }
      String key = "shoal.caches." + c.name() + ".lmdb";
      firstKey = firstKey == null ? key + ".map_size" : firstKey;
      long maps = Math.multiplyHigh(c.lmdb().mapSize(), c.lmdb().shardCount()) != 0
          ? Long.MAX_VALUE : c.lmdb().mapSize() * c.lmdb().shardCount();
      total = maps > Long.MAX_VALUE - total ? Long.MAX_VALUE : total + maps;
      terms.add(key + ".map_size (" + gib(c.lmdb().mapSize()) + ") x " + key + ".shard_count ("
          + c.lmdb().shardCount() + ")");
    }
    long budget = addressSpaceLeft / 2;
    if (firstKey != null && total > budget) {
      throw new InvalidConfigException(firstKey, String.join(" + ", terms) + " = " + gib(total)
          + " of address space, but this process has " + gib(addressSpaceLeft)
          + " left (ulimit -v or the CPU's user address space) and LMDB maps may take at most half of it ("
          + gib(budget) + "); lower map_size or shard_count");
    }
  }

  private static String gib(long bytes) {
    return bytes == Long.MAX_VALUE ? "more than 8 EiB" : String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
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
