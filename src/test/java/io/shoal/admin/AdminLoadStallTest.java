package io.shoal.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import io.shoal.config.AdminSettings;
import io.shoal.metrics.CacheLoadMetrics;
import io.shoal.reload.ConfigReload;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A load whose client stops sending half-way does not hold the endpoint's thread for ever: after
 * the read timeout without a byte its connection is closed.
 */
class AdminLoadStallTest {
  private ActorSystem<Void> system;

  @BeforeEach
  void start() {
    system = ActorSystem.create(Behaviors.empty(), "admin-load-stall");
  }

  @AfterEach
  void stop() {
    system.terminate();
  }

  @Test
  void aLoadThatStopsSendingHasItsConnectionClosedAfterTheReadTimeout(@TempDir Path dir) throws Exception {
    AdminToken token = AdminToken.fresh();
    CacheTransfer transfer = new CacheTransfer(List.of(), () -> null, System::currentTimeMillis, new CacheLoadMetrics(null));
    InetSocketAddress admin = AdminEndpoint.start(system,
        new AdminSettings(true, "127.0.0.1", 0, dir.resolve("admin-{port}.token").toString()),
        (name, qtype) -> CompletableFuture.completedFuture(new AdminEndpoint.Flushed(0, false, null)), transfer,
        () -> new ConfigReload.Outcome(false, "not here"), token, Duration.ofSeconds(1));
    String written = Files.readString(dir.resolve("admin-" + admin.getPort() + ".token")).trim();
    try (Socket s = new Socket(admin.getAddress(), admin.getPort())) {
      OutputStream out = s.getOutputStream();
      // A body of 100,000 bytes announced, its first line sent, and then nothing.
      out.write(("POST /cache/load HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AdminToken.HEADER + ": " + written + "\r\n"
          + "Content-Length: 100000\r\n\r\n; shoal-dump v1 dumped=" + System.currentTimeMillis() + "\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      s.setSoTimeout(15_000);
      InputStream in = s.getInputStream();
      long t0 = System.nanoTime();
      int read;
      try {
        read = in.read();
      } catch (SocketTimeoutException e) {
        throw new AssertionError("the stalled load's connection was still open after 15 s", e);
      } catch (java.net.SocketException e) {
        read = -1; // reset by the server: closed, as it should be
      }
      long waited = Duration.ofNanos(System.nanoTime() - t0).toMillis();
      assertEquals(-1, read, "the server closed the connection without a reply");
      assertTrue(waited >= 900, "closed after " + waited + " ms, before the read timeout");
    }
  }
}
