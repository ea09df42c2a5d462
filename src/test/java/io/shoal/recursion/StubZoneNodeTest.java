package io.shoal.recursion;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.TestNode;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * A node whose profile for example.net. uses a group in {@code mode = stub}: its questions go to
 * the named authoritative server (on a test port), are answered as a resolver answers (RA, no AA)
 * and cached like forwarded answers; the rest of the names still go to the forwarding group.
 */
class StubZoneNodeTest {
  @Test
  void aStubProfileAsksItsAuthorityAndCachesTheAnswer() throws Exception {
    try (FakeAuthorities auth = new FakeAuthorities(1)) {
      auth.server(1).zone("example.net.", "@ 300 SOA ns h 1 3600 600 86400 300\n@ 300 NS ns\n"
          + "ns 300 A " + auth.ip(1) + "\nwww 300 A 192.0.2.2\n");
      String hocon = "shoal.upstreams.lab { mode = stub, servers = [\"" + auth.ip(1) + ":" + auth.port() + "\"] }\n"
          + "shoal.profiles.lab { match = [\"example.net\"], cache = answers, upstreams = lab }\n";
      try (TestNode node = TestNode.start("127.0.0.1:9", hocon)) {
        Message m = DnsClient.udp(node.udp(), DnsClient.query(4242, "www.example.net.", Type.A, 1232));
        assertEquals(Rcode.NOERROR, m.getRcode());
        assertEquals(List.of("192.0.2.2"), m.getSection(Section.ANSWER).stream().map(r -> r.rdataToString()).toList());
        assertTrue(m.getHeader().getFlag(org.xbill.DNS.Flags.RA));
        int asked = auth.server(1).queries.get();
        Message again = DnsClient.udp(node.udp(), DnsClient.query(4243, "www.example.net.", Type.A, 1232));
        assertEquals(Rcode.NOERROR, again.getRcode());
        assertEquals(asked, auth.server(1).queries.get(), "the second answer came from the cache");
        Message nx = DnsClient.udp(node.udp(), DnsClient.query(4244, "nothere.example.net.", Type.A, 1232));
        assertEquals(Rcode.NXDOMAIN, nx.getRcode());
      }
    }
  }
}
