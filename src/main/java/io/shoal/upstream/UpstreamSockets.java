package io.shoal.upstream;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.Channel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node's upstream sockets: the cap on how many are open at once, UDP and TCP together, and
 * the idle UDP sockets that rotate.
 *
 * <p>A UDP socket is bound to a port the kernel picks at random, connected to one server,
 * carries one query at a time, and is closed after {@code maxUses} queries or {@code maxAgeNanos}
 * (or at once after a timeout or an error), whichever comes first. A fresh socket per query cost
 * about a third of the CPU of a miss (socket, bind, connect, two getsockname, epoll add and
 * delete, close: docs/performance.md); rotation keeps that to a sixteenth while every query still
 * leaves from a random port that only its server can reach.
 */
final class UpstreamSockets {
  private final int maxOpen;
  private final int maxUses;
  private final long maxAgeNanos;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentHashMap<InetSocketAddress, ConcurrentLinkedDeque<Udp>> idle = new ConcurrentHashMap<>();

  /** A UDP socket connected to one server, and the query it carries now (null while idle). */
  static final class Udp {
    final DatagramChannel channel;
    final long bornNanos = System.nanoTime();
    volatile UdpExchange query;
    SelectionKey key;
    int uses;

    Udp(DatagramChannel channel) {
      this.channel = channel;
    }
  }

  /**
   * @param maxOpen sockets open at once, UDP and TCP together
   * @param maxUses queries one UDP socket carries before it is closed
   * @param maxAgeNanos how long a UDP socket may live
   */
  UpstreamSockets(int maxOpen, int maxUses, long maxAgeNanos) {
    this.maxOpen = maxOpen;
    this.maxUses = maxUses;
    this.maxAgeNanos = maxAgeNanos;
  }

  int maxOpen() {
    return maxOpen;
  }

  /** Upstream sockets open now. */
  int open() {
    return open.get();
  }

  /** Counts a socket about to be opened; false, counting nothing, when the cap is reached. */
  boolean admit() {
    if (open.incrementAndGet() > maxOpen) {
      open.decrementAndGet();
      return false;
    }
    return true;
  }

  /** An admitted socket could not be opened after all. */
  void notOpened() {
    open.decrementAndGet();
  }

  /** Closes an admitted socket's channel (null if it never opened) and uncounts it. */
  void closed(Channel ch) {
    closeQuietly(ch);
    open.decrementAndGet();
  }

  /** A fresh UDP socket connected to {@code server}; admitted by the caller. */
  static Udp connectedTo(InetSocketAddress server) throws IOException {
    DatagramChannel ch = DatagramChannel.open(familyOf(server));
    try {
      ch.configureBlocking(false);
      ch.connect(server);
      return new Udp(ch);
    } catch (IOException | RuntimeException e) {
      closeQuietly(ch);
      throw e;
    }
  }

  /** An idle socket connected to {@code server} that may carry another query, or null. */
  Udp idle(InetSocketAddress server) {
    ConcurrentLinkedDeque<Udp> sockets = idle.get(server);
    if (sockets == null) {
      return null;
    }
    Udp s;
    while ((s = sockets.pollFirst()) != null) {
      if (System.nanoTime() - s.bornNanos < maxAgeNanos) {
        return s;
      }
      retire(s);
    }
    return null;
  }

  /** Whether {@code s}, its query answered cleanly, may carry another one. */
  boolean reusable(Udp s) {
    return s.uses < maxUses && System.nanoTime() - s.bornNanos < maxAgeNanos;
  }

  /** Puts {@code s} back for the next query to {@code server}. */
  void keepIdle(InetSocketAddress server, Udp s) {
    idle.computeIfAbsent(server, k -> new ConcurrentLinkedDeque<>()).offerFirst(s);
  }

  void retire(Udp s) {
    closed(s.channel);
  }

  /** Closes idle sockets older than {@code maxAgeNanos}, so no port stays open for long. */
  void sweep(long now) {
    for (ConcurrentLinkedDeque<Udp> sockets : idle.values()) {
      for (Udp s : sockets) {
        if (now - s.bornNanos >= maxAgeNanos && sockets.removeFirstOccurrence(s)) {
          retire(s);
        }
      }
    }
  }

  /** Closes every idle socket (the node is stopping). */
  void retireIdle() {
    for (ConcurrentLinkedDeque<Udp> sockets : idle.values()) {
      Udp s;
      while ((s = sockets.pollFirst()) != null) {
        retire(s);
      }
    }
  }

  static StandardProtocolFamily familyOf(InetSocketAddress server) {
    return server.getAddress() instanceof Inet6Address ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET;
  }

  static void closeQuietly(Channel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // closing an upstream socket cannot lose anything
      }
    }
  }
}
