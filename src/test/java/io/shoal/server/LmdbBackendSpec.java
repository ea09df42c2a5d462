package io.shoal.server;

import static org.junit.Assert.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.config.ShoalConfig;
import io.shoal.testing.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/** A node configured with backend = lmdb opens its shards, exports their metrics, and closes them. */
public class LmdbBackendSpec extends JUnitSuite {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void aNodeRunsOnTheLmdbBackend() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    Config raw = ConfigFactory.parseString(String.join("\n",
            "shoal.listen.udp = \"127.0.0.1:0\"",
            "shoal.dnssec.validation = off",
            "shoal.listen.tcp = \"127.0.0.1:0\"",
            "shoal.upstreams.default.servers = [\"127.0.0.1:1\"]",
            "shoal.caches.answers.backend = lmdb",
            "shoal.caches.answers.lmdb.path = \"" + path + "\"",
            "shoal.caches.answers.lmdb.shard_count = 2",
            "shoal.caches.answers.lmdb.sync = periodic",
            "shoal.caches.answers.lmdb.sync_interval = 200ms",
            "shoal.caches.answers.lmdb.map_size = 4MiB",
            "shoal.metrics.prometheus.port = 0",
            // Its own admin port and token file: not 8559 and data/admin.token, shared with anyone.
            "shoal.admin.port = 0",
            "shoal.admin.token_file = \"" + tmp.newFolder().toPath().resolve("admin.token") + "\""))
        .withFallback(ConfigFactory.load())
        .resolve();
    ShoalServer server = ShoalServer.start(raw, ShoalConfig.from(raw), System::currentTimeMillis);
    try {
      String body = Await.value(Duration.ofSeconds(15), () -> scrape(server.metricsEndpoint()),
          b -> b.contains("kind=\"sync\""));
      // Shards open in the background; they have by the time they sync.
      assertTrue(Files.exists(path.resolve("shard-00")));
      assertTrue(Files.exists(path.resolve("shard-01")));
      assertTrue("periodic syncs are exported:\n" + body,
          body.lines().anyMatch(l -> l.startsWith("shoal_lmdb_sync_seconds_count{")
              && l.contains("cache=\"answers\"") && l.contains("kind=\"sync\"")));
      assertTrue("entries per shard are exported",
          body.lines().anyMatch(l -> l.startsWith("shoal_cache_entries{") && l.contains("backend=\"lmdb\"")
              && l.contains("shard=\"1\"")));
    } finally {
      server.stop().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    assertTrue("the environments were written", Files.size(path.resolve("shard-00").resolve("data.mdb")) > 0);
  }

  private static String scrape(String endpoint) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://" + endpoint + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
    return r.body();
  }
}
