package io.shoal.study.attack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.testing.Await;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Silent holders against a real listener that closes what it accepts: how many it closed, and how soon. */
class TcpSiegeTest {

  @Test
  void silentHoldersReportTheServersClosesAndTheMedianTimeToClose() throws Exception {
    AtomicInteger closed = new AtomicInteger();
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      // a server with a 300 ms deadline on connections that say nothing
      Thread acceptor = new Thread(() -> {
        for (int i = 0; i < 200 && !server.isClosed(); i++) {
          try {
            Socket s = server.accept();
            Thread.sleep(300);
            s.close();
            closed.incrementAndGet();
          } catch (IOException | InterruptedException e) {
            return;
          }
        }
      }, "test-acceptor");
      acceptor.setDaemon(true);
      acceptor.start();
      // it ends by itself after 3 s: time for the server to close each holder at least once
      TcpSiege siege = TcpSiege.silent(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()),
          2, Duration.ofSeconds(3));
      assertTrue(Await.until(Duration.ofSeconds(30), () -> !siege.running()), "the siege ended at its limit");
      Attack.Report report = siege.stop();
      PhaseRow.Held held = report.held();
      assertNotNull(held, report.detail());
      assertTrue(held.closedByServer() >= 1, report.detail());
      assertTrue(held.opened() >= held.closedByServer(), report.detail());
      // from the connect: at least the server's 300 ms deadline
      assertTrue(held.closeMedianSeconds() >= 0.3, report.detail());
      assertTrue(report.detail().startsWith("2 silent TCP connections: "), report.detail());
      assertTrue(report.detail().contains("closed by the server (median "), report.detail());
    }
  }

  @Test
  void theMedianOfCloseTimesIsInSeconds() {
    assertNull(TcpSiege.medianSeconds(List.of()));
    assertEquals(5.2, TcpSiege.medianSeconds(List.of(5200L)), 1e-9);
    assertEquals(5.0, TcpSiege.medianSeconds(List.of(6000L, 4000L, 5000L)), 1e-9);
    assertEquals(4.5, TcpSiege.medianSeconds(List.of(6000L, 4000L, 5000L, 1000L)), 1e-9);
  }
}
