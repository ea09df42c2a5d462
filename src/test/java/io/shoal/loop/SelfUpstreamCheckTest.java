package io.shoal.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.config.ConfigLoader;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The start-time refusal of an upstream that is this node's own listen address. */
class SelfUpstreamCheckTest {
  /** The interface addresses of an imaginary host: loopback and one LAN address. */
  private static final Set<InetAddress> LOCAL = Set.of(ip("127.0.0.1"), ip("::1"), ip("192.0.2.10"));

  private static InetAddress ip(String s) {
    try {
      return InetAddress.getByName(s);
    } catch (java.net.UnknownHostException e) {
      throw new IllegalArgumentException(e);
    }
  }

  private static ShoalConfig config(String hocon) {
    return ShoalConfig.from(ConfigFactory.parseString(hocon).withFallback(ConfigLoader.load(Optional.empty())));
  }

  private static boolean reaches(String listen, String server) {
    InetSocketAddress l = addr(listen);
    InetSocketAddress s = addr(server);
    return SelfUpstreamCheck.reaches(l, s, LOCAL);
  }

  private static InetSocketAddress addr(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    String host = hostPort.substring(0, colon).replace("[", "").replace("]", "");
    return new InetSocketAddress(ip(host), Integer.parseInt(hostPort.substring(colon + 1)));
  }

  @Test
  void upstreamOnTheListenAddressIsRefusedNamingTheGroupsServersKey() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> SelfUpstreamCheck.refuse(config(
        "shoal.listen { udp = \"127.0.0.1:5353\", tcp = \"127.0.0.1:5353\" }\n"
            + "shoal.upstreams.corp { servers = [\"192.0.2.53:53\"], timeout = 1s }\n"
            + "shoal.upstreams.default.servers = [\"192.0.2.1:53\", \"127.0.0.1:5353\"]"), LOCAL));

    assertEquals("shoal.upstreams.default.servers", e.key());
    assertTrue(e.getMessage().contains("127.0.0.1:5353 is this node's own address (listen.udp = 127.0.0.1:5353)"),
        e.getMessage());
    assertTrue(e.getMessage().contains("forwarding loop"), e.getMessage());
  }

  @Test
  void upstreamOnTheTcpListenerOnlyIsRefusedToo() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> SelfUpstreamCheck.refuse(config(
        "shoal.listen { udp = \"127.0.0.1:5353\", tcp = \"127.0.0.1:5354\" }\n"
            + "shoal.upstreams.default.servers = [\"127.0.0.1:5354\"]"), LOCAL));

    assertTrue(e.getMessage().contains("listen.tcp = 127.0.0.1:5354"), e.getMessage());
  }

  @Test
  void aDotUpstreamOnTheNodesOwnDotListenerIsRefused() throws Exception {
    java.nio.file.Path[] pair = io.shoal.testing.TestCertificates.newCa().issue("dot");
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> SelfUpstreamCheck.refuse(config(
        "shoal.listen { udp = \"127.0.0.1:5353\", tcp = \"127.0.0.1:5353\", tls = \"127.0.0.1:8853\" }\n"
            + "shoal.tls { certificate = \"" + pair[0] + "\", private_key = \"" + pair[1] + "\" }\n"
            + "shoal.upstreams.default.servers = [\"tls://127.0.0.1:8853#dns.example\"]"), LOCAL));

    assertEquals("shoal.upstreams.default.servers", e.key());
    assertTrue(e.getMessage().contains("listen.tls = 127.0.0.1:8853"), e.getMessage());
  }

  @Test
  void otherServersAndEphemeralListenersPass() {
    SelfUpstreamCheck.refuse(config(
        "shoal.listen { udp = \"127.0.0.1:5353\", tcp = \"127.0.0.1:5353\" }\n"
            + "shoal.upstreams.default.servers = [\"127.0.0.1:53\", \"127.0.0.2:5353\", \"192.0.2.1:5353\"]"), LOCAL);
    // Port 0 picks a free port at bind: no configured server can name it.
    SelfUpstreamCheck.refuse(config(
        "shoal.listen { udp = \"127.0.0.1:0\", tcp = \"127.0.0.1:0\" }\n"
            + "shoal.upstreams.default.servers = [\"127.0.0.1:53\"]"), LOCAL);
  }

  @Test
  void aWildcardListenerIsReachedOnEveryLocalAddressOfItsFamily() {
    assertTrue(reaches("0.0.0.0:53", "192.0.2.10:53"));
    assertTrue(reaches("0.0.0.0:53", "127.0.0.53:53"), "all of 127/8 reaches a wildcard socket");
    assertFalse(reaches("0.0.0.0:53", "192.0.2.11:53"), "not an address of this host");
    assertFalse(reaches("0.0.0.0:53", "192.0.2.10:5353"), "another port");
    assertFalse(reaches("0.0.0.0:53", "[::1]:53"), "0.0.0.0 answers IPv4 only");
    assertTrue(reaches("[::]:53", "[::1]:53"));
    assertTrue(reaches("[::]:53", "192.0.2.10:53"), "[::] answers both families");
  }

  @Test
  void aSpecificListenerIsReachedOnItsOwnAddressOnly() {
    assertTrue(reaches("192.0.2.10:53", "192.0.2.10:53"));
    assertFalse(reaches("192.0.2.10:53", "127.0.0.1:53"));
    assertFalse(reaches("127.0.0.1:5353", "127.0.0.2:5353"));
  }
}
