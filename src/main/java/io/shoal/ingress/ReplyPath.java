package io.shoal.ingress;

import java.net.InetSocketAddress;

/**
 * Where a query's reply goes: the UDP socket it came in on, or its TCP connection. Called on
 * whichever thread has the reply (the socket's reader for a hit, a worker for a miss), so an
 * implementation is thread-safe and does not block for long.
 */
public interface ReplyPath {
  void send(byte[] wire, InetSocketAddress client);
}
