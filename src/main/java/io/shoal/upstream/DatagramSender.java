package io.shoal.upstream;

import java.net.InetSocketAddress;

/**
 * A listening UDP socket of this node, from which a query can be sent so that its reply comes back
 * to the node's listeners ({@link UpstreamSelector#fromListener}).
 */
public interface DatagramSender {
  /**
   * Sends {@code packet} to {@code to} from the listening address; false when it was not sent (the
   * socket cannot reach {@code to}, e.g. it listens on loopback only, or the send failed). Asked
   * by the socket's own reader while it answers a batch, the packet leaves with that batch's
   * replies, once the batch is answered; true then means it was queued for that send.
   */
  boolean sendDatagram(byte[] packet, InetSocketAddress to);
}
