package io.shoal.transport;

import akka.Done;
import io.shoal.ingress.Ingress;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.LoggerFactory;

/**
 * DNS over UDP on several sockets bound to one address with SO_REUSEPORT, so the kernel spreads
 * clients over them and each socket is read by a thread of its own.
 * The sockets are bound first, before the node reports itself up; they are served once the rest
 * of the node is wired ({@link #serve}).
 */
public final class UdpTransport {
  /** Wake-up datagrams {@link #stopReading} sends at most, each from a port of its own. */
  private static final int MOST_WAKE_UPS = 256;
  /** How long {@link #stopReading} goes on waking the readers. */
  private static final long WAKE_UP_NANOS = 2_000_000_000L;
  private static final byte[] IPV4_LOOPBACK = {127, 0, 0, 1};
  private static final byte[] IPV6_LOOPBACK = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(UdpTransport.class), 10);

  private final List<UdpSocket> sockets;

  private UdpTransport(List<UdpSocket> sockets) {
    this.sockets = sockets;
  }

  /**
   * Binds {@code count} sockets to {@code address}; fails with the bind error (e.g. address in
   * use). A probe bound without SO_REUSEPORT first makes sure no other process (another shoal
   * included) holds the port, since reuseport sockets of the same user would silently share it.
   * {@code batch}: datagrams each reader takes per system call (recvmmsg and sendmmsg); 1, or
   * where those calls cannot be had (logged), one per call through the JDK's channel.
   * {@code queueTime}: batched readers time each datagram's wait in the socket's queue from the
   * kernel's arrival stamp (shoal_udp_queue_seconds). {@code batchWait}: how long a batched reader
   * whose read did not fill its batch waits before it reads again (zero: it reads at once).
   */
  public static UdpTransport bind(InetSocketAddress address, int count, int batch, boolean queueTime,
      Duration batchWait, ServerMetrics metrics, ResponseRateLimiter rateLimiter) throws IOException {
    if (batch > 1 && LinuxDatagrams.get() == null) {
      LoggerFactory.getLogger(UdpTransport.class).warn(
          "listen.udp_batch = {}: reading one datagram per system call instead: {}", batch, LinuxDatagrams.unavailable());
    }
    InetSocketAddress bound;
    ProtocolFamily family = familyOf(address.getAddress());
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
      sockets.add(new UdpSocket(i, channels.get(i), batch, queueTime, batchWait, metrics, rateLimiter));
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

  /**
   * Stops reading new queries; replies to the ones in flight still go out. Completes once every
   * reader has stopped. The readers wait in the kernel for their next datagram, so once all are
   * marked stopped (and none can take a wake-up for a query) one thread sends empty datagrams to
   * the address they listen on, each from a port of its own since the kernel picks one of the
   * sockets by the sender's port, until every reader is out: at most {@link #MOST_WAKE_UPS} over
   * {@link #WAKE_UP_NANOS}. A reader that takes none even so stops when its socket is closed.
   */
  public CompletionStage<Done> stopReading() {
    CompletableFuture<Void> stopped = CompletableFuture.allOf(sockets.stream()
        .map(s -> s.stopReading().toCompletableFuture()).toArray(CompletableFuture[]::new));
    if (!stopped.isDone()) {
      Thread waker = new Thread(() -> wakeReaders(stopped), "shoal-udp-stop");
      waker.setDaemon(true);
      waker.start();
    }
    return stopped.thenApply(x -> Done.getInstance());
  }

  private void wakeReaders(CompletableFuture<Void> stopped) {
    InetSocketAddress listening = localAddress();
    if (listening == null) {
      return; // closed: the readers have seen that
    }
    InetSocketAddress to;
    try {
      to = new InetSocketAddress(wakeUpAddress(listening.getAddress()), listening.getPort());
    } catch (UnknownHostException e) {
      return; // not for a literal address
    }
    ProtocolFamily family = familyOf(to.getAddress());
    long until = System.nanoTime() + WAKE_UP_NANOS;
    ByteBuffer empty = ByteBuffer.allocate(0);
    for (int i = 0; i < MOST_WAKE_UPS && !stopped.isDone() && System.nanoTime() - until < 0; i++) {
      try (DatagramChannel wake = DatagramChannel.open(family)) {
        wake.send(empty.clear(), to);
      } catch (IOException | RuntimeException e) {
        failures.warn("waking the UDP readers to stop", e);
        return;
      }
      try {
        stopped.get(5, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        // a reader still waits: another port, perhaps another socket
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (ExecutionException e) {
        return;
      }
    }
  }

  /** Where a datagram to a socket listening on {@code bound} goes from this host: loopback for a wildcard. */
  private static InetAddress wakeUpAddress(InetAddress bound) throws UnknownHostException {
    if (!bound.isAnyLocalAddress()) {
      return bound;
    }
    return InetAddress.getByAddress(bound instanceof Inet6Address ? IPV6_LOOPBACK : IPV4_LOOPBACK);
  }

  /**
   * Exactly the family of {@code address}: an IPv4 address gets an IPv4 socket (a dual-stack IPv6
   * socket on 0.0.0.0 would also answer on every IPv6 address, and costs a mapped-address
   * conversion per datagram).
   */
  private static ProtocolFamily familyOf(InetAddress address) {
    return address instanceof Inet6Address ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET;
  }

  /** Closes every socket. */
  public CompletionStage<Done> close() {
    for (UdpSocket s : sockets) {
      s.close();
    }
    return CompletableFuture.completedFuture(Done.getInstance());
  }
}
