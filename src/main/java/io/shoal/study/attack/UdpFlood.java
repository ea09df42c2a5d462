package io.shoal.study.attack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * UDP packets sent at a steady rate from one thread of the study process to a loopback server,
 * from several source ports (the kernel spreads them over shoal's SO_REUSEPORT sockets). It stops
 * at its time limit or after rate x limit packets, whichever comes first. Replies are not read.
 */
final class UdpFlood extends AttackThread {
  /** Source sockets the packets take turns on. */
  private static final int SOURCES = 8;
  /** Source networks of a spread flood: 127.1.N.1 for N below this, each a /24 of its own. */
  static final int SPREAD_NETWORKS = 256;

  private final String what;
  private final InetSocketAddress target;
  private final int perSecond;
  private final Duration limit;
  private final long max;
  private final Supplier<byte[]> packets;
  private final List<DatagramChannel> sources = new ArrayList<>();
  private volatile long sent;
  private volatile long failed;
  private volatile long startNanos;
  private volatile long endNanos;

  private UdpFlood(
      String what, InetSocketAddress target, int perSecond, Duration limit, Supplier<byte[]> packets, boolean spread)
      throws IOException {
    super("study-flood");
    if (!target.getAddress().isLoopbackAddress()) {
      throw new IllegalArgumentException("a flood goes to loopback only, not " + target);
    }
    this.what = what;
    this.target = target;
    this.perSecond = perSecond;
    this.limit = limit;
    this.packets = packets;
    int count = spread ? SPREAD_NETWORKS : SOURCES;
    for (int i = 0; i < count; i++) {
      DatagramChannel c = DatagramChannel.open(StandardProtocolFamily.INET);
      sources.add(c);
      // Linux answers for all of 127.0.0.0/8 on lo: any of its addresses can be a source.
      c.bind(new InetSocketAddress(spread ? "127.1." + i + ".1" : "127.0.0.1", 0));
    }
    this.max = (long) perSecond * Math.max(1, limit.toSeconds());
  }

  /** Starts sending {@code perSecond} packets from {@code packets} to {@code target} for at most {@code limit}. */
  static UdpFlood start(String what, InetSocketAddress target, int perSecond, Duration limit,
      Supplier<byte[]> packets) throws IOException {
    UdpFlood f = new UdpFlood(what, target, perSecond, limit, packets, false);
    f.begin();
    return f;
  }

  /** As {@link #start}, the packets taking turns over {@link #SPREAD_NETWORKS} source networks. */
  static UdpFlood spread(String what, InetSocketAddress target, int perSecond, Duration limit,
      Supplier<byte[]> packets) throws IOException {
    UdpFlood f = new UdpFlood(what, target, perSecond, limit, packets, true);
    f.begin();
    return f;
  }

  @Override
  protected void attack() {
    startNanos = System.nanoTime();
    long deadline = startNanos + limit.toNanos();
    long n = 0;
    long errors = 0;
    try {
      while (!stopped && n < max) {
        long now = System.nanoTime();
        if (now >= deadline) {
          break;
        }
        // packets due by now at the rate; sent in a burst, then a millisecond's pause
        long due = Math.min(max, (now - startNanos) * perSecond / 1_000_000_000L + 1);
        while (n < due && !stopped) {
          try {
            sources.get((int) (n % sources.size())).send(ByteBuffer.wrap(packets.get()), target);
          } catch (IOException e) {
            errors++; // a full socket buffer or an ICMP error from an earlier packet; keep going
          }
          n++;
          if ((n & 1023) == 0) {
            sent = n;
            failed = errors;
          }
        }
        LockSupport.parkNanos(1_000_000L);
      }
    } finally {
      sent = n;
      failed = errors;
      endNanos = System.nanoTime();
    }
  }

  @Override
  protected Report finish() {
    for (DatagramChannel c : sources) {
      try {
        c.close();
      } catch (IOException ignored) {
        // closing a datagram socket we opened; nothing to do about a failure
      }
    }
    long end = endNanos == 0 ? System.nanoTime() : endNanos;
    double seconds = Math.max(1e-3, (end - startNanos) / 1e9);
    return new Report(sent, sent / seconds, String.format(Locale.ROOT,
        "%s: %d packets in %.1f s (%d/s asked for, %d send errors)", what, sent, seconds, perSecond, failed));
  }
}
