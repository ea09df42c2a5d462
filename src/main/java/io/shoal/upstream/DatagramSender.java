package io.shoal.upstream;

import java.net.InetSocketAddress;

/**
 * A listening UDP socket of this node, from which a query can be sent so that its reply comes back
 * to the node's listeners ({@link UpstreamSelector#fromListener}).
 */
public interface DatagramSender {
  /**
   * Sends {@code packet} to {@code to} from the listening address; false when it was not sent (the
   * socket cannot reach {@code to}, e.g. it listens on loopback only, or the send failed).
   */
  boolean sendDatagram(byte[] packet, InetSocketAddress to);
}
