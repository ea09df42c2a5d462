package io.shoal.testing;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToLongFunction;
import org.xbill.DNS.Message;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * A UDP relay in front of a test server that misbehaves as forwarders and middleboxes do: it can
 * strip every RRSIG from the replies, and hold a reply back, or drop it, by what was asked.
 */
public final class DnsRelay implements AutoCloseable {
  /** What {@link #hold} returns for a query whose reply is never sent. */
  public static final long DROP = -1;

  private final DatagramSocket socket;
  private final InetSocketAddress target;
  private final boolean stripSignatures;
  private volatile ToLongFunction<Message> hold = q -> 0;
  private final ConcurrentHashMap<Integer, AtomicInteger> counts = new ConcurrentHashMap<>();
  private final ExecutorService exchanges = Executors.newFixedThreadPool(8, r -> {
    Thread t = new Thread(r, "dns-relay");
    t.setDaemon(true);
    return t;
  });

  /** @param stripSignatures whether replies lose their RRSIG records on the way back */
  public DnsRelay(InetSocketAddress target, boolean stripSignatures) throws IOException {
    this.target = target;
    this.stripSignatures = stripSignatures;
    socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    Thread thread = new Thread(this::serve, "dns-relay");
    thread.setDaemon(true);
    thread.start();
  }

  public String hostPort() {
    return "127.0.0.1:" + socket.getLocalPort();
  }

  /** From now on each query's reply is held back for what {@code millis} says of it, or dropped ({@link #DROP}). */
  public void hold(ToLongFunction<Message> millis) {
    hold = millis;
  }

  /** Queries relayed or dropped so far whose question has type {@code type} (DNSKEY = 48). */
  public int queries(int type) {
    return counts.getOrDefault(type, new AtomicInteger()).get();
  }

  private void serve() {
    byte[] buf = new byte[65535];
    while (!socket.isClosed()) {
      DatagramPacket p = new DatagramPacket(buf, buf.length);
      try {
        socket.receive(p);
      } catch (IOException e) {
        return;
      }
      byte[] query = Arrays.copyOf(p.getData(), p.getLength());
      SocketAddress from = p.getSocketAddress();
      try {
        exchanges.execute(() -> exchange(query, from));
      } catch (RejectedExecutionException closed) {
        return;
      }
    }
  }

  private void exchange(byte[] query, SocketAddress from) {
    try (DatagramSocket out = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      Message q = new Message(query);
      int type = q.getQuestion() == null ? 0 : q.getQuestion().getType();
      counts.computeIfAbsent(type, t -> new AtomicInteger()).incrementAndGet();
      long millis = hold.applyAsLong(q);
      if (millis == DROP) {
        return;
      }
      out.setSoTimeout(2000);
      out.send(new DatagramPacket(query, query.length, target));
      DatagramPacket reply = new DatagramPacket(new byte[65535], 65535);
      out.receive(reply);
      Message m = new Message(Arrays.copyOf(reply.getData(), reply.getLength()));
      if (stripSignatures) {
        for (int section = Section.ANSWER; section <= Section.ADDITIONAL; section++) {
          for (Record r : List.copyOf(m.getSection(section))) {
            if (r.getType() == Type.RRSIG) {
              m.removeRecord(r, section);
            }
          }
        }
      }
      if (millis > 0) {
        // A slow upstream: this reply, and only this one, comes late.
        Thread.sleep(millis);
      }
      byte[] wire = m.toWire();
      socket.send(new DatagramPacket(wire, wire.length, from));
    } catch (IOException e) {
      // No reply in time, or the relay closing: the asker times out, as behind a real forwarder.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    socket.close();
    exchanges.shutdownNow();
  }
}
