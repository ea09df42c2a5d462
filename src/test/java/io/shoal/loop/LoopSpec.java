package io.shoal.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.ShoalProcess;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import io.shoal.testing.UdpRelay;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** A profile whose upstream leads back to the node: found by the probe, then answered SERVFAIL. */
public class LoopSpec extends JUnitSuite {

  @Test
  public void aGroupWhoseUpstreamForwardsBackIsDetectedAndAnsweredServfailWithoutForwarding() throws Exception {
    try (TestAuthServer auth = new TestAuthServer().addA("a.example.test.");
        UdpRelay relay = new UdpRelay()) {
      // The relay stands for a resolver (or a Service) that forwards to this node: the config
      // names the relay, so the start-time check cannot see the loop.
      try (TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.upstreams.looped { servers = [\"" + relay.hostPort() + "\"], timeout = 2s }",
          "shoal.profiles.looped { match = [\"loop.test.\"], cache = answers, upstreams = looped }"))) {
        relay.target(node.udp());
        Metrics metrics = node.metrics();
        String looped = "group=\"looped\"";

        double detected = metrics.await(v -> v == 1.0, "shoal_upstream_loop_detected", looped);

        assertEquals("the probe came back through the relay", 1.0, detected, 0.0);
        int relayedAtDetection = relay.relayed();
        // The probe went round once per attempt: it is answered SERVFAIL where it came back.
        assertTrue("relayed " + relayedAtDetection, relayedAtDetection >= 1 && relayedAtDetection <= 3);

        long start = System.nanoTime();
        Message reply = DnsClient.udp(node.udp(), DnsClient.query(7, "www.loop.test.", Type.A, null));
        long millis = (System.nanoTime() - start) / 1_000_000;

        assertEquals(Rcode.SERVFAIL, reply.getRcode());
        assertTrue("answered without waiting out the 2 s upstream timeout: " + millis + " ms", millis < 2000);
        assertEquals("nothing more was sent round the loop", relayedAtDetection, relay.relayed());
        assertEquals(1.0, metrics.await(v -> v >= 1.0, "shoal_upstream_loop_servfails_total", looped), 0.0);
        // The other profile's group does not loop and still forwards.
        assertEquals(0.0, metrics.value("shoal_upstream_loop_detected", "group=\"default\""), 0.0);
        Message ok = DnsClient.udp(node.udp(), DnsClient.query(8, "a.example.test.", Type.A, null));
        assertEquals(Rcode.NOERROR, ok.getRcode());
        assertEquals(1, ok.getSection(org.xbill.DNS.Section.ANSWER).size());
      }
    }
  }

  @Test
  public void anUpstreamThatIsTheNodesOwnListenAddressExitsTwoBeforeBinding() throws Exception {
    // Never bound: the check refuses the config before any socket is opened.
    int port = TestNode.freePort();
    ShoalProcess p = ShoalProcess.launch("serve", "-Dshoal.listen.udp=127.0.0.1:" + port,
        "-Dshoal.listen.tcp=127.0.0.1:" + port, "-Dshoal.upstreams.default.servers.0=127.0.0.1:" + port,
        "-Dshoal.metrics.enabled=off");

    assertEquals(2, p.exit(60));
    String out = p.output();
    assertTrue(out, out.contains("shoal.upstreams.default.servers: 127.0.0.1:" + port + " is this node's own address"));
    assertTrue(out, !out.contains("answering on"));
  }
}
