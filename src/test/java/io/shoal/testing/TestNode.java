package io.shoal.testing;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.cache.lmdb.CacheShard;
import io.shoal.config.ConfigLoader;
import io.shoal.config.ShoalConfig;
import io.shoal.reload.ConfigReload;
import io.shoal.server.ShoalServer;
import io.shoal.study.host.LoopbackPort;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A shoal node in the test's JVM on ephemeral ports, with a clock the test moves by hand so TTL
 * behaviour is checked without sleeping.
 */
public final class TestNode implements AutoCloseable {
  public final ShoalServer server;
  public final AtomicLong clock;
  private final Path tokenFile;
  /** The keys every config of this node has, under the test's own. */
  private final Map<String, Object> base;

  private TestNode(ShoalServer server, AtomicLong clock, Path tokenFile, Map<String, Object> base) {
    this.server = server;
    this.clock = clock;
    this.tokenFile = tokenFile;
    this.base = base;
  }

  /** Starts a node whose only upstream group is {@code upstream}, with extra HOCON on top. */
  public static TestNode start(String upstream, String extraHocon) {
    return start(upstream, extraHocon, CacheShard.Opener.FILES);
  }

  /** As {@link #start(String, String)}, with the node's LMDB shards opening their stores through {@code lmdbStores}. */
  public static TestNode start(String upstream, String extraHocon, CacheShard.Opener lmdbStores) {
    Map<String, Object> base = new HashMap<>();
    base.put("shoal.listen.udp", "127.0.0.1:0");
    base.put("shoal.listen.tcp", "127.0.0.1:0");
    base.put("shoal.upstreams.default.servers", java.util.List.of(upstream));
    base.put("shoal.upstreams.default.timeout", "300ms");
    // A port the OS picks; Kamon is process-wide, so every node in this JVM reports the first
    // node's endpoint, the one that serves them all.
    base.put("shoal.metrics.prometheus.port", 0);
    base.put("shoal.shutdown.grace", "1s");
    base.put("shoal.admin.port", 0);
    // The test upstreams serve unsigned fake zones that no root anchor covers; ValidationSpec turns it on.
    base.put("shoal.dnssec.validation", "off");
    try {
      // Each node its own token file, so nodes in one JVM do not overwrite each other's.
      base.put("shoal.admin.token_file",
          Files.createTempDirectory("shoal-admin").resolve("admin.token").toString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    Config raw = layered(base, extraHocon);
    AtomicLong clock = new AtomicLong(System.currentTimeMillis());
    ShoalConfig config = ShoalConfig.from(raw);
    ShoalServer server = ShoalServer.start(raw, config, clock::get, lmdbStores);
    int adminPort = server.adminAddress() == null ? 0 : server.adminAddress().getPort();
    return new TestNode(server, clock, config.admin().tokenFileFor(adminPort), Map.copyOf(base));
  }

  private static Config layered(Map<String, Object> base, String extraHocon) {
    return ConfigFactory.parseString(extraHocon)
        .withFallback(ConfigFactory.parseMap(base))
        .withFallback(ConfigLoader.load(Optional.empty()))
        .resolve();
  }

  /**
   * Reloads the node with {@code extraHocon} over the keys it started with (what it started with
   * is replaced: a key left out goes back to the default), as a changed config file would.
   */
  public ConfigReload.Outcome reload(String extraHocon) {
    return server.reload("test", layered(base, extraHocon));
  }

  public InetSocketAddress udp() {
    return server.udpAddress();
  }

  public InetSocketAddress tcp() {
    return server.tcpAddress();
  }

  /** The token file the node wrote for its admin endpoint. */
  public Path adminTokenFile() {
    return tokenFile;
  }

  /** The admin endpoint's token, as {@code shoal cache flush} reads it. */
  public String adminToken() throws IOException {
    return io.shoal.admin.AdminToken.read(tokenFile);
  }

  public void advanceSeconds(long s) {
    clock.addAndGet(s * 1000);
  }

  public Metrics metrics() {
    return new Metrics(server.metricsEndpoint());
  }

  /**
   * A port free on 127.0.0.1 for TCP and UDP, for a test to bind later. Picked by the same
   * {@link LoopbackPort} the tests' knotd and Unbound use, so no two of them are handed one port:
   * below the kernel's range of ephemeral ports, so that no socket bound to port 0 meanwhile (every
   * test node's DNS and metrics listeners) can take it first, and never one handed out lately.
   */
  public static int freePort() {
    try {
      return LoopbackPort.pick();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() throws Exception {
    server.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
