package io.shoal.server;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.util.Arrays;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/** End to end over real sockets: shoal in front of a test authoritative server. */
public class ResolverSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestAuthServer local;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    local = new TestAuthServer();
    for (String n : new String[] {"www1", "www2", "www3", "www4", "www5"}) {
      auth.add(new ARecord(TestAuthServer.name(n + ".example.test."), DClass.IN, 60,
          java.net.InetAddress.getByName("192.0.2.1")));
    }
    String[] chunks = new String[12];
    Arrays.fill(chunks, "x".repeat(200));
    auth.add(new TXTRecord(TestAuthServer.name("big.example.test."), DClass.IN, 60, Arrays.asList(chunks)));
    local.add(new ARecord(TestAuthServer.name("svc.cluster.local."), DClass.IN, 30,
        java.net.InetAddress.getByName("10.0.0.10")));
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.upstreams.local { servers = [\"" + local.hostPort() + "\"], timeout = 300ms }",
        "shoal.profiles.cluster { match = [\"cluster.local.\"], cache = answers, upstreams = local }"));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
    local.close();
  }

  private static long ttl(Message m) {
    return m.getSection(Section.ANSWER).get(0).getTTL();
  }

  @Test
  public void answersFromUpstreamThenFromCacheWithTheTtlCountedDown() throws Exception {
    Message first = DnsClient.udp(node.udp(), DnsClient.query(1, "www1.example.test.", Type.A, null));
    assertEquals(Rcode.NOERROR, first.getRcode());
    assertEquals("192.0.2.1", ((ARecord) first.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
    assertEquals(60, ttl(first));
    assertEquals(1, auth.queries("www1.example.test.", Type.A));

    node.advanceSeconds(7);
    Message second = DnsClient.udp(node.udp(), DnsClient.query(2, "www1.example.test.", Type.A, null));
    assertEquals(53, ttl(second));
    assertEquals("a hit must not go upstream", 1, auth.queries("www1.example.test.", Type.A));
    assertFalse("a cached answer is not authoritative", second.getHeader().getFlag(Flags.AA));
    assertTrue(second.getHeader().getFlag(Flags.RA));

    node.advanceSeconds(54);
    Message third = DnsClient.udp(node.udp(), DnsClient.query(3, "www1.example.test.", Type.A, null));
    assertEquals("expired entries are refetched", 2, auth.queries("www1.example.test.", Type.A));
    assertEquals(60, ttl(third));
  }

  @Test
  public void echoesTheQueryIdAndTheExactCaseOfTheName() throws Exception {
    for (String asked : new String[] {"WwW2.ExAmPlE.TeSt.", "www2.EXAMPLE.test.", "WWW2.example.TEST."}) {
      int id = 0xBEEF ^ asked.hashCode() & 0xFFFF;
      byte[] query = DnsClient.query(id, asked, Type.A, 1232).toWire();
      byte[] reply = DnsClient.udp(node.udp(), query, 5000);
      assertEquals(id >> 8 & 0xFF, reply[0] & 0xFF);
      assertEquals(id & 0xFF, reply[1] & 0xFF);
      int nameLen = asked.length() + 1;
      assertArrayEquals("0x20: question name echoed byte for byte",
          Arrays.copyOfRange(query, 12, 12 + nameLen), Arrays.copyOfRange(reply, 12, 12 + nameLen));
      assertEquals(asked, new Message(reply).getQuestion().getName().toString());
    }
    assertEquals("three spellings, one cache entry", 1, auth.queries("www2.example.test.", Type.A));
  }

  @Test
  public void cachesNxdomainBySoaMinimumThenExpiresIt() throws Exception {
    Message first = DnsClient.udp(node.udp(), DnsClient.query(10, "missing.example.test.", Type.A, null));
    assertEquals(Rcode.NXDOMAIN, first.getRcode());
    node.advanceSeconds(5);
    Message second = DnsClient.udp(node.udp(), DnsClient.query(11, "missing.example.test.", Type.A, null));
    assertEquals(Rcode.NXDOMAIN, second.getRcode());
    assertEquals(1, auth.queries("missing.example.test.", Type.A));
    Record soa = second.getSection(Section.AUTHORITY).get(0);
    assertEquals(Type.SOA, soa.getType());
    assertEquals("SOA TTL = min(SOA TTL, MINIMUM) counted down", TestAuthServer.SOA_MINIMUM - 5, soa.getTTL());

    node.advanceSeconds(TestAuthServer.SOA_MINIMUM);
    DnsClient.udp(node.udp(), DnsClient.query(12, "missing.example.test.", Type.A, null));
    assertEquals(2, auth.queries("missing.example.test.", Type.A));
  }

  @Test
  public void cachesNodata() throws Exception {
    Message first = DnsClient.udp(node.udp(), DnsClient.query(20, "www3.example.test.", Type.AAAA, null));
    assertEquals(Rcode.NOERROR, first.getRcode());
    assertTrue(first.getSection(Section.ANSWER).isEmpty());
    DnsClient.udp(node.udp(), DnsClient.query(21, "www3.example.test.", Type.AAAA, null));
    assertEquals(1, auth.queries("www3.example.test.", Type.AAAA));
  }

  @Test
  public void truncatesOverUdpAndServesTheWholeAnswerOverTcp() throws Exception {
    Message udp = DnsClient.udp(node.udp(), DnsClient.query(30, "big.example.test.", Type.TXT, null));
    assertTrue("2.4 KB answer to a 512-byte client must be truncated", udp.getHeader().getFlag(Flags.TC));
    assertTrue(udp.getSection(Section.ANSWER).isEmpty());

    Message edns = DnsClient.udp(node.udp(), DnsClient.query(31, "big.example.test.", Type.TXT, 1232));
    assertTrue(edns.getHeader().getFlag(Flags.TC));

    Message tcp = DnsClient.tcp(node.tcp(), DnsClient.query(32, "big.example.test.", Type.TXT, null));
    assertFalse(tcp.getHeader().getFlag(Flags.TC));
    assertEquals(1, tcp.getSection(Section.ANSWER).size());
    assertEquals(12, ((TXTRecord) tcp.getSection(Section.ANSWER).get(0)).getStrings().size());
    assertEquals(32, tcp.getHeader().getID());

    Message big = DnsClient.udp(node.udp(), DnsClient.query(33, "big.example.test.", Type.TXT, 4096));
    assertTrue("a client advertising 4096 bytes still gets at most listen.max_udp_size (1232)",
        big.getHeader().getFlag(Flags.TC));
  }

  @Test
  public void routesNamesToTheProfileWithTheLongestMatchingSuffix() throws Exception {
    Message svc = DnsClient.udp(node.udp(), DnsClient.query(40, "svc.cluster.local.", Type.A, null));
    assertEquals(Rcode.NOERROR, svc.getRcode());
    assertEquals(1, local.queries("svc.cluster.local.", Type.A));
    assertEquals(0, auth.queries("svc.cluster.local.", Type.A));

    DnsClient.udp(node.udp(), DnsClient.query(41, "www4.example.test.", Type.A, null));
    assertEquals(1, auth.queries("www4.example.test.", Type.A));
    assertEquals(0, local.queries("www4.example.test.", Type.A));
  }

  @Test
  public void answersOverTcpFromTheSameCache() throws Exception {
    Message viaUdp = DnsClient.udp(node.udp(), DnsClient.query(50, "www5.example.test.", Type.A, null));
    Message viaTcp = DnsClient.tcp(node.tcp(), DnsClient.query(51, "www5.example.test.", Type.A, null));
    assertEquals(ttl(viaUdp), ttl(viaTcp));
    assertEquals(51, viaTcp.getHeader().getID());
    assertEquals(1, auth.queries("www5.example.test.", Type.A));
  }
}
