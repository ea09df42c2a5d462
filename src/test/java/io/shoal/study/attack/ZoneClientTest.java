package io.shoal.study.attack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The zone client counts one outcome per query, against a responder in the test that answers in
 * turn NOERROR, NXDOMAIN, SERVFAIL, REFUSED, nothing, a reply after the client's wait, and a reply
 * with the query's ID but another name: its counts are the responder's own.
 */
class ZoneClientTest {
  private static final String ZONE = "bench.test.";

  /** What the responder does with the n-th query it receives: the (n mod 7)-th of these. */
  private enum Reply { NOERROR, NXDOMAIN, SERVFAIL, REFUSED, SILENCE, LATE, WRONG_NAME }

  /** The late replies' delay: past the client's 2 s wait for a reply. */
  private static final long LATE_NANOS = ZoneClient.REPLY_WAIT.plusMillis(500).toNanos();

  @Test
  void everyQueryGetsOneOutcomeAndTheyAreWhatTheResponderDid() throws Exception {
    try (Responder responder = new Responder()) {
      ZoneClient client = ZoneClient.start(ZONE, responder.address(), 50, Duration.ofSeconds(2), 7, 1000);
      // the client stops by itself at its limit (2 s), after at most rate x limit queries: wait for
      // the responder to see them all, or for the limit to be well past on a slow host
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (responder.received() < 100 && System.nanoTime() < deadline) {
        LockSupport.parkNanos(10_000_000L);
      }
      PhaseRow.ZoneClientCounts c = client.counts();
      Map<Reply, Long> did = responder.tally();

      assertTrue(c.asked() >= 90 && c.asked() <= 100, c.words());
      assertEquals(c.asked(), responder.received());
      assertEquals(did.get(Reply.NOERROR) + did.get(Reply.NXDOMAIN), c.answered(), did + " / " + c.words());
      assertEquals((long) did.get(Reply.SERVFAIL), c.servfail(), did + " / " + c.words());
      assertEquals((long) did.get(Reply.REFUSED), c.other(), did + " / " + c.words());
      // silence, a reply too late, and a reply for another name all leave the query without one
      assertEquals(did.get(Reply.SILENCE) + did.get(Reply.LATE) + did.get(Reply.WRONG_NAME), c.noReply(),
          did + " / " + c.words());
      assertEquals(c.asked(), c.answered() + c.servfail() + c.other() + c.noReply());
      for (Reply r : Reply.values()) {
        assertTrue(did.get(r) >= 12, r + " " + did);
      }
      // names new and under the zone, numbered on from the first name asked for
      Set<String> names = responder.names();
      assertTrue(names.stream().allMatch(n -> n.matches("z[0-9]+-[0-9a-f]+\\.bench\\.test\\.")), names.toString());
      assertEquals(LongStream.range(1000, 1000 + c.asked()).boxed().collect(Collectors.toSet()),
          names.stream().map(n -> Long.valueOf(n.substring(1, n.indexOf('-')))).collect(Collectors.toSet()));
      assertTrue(client.stop().detail().contains("from 127.2.0.1 at 50/s: " + c.words()), client.stop().detail());
    }
  }

  @Test
  void itAsksLoopbackOnlyAndAtARateThePlanAllows() {
    assertThrows(IllegalArgumentException.class,
        () -> ZoneClient.start(ZONE, new InetSocketAddress("192.0.2.1", 53), 20, Duration.ofSeconds(1), 1, 0));
    assertThrows(IllegalArgumentException.class,
        () -> ZoneClient.start(ZONE, new InetSocketAddress("127.0.0.1", 53), 0, Duration.ofSeconds(1), 1, 0));
    assertThrows(IllegalArgumentException.class,
        () -> ZoneClient.start(ZONE, new InetSocketAddress("127.0.0.1", 53), 10_001, Duration.ofSeconds(1), 1, 0));
  }

  /**
   * A UDP server on 127.0.0.1 for the test: one thread, taking the replies in turn, until closed or
   * a minute has passed; late replies wait in a queue the loop empties when they are due.
   */
  private static final class Responder implements AutoCloseable {
    private record Late(long dueNanos, byte[] reply, SocketAddress to) {}

    private final DatagramSocket socket = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
    private final Thread thread = new Thread(this::serve, "test-zone-responder");
    private final Map<Reply, Long> tally = new EnumMap<>(Reply.class);
    private final Set<String> names = new HashSet<>();
    private final Queue<Late> late = new ArrayDeque<>();
    private volatile boolean closed;
    private volatile int received;

    Responder() throws IOException {
      socket.setSoTimeout(20);
      for (Reply r : Reply.values()) {
        tally.put(r, 0L);
      }
      thread.setDaemon(true);
      thread.start();
    }

    InetSocketAddress address() {
      return new InetSocketAddress("127.0.0.1", socket.getLocalPort());
    }

    int received() {
      return received;
    }

    synchronized Map<Reply, Long> tally() {
      return new EnumMap<>(tally);
    }

    synchronized Set<String> names() {
      return Set.copyOf(names);
    }

    private void serve() {
      long end = System.nanoTime() + Duration.ofMinutes(1).toNanos();
      DatagramPacket in = new DatagramPacket(new byte[512], 512);
      try {
        while (!closed && System.nanoTime() < end) {
          sendDue();
          try {
            socket.receive(in);
          } catch (SocketTimeoutException e) {
            continue;
          }
          Message q = new Message(Arrays.copyOf(in.getData(), in.getLength()));
          Reply r = Reply.values()[received % Reply.values().length];
          synchronized (this) {
            tally.merge(r, 1L, Long::sum);
            names.add(q.getQuestion().getName().toString());
          }
          received++;
          byte[] reply = reply(q, r);
          if (r == Reply.LATE) {
            late.add(new Late(System.nanoTime() + LATE_NANOS, reply, in.getSocketAddress()));
          } else if (reply != null) {
            socket.send(new DatagramPacket(reply, reply.length, in.getSocketAddress()));
          }
        }
      } catch (IOException e) {
        if (!closed) {
          throw new AssertionError("the test's responder failed", e);
        }
      }
    }

    /** Sends the late replies that are due; the queue is in the order they fall due. */
    private void sendDue() throws IOException {
      while (!late.isEmpty() && late.peek().dueNanos() - System.nanoTime() <= 0) {
        Late l = late.remove();
        socket.send(new DatagramPacket(l.reply(), l.reply().length, l.to()));
      }
    }

    private static byte[] reply(Message q, Reply r) throws IOException {
      if (r == Reply.SILENCE) {
        return null;
      }
      Message m = new Message(q.getHeader().getID());
      m.getHeader().setFlag(Flags.QR);
      m.getHeader().setFlag(Flags.RD);
      m.getHeader().setFlag(Flags.RA);
      Name name = r == Reply.WRONG_NAME ? Name.fromString("other." + ZONE) : q.getQuestion().getName();
      m.addRecord(Record.newRecord(name, Type.A, DClass.IN), Section.QUESTION);
      switch (r) {
        case NOERROR, LATE, WRONG_NAME -> m.addRecord(new ARecord(name, DClass.IN, 60,
            InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 1})), Section.ANSWER);
        case NXDOMAIN -> m.getHeader().setRcode(Rcode.NXDOMAIN);
        case SERVFAIL -> m.getHeader().setRcode(Rcode.SERVFAIL);
        default -> m.getHeader().setRcode(Rcode.REFUSED);
      }
      return m.toWire();
    }

    @Override
    public void close() {
      closed = true;
      Attack.awaitEnd(thread);
      socket.close();
    }
  }
}
