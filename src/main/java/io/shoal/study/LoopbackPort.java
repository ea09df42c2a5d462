package io.shoal.study;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Picks ports on 127.0.0.1 that are free for both UDP and TCP, for servers a study starts. */
public final class LoopbackPort {
  private static final int ATTEMPTS = 50;

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
          return port;
        } catch (IOException takenForTcp) {
          // try another
        }
      }
    }
    throw new IOException("no port on 127.0.0.1 was free for both UDP and TCP after " + ATTEMPTS + " tries");
  }
}
