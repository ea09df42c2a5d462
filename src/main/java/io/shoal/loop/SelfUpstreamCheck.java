package io.shoal.loop;

import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import io.shoal.config.UpstreamGroupSettings;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * Refuses, before anything binds, an upstream server that is one of this node's own listen
 * addresses: every miss sent there would come straight back. Loops through other resolvers or a
 * Kubernetes Service in front of this node cannot be seen from the config; {@link LoopDetector}
 * finds those by probing.
 */
public final class SelfUpstreamCheck {
  private SelfUpstreamCheck() {}

  /** Checks every upstream group against the listen addresses and this host's interface addresses. */
  public static void refuse(ShoalConfig config) {
    refuse(config, interfaceAddresses());
  }

  /**
   * @param local the addresses of this host's interfaces (a wildcard listen address answers on
   *     all of them)
   * @throws InvalidConfigException naming {@code shoal.upstreams.<group>.servers}
   */
  static void refuse(ShoalConfig config, Set<InetAddress> local) {
    List<InetSocketAddress> listens = new ArrayList<>(List.of(config.udpListen(), config.tcpListen()));
    if (config.tls().dot() != null) {
      // A tls:// upstream on this node's own DoT listener; the loop probes (UDP) do not reach it.
      listens.add(config.tls().dot());
    }
    // Sorted, so the same config always names the same group first.
    for (UpstreamGroupSettings group : new TreeMap<>(config.upstreams()).values()) {
      for (InetSocketAddress server : group.servers()) {
        for (InetSocketAddress listen : listens) {
          if (reaches(listen, server, local)) {
            String which = listen == config.udpListen() ? "listen.udp"
                : listen == config.tcpListen() ? "listen.tcp" : "listen.tls";
            throw new InvalidConfigException("shoal.upstreams." + group.name() + ".servers",
                show(server) + " is this node's own address (" + which + " = " + show(listen)
                    + "): every miss forwarded there would come back to shoal, a forwarding loop. List the "
                    + "resolvers shoal should ask; if the server came from resolv.conf, name the real resolvers "
                    + "instead of \"resolv.conf\"");
          }
        }
      }
    }
  }

  /** Whether a datagram sent to {@code server} is delivered to a socket bound to {@code listen}. */
  static boolean reaches(InetSocketAddress listen, InetSocketAddress server, Set<InetAddress> local) {
    if (listen.getPort() == 0 || listen.getPort() != server.getPort()) {
      return false;
    }
    InetAddress bound = listen.getAddress();
    InetAddress to = server.getAddress();
    if (!bound.isAnyLocalAddress()) {
      return bound.equals(to);
    }
    // "0.0.0.0" answers IPv4 only; "[::]" answers both families (see listen in application.conf).
    if (bound instanceof Inet4Address && to instanceof Inet6Address) {
      return false;
    }
    // All of 127.0.0.0/8 and ::1 reach a wildcard socket, though lo lists only 127.0.0.1.
    return to.isLoopbackAddress() || to.isAnyLocalAddress() || local.contains(to);
  }

  private static Set<InetAddress> interfaceAddresses() {
    Set<InetAddress> all = new HashSet<>();
    try {
      for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        all.addAll(Collections.list(nif.getInetAddresses()));
      }
    } catch (SocketException e) {
      // Without the list, loopback and exact matches are still refused; the probe covers the rest.
      return Set.of();
    }
    return all;
  }

  /** host:port, IPv6 in brackets, as the config writes it. */
  static String show(InetSocketAddress a) {
    String host = a.getAddress().getHostAddress();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
  }
}
