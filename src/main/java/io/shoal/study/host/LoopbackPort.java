package io.shoal.study.host;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;

/** Picks ports on 127.0.0.1 that are free for both UDP and TCP, for servers a study starts. */
public final class LoopbackPort {
  private static final int ATTEMPTS = 50;
  /**
   * Ports handed out lately. A picked port is only free until someone binds it, and a cluster
   * member picks a dozen before its first node starts: without this the kernel could offer one
   * of them twice.
   */
  private static final int REMEMBERED = 512;
  private static final Deque<Integer> recent = new ArrayDeque<>();

  private LoopbackPort() {}

  /** The lowest port picked: below it are the well-known and registered services of a host. */
  static final int LOWEST = 10000;
  private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

  /**
   * A port free for UDP and TCP right now (another process could still take it before we bind).
   * Picked below the kernel's ephemeral range where the host has room there: a server may bind its
   * port many seconds after it was picked (a JVM under a CPU quota opens its metrics port last), and
   * meanwhile every outgoing connection on the host (the nodes' own, other programs') draws a local
   * port from the ephemeral range and could take it.
   */
  public static int pick() throws IOException {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    int below = ephemeralStart();
    for (int i = 0; below - LOWEST >= 1000 && i < ATTEMPTS; i++) {
      int port = LOWEST + RANDOM.nextInt(below - LOWEST);
      if (freeForBoth(loopback, port) && remember(port)) {
        return port;
      }
    }
    for (int i = 0; i < ATTEMPTS; i++) {
      try (DatagramSocket udp = new DatagramSocket(new InetSocketAddress(loopback, 0))) {
        int port = udp.getLocalPort();
        try (ServerSocket tcp = new ServerSocket()) {
          tcp.setReuseAddress(false);
          tcp.bind(new InetSocketAddress(loopback, port));
          if (remember(port)) {
            return port;
          }
        } catch (IOException takenForTcp) {
          // try another
        }
      }
    }
    throw new IOException("no port on 127.0.0.1 was free for both UDP and TCP after " + ATTEMPTS + " tries");
  }

  private static final java.util.Random RANDOM = new java.security.SecureRandom();

  private static boolean freeForBoth(InetAddress loopback, int port) {
    try (DatagramSocket udp = new DatagramSocket(new InetSocketAddress(loopback, port));
        ServerSocket tcp = new ServerSocket()) {
      tcp.setReuseAddress(false);
      tcp.bind(new InetSocketAddress(loopback, port));
      return true;
    } catch (IOException taken) {
      return false;
    }
  }

  /** The first port of the kernel's ephemeral range; {@link #LOWEST} (nothing below it) where unknown. */
  static int ephemeralStart() {
    try {
      // Read as a stream to its end: Files.readString trusts the size the file reports, which
      // /proc gives as 0, and returned "3" of "32768 60999" (no port was ever picked below it).
      String line;
      try (java.io.BufferedReader in = Files.newBufferedReader(EPHEMERAL_RANGE)) {
        line = in.readLine();
      }
      String[] range = line.strip().split("\\s+");
      return Integer.parseInt(range[0]);
    } catch (IOException | RuntimeException e) {
      return LOWEST;
    }
  }

  /** Records a port as handed out; false if it was handed out lately. */
  private static synchronized boolean remember(int port) {
    if (recent.contains(port)) {
      return false;
    }
    recent.addLast(port);
    if (recent.size() > REMEMBERED) {
      recent.removeFirst();
    }
    return true;
  }
}
