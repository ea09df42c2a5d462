package io.shoal.transport;

import akka.Done;
import io.shoal.ingress.Ingress;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DNS over UDP on several sockets bound to one address with SO_REUSEPORT, so the kernel spreads
 * clients over them and each socket is read by a thread of its own.
 * The sockets are bound first, before the node reports itself up; they are served once the rest
 * of the node is wired ({@link #serve}).
 */
public final class UdpTransport {
  private final List<UdpSocket> sockets;

  private UdpTransport(List<UdpSocket> sockets) {
    this.sockets = sockets;
  }

  /**
   * Binds {@code count} sockets to {@code address}; fails with the bind error (e.g. address in
   * use). A probe bound without SO_REUSEPORT first makes sure no other process (another shoal
   * included) holds the port, since reuseport sockets of the same user would silently share it.
   */
  public static UdpTransport bind(
      InetSocketAddress address, int count, ServerMetrics metrics, ResponseRateLimiter rateLimiter) throws IOException {
    InetSocketAddress bound;
    // Exactly the family asked for: an IPv4 address gets an IPv4 socket (a dual-stack IPv6 socket
    // on 0.0.0.0 would also answer on every IPv6 address, and costs a mapped-address conversion
    // per datagram).
    ProtocolFamily family = address.getAddress() instanceof Inet6Address
        ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET;
    try (DatagramChannel probe = DatagramChannel.open(family)) {
      probe.bind(address);
      bound = (InetSocketAddress) probe.getLocalAddress();
    }
    List<DatagramChannel> channels = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        DatagramChannel ch = DatagramChannel.open(family);
        channels.add(ch);
        ch.setOption(StandardSocketOptions.SO_REUSEPORT, true);
        // A large receive buffer absorbs bursts; what still overflows is counted by the kernel.
        ch.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        ch.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
        ch.bind(bound);
      }
    } catch (IOException | RuntimeException e) {
      for (DatagramChannel ch : channels) {
        ch.close();
      }
      throw e;
    }
    List<UdpSocket> sockets = new ArrayList<>();
    for (int i = 0; i < channels.size(); i++) {
      sockets.add(new UdpSocket(i, channels.get(i), metrics, rateLimiter));
    }
    return new UdpTransport(List.copyOf(sockets));
  }

  /** Starts reading every socket, each on a thread of its own, into {@code ingress}. */
  public void serve(Ingress ingress) {
    for (UdpSocket s : sockets) {
      s.serve(ingress);
    }
  }

  /** Limits replies from now on by {@code next}: a reload's rate limit, which starts counting afresh. */
  public void rateLimit(ResponseRateLimiter next) {
    for (UdpSocket s : sockets) {
      s.rateLimit(next);
    }
  }

  List<UdpSocket> sockets() {
    return sockets;
  }

  /** The address actually bound (the port is known here when 0 was asked for). */
  public InetSocketAddress localAddress() {
    return sockets.get(0).localAddress();
  }

  /** Sockets sharing the address. */
  public int socketCount() {
    return sockets.size();
  }

  /** Stops reading new queries; replies to the ones in flight still go out. */
  public CompletionStage<Done> stopReading() {
    for (UdpSocket s : sockets) {
      s.halt();
    }
    CompletableFuture<?>[] all = sockets.stream()
        .map(s -> s.stopReading().toCompletableFuture()).toArray(CompletableFuture[]::new);
    return CompletableFuture.allOf(all).thenApply(x -> Done.getInstance());
  }

  /** Closes every socket. */
  public CompletionStage<Done> close() {
    for (UdpSocket s : sockets) {
      s.close();
    }
    return CompletableFuture.completedFuture(Done.getInstance());
  }
}
