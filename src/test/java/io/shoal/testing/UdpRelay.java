package io.shoal.testing;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A forwarder that passes every UDP datagram it gets on to one target and the target's reply
 * back, counting what it relayed: the resolver in the middle of a forwarding loop (another
 * resolver, or a Service in front of a node), which a config check cannot see. Given a delay, it
 * holds each reply that long before sending it on: an authority that answers slowly.
 */
public final class UdpRelay implements AutoCloseable {
  private static final int REPLY_WAIT_MS = 3000;

  private final DatagramSocket socket;
  private final ExecutorService exchanges = Executors.newFixedThreadPool(4, r -> {
    Thread t = new Thread(r, "udp-relay");
    t.setDaemon(true);
    return t;
  });
  private final ScheduledExecutorService held = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "udp-relay-delay");
    t.setDaemon(true);
    return t;
  });
  private final AtomicInteger relayed = new AtomicInteger();
  private final Thread reader;
  private final long delayMs;
  private volatile InetSocketAddress target;

  public UdpRelay() throws IOException {
    this(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
  }

  /** A relay bound to {@code bind} that sends each reply on {@code delayMs} after it came. */
  public UdpRelay(InetSocketAddress bind, long delayMs) throws IOException {
    this.delayMs = delayMs;
    socket = new DatagramSocket(bind);
    reader = new Thread(this::read, "udp-relay-reader");
    reader.setDaemon(true);
    reader.start();
  }

  /** "127.0.0.1:port", as shoal's config takes it. */
  public String hostPort() {
    return "127.0.0.1:" + socket.getLocalPort();
  }

  /** Where datagrams go from now on; until set they are dropped (counted all the same). */
  public void target(InetSocketAddress to) {
    target = to;
  }

  /** Datagrams received to pass on. */
  public int relayed() {
    return relayed.get();
  }

  private void read() {
    byte[] buf = new byte[65535];
    while (!socket.isClosed()) {
      DatagramPacket p = new DatagramPacket(buf, buf.length);
      try {
        socket.receive(p);
      } catch (IOException e) {
        return;
      }
      relayed.incrementAndGet();
      InetSocketAddress to = target;
      if (to == null) {
        continue;
      }
      byte[] query = Arrays.copyOf(p.getData(), p.getLength());
      SocketAddress from = p.getSocketAddress();
      try {
        exchanges.execute(() -> exchange(query, from, to));
      } catch (RejectedExecutionException closed) {
        return;
      }
    }
  }

  private void exchange(byte[] query, SocketAddress from, InetSocketAddress to) {
    try (DatagramSocket out = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      out.setSoTimeout(REPLY_WAIT_MS);
      out.send(new DatagramPacket(query, query.length, to));
      DatagramPacket reply = new DatagramPacket(new byte[65535], 65535);
      out.receive(reply);
      DatagramPacket back = new DatagramPacket(Arrays.copyOf(reply.getData(), reply.getLength()), reply.getLength(), from);
      if (delayMs <= 0) {
        socket.send(back);
      } else {
        held.schedule(() -> sendQuietly(back), delayMs, TimeUnit.MILLISECONDS);
      }
    } catch (IOException | RejectedExecutionException e) {
      // No reply in time, or the relay is closing: the sender times out, as behind a real forwarder.
    }
  }

  private void sendQuietly(DatagramPacket p) {
    try {
      socket.send(p);
    } catch (IOException e) {
      // the relay is closing: the sender times out
    }
  }

  /** Where the relay listens. */
  public InetSocketAddress address() {
    return (InetSocketAddress) socket.getLocalSocketAddress();
  }

  @Override
  public void close() {
    socket.close();
    exchanges.shutdownNow();
    held.shutdownNow();
  }
}
