package io.shoal.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.access.AccessRule.Action;
import io.shoal.metrics.ServerMetrics;
import java.net.InetAddress;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;

/** Longest-prefix matching of client addresses, the default networks, and rule parsing. */
class AccessControlTest {
  private static final ServerMetrics METRICS = new ServerMetrics();

  private static AccessControl of(String... rules) {
    return new AccessControl(java.util.Arrays.stream(rules).map(AccessRule::parse).toList(), METRICS);
  }

  private static Action action(AccessControl ac, String address) throws Exception {
    return ac.actionFor(InetAddress.getByName(address));
  }

  @Test
  void theDefaultServesLoopbackAndPrivateNetworksOnly() throws Exception {
    AccessControl ac = new AccessControl(
        AccessControl.PRIVATE_NETWORKS.stream().map(AccessRule::parse).toList(), METRICS);
    for (String allowed : new String[] {"127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255",
        "192.168.1.1", "169.254.10.10", "::1", "fd00::2", "fc12::1", "fe80::1"}) {
      assertEquals(Action.ALLOW, action(ac, allowed), allowed);
    }
    for (String refused : new String[] {"8.8.8.8", "172.32.0.1", "11.0.0.1", "192.169.0.1", "2001:db8::1",
        "::2", "fe00::1", "2a00:1450::1"}) {
      assertEquals(Action.REFUSE, action(ac, refused), refused);
    }
  }

  @Test
  void theLongestMatchWinsWhateverTheOrder() throws Exception {
    AccessControl ac = of("10.0.0.0/8 allow", "10.1.2.0/24 deny", "10.1.2.3/32 refuse", "0.0.0.0/0 deny",
        "2001:db8::/32 allow", "2001:db8:0:1::/64 deny", "::/0 refuse");
    assertEquals(Action.ALLOW, action(ac, "10.9.9.9"));
    assertEquals(Action.DENY, action(ac, "10.1.2.4"));
    assertEquals(Action.REFUSE, action(ac, "10.1.2.3"));
    assertEquals(Action.DENY, action(ac, "203.0.113.1"));
    assertEquals(Action.ALLOW, action(ac, "2001:db8:0:2::1"));
    assertEquals(Action.DENY, action(ac, "2001:db8:0:1::5"));
    assertEquals(Action.REFUSE, action(ac, "2001:db9::1"));
  }

  @Test
  void prefixesThatEndInsideABytePartOfTheWayMatch() throws Exception {
    AccessControl ac = of("172.16.0.0/12 allow", "2001:db8:8000::/33 allow", "2001:db8::/127 deny");
    assertEquals(Action.ALLOW, action(ac, "172.31.1.1"));
    assertEquals(Action.REFUSE, action(ac, "172.32.1.1"));
    assertEquals(Action.ALLOW, action(ac, "2001:db8:ffff::1"));
    assertEquals(Action.REFUSE, action(ac, "2001:db8:7fff::1"));
    assertEquals(Action.DENY, action(ac, "2001:db8::1"));
    assertEquals(Action.REFUSE, action(ac, "2001:db8::2"));
  }

  @Test
  void aRefusedClientGetsRefusedWithItsQuestionAndADeniedOneNothing() throws Exception {
    AccessControl ac = of("127.0.0.1/32 allow", "10.0.0.0/8 deny");
    Message q = Message.newQuery(org.xbill.DNS.Record.newRecord(
        org.xbill.DNS.Name.fromString("www.example.com."), org.xbill.DNS.Type.A, org.xbill.DNS.DClass.IN));
    assertNull(ac.turnAway(q.toWire(), InetAddress.getByName("127.0.0.1")));
    assertEquals(Optional.empty(), ac.turnAway(q.toWire(), InetAddress.getByName("10.0.0.1")));
    Optional<byte[]> refused = ac.turnAway(q.toWire(), InetAddress.getByName("198.51.100.1"));
    Message reply = new Message(refused.orElseThrow());
    assertEquals(Rcode.REFUSED, reply.getRcode());
    assertEquals(q.getHeader().getID(), reply.getHeader().getID());
    assertEquals(q.getQuestion(), reply.getQuestion());
    // A response or junk from a refused network gets nothing: no reflection.
    assertEquals(Optional.empty(), ac.turnAway(new byte[] {1, 2, 3}, InetAddress.getByName("198.51.100.1")));
  }

  @Test
  void badRulesSayWhatIsWrong() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AccessRule.parse("10.0.0.0/8 permit"))
        .getMessage().contains("allowed actions: allow, refuse, deny"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AccessRule.parse("10.0.0.0/33 allow"))
        .getMessage().contains("between 0 and 32"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AccessRule.parse("10.0.0.1/8 allow"))
        .getMessage().contains("bits set after the first 8"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AccessRule.parse("example.com allow"))
        .getMessage().contains("not an IPv4 or IPv6 address"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AccessRule.parse("10.0.0.0/8"))
        .getMessage().contains("NETWORK/LENGTH ACTION"));
  }
}
