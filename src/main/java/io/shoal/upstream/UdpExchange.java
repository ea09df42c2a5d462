package io.shoal.upstream;

import io.shoal.wire.CacheKey;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;

/** A query over UDP, on a socket of the rotation that carries it alone until it ends. */
final class UdpExchange extends Exchange {
  final UpstreamSockets.Udp socket;

  UdpExchange(UpstreamSockets.Udp socket, InetSocketAddress server, int id, CacheKey key, long deadlineNanos) {
    super(server, id, key, deadlineNanos);
    this.socket = socket;
    this.channel = socket.channel;
  }

  @Override
  int firstInterest() {
    return SelectionKey.OP_READ;
  }

  @Override
  void end(UpstreamSockets sockets, boolean reuse) {
    socket.query = null;
    if (reuse && sockets.reusable(socket)) {
      sockets.keepIdle(server, socket);
    } else {
      sockets.retire(socket);
    }
  }
}
