package io.shoal.study.host;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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

  /** A port free for UDP and TCP right now (another process could still take it before we bind). */
  public static int pick() throws IOException {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
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
