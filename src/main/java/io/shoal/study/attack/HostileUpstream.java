package io.shoal.study.attack;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Collectors;

/**
 * A small UDP upstream on loopback that misbehaves on every query, taking the misbehaviours in
 * turn: random bytes behind the query's ID, an answer whose owner name is a compression pointer to
 * itself, a well-formed answer with the wrong ID, and silence. A resolver must neither cache nor
 * forward any of it, nor wait on it longer than its timeout. Runs on one thread until closed.
 */
final class HostileUpstream implements AutoCloseable {

  /** What the server does with one query. */
  enum Misbehaviour { GARBAGE, SELF_POINTER, WRONG_ID, SILENCE }

  private static final int RECEIVE_POLL_MS = 200;

  private final DatagramSocket socket;
  private final Thread thread;
  private final SplittableRandom random;
  private final AtomicLongArray counts = new AtomicLongArray(Misbehaviour.values().length);
  private volatile boolean closed;

  private HostileUpstream(DatagramSocket socket, long seed) {
    this.socket = socket;
    this.random = new SplittableRandom(seed);
    this.thread = new Thread(this::serve, "study-hostile-upstream");
    thread.setDaemon(true);
  }

  /** Binds a free port on 127.0.0.1 and starts answering. */
  static HostileUpstream start(long seed) throws IOException {
    DatagramSocket s = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
    s.setSoTimeout(RECEIVE_POLL_MS);
    HostileUpstream h = new HostileUpstream(s, seed);
    h.thread.start();
    return h;
  }

  InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", socket.getLocalPort());
  }

  /** Queries received so far, by what was done with them. */
  Map<Misbehaviour, Long> counts() {
    Map<Misbehaviour, Long> m = new EnumMap<>(Misbehaviour.class);
    for (Misbehaviour b : Misbehaviour.values()) {
      m.put(b, counts.get(b.ordinal()));
    }
    return m;
  }

  /** The counts as words, e.g. "garbage 10, self_pointer 10, wrong_id 9, silence 9". */
  static String describe(Map<Misbehaviour, Long> counts) {
    return counts.entrySet().stream()
        .map(e -> e.getKey().name().toLowerCase(Locale.ROOT) + " " + e.getValue())
        .collect(Collectors.joining(", "));
  }

  private void serve() {
    byte[] buf = new byte[4096];
    long n = 0;
    while (!closed) {
      DatagramPacket p = new DatagramPacket(buf, buf.length);
      try {
        socket.receive(p);
      } catch (SocketTimeoutException e) {
        continue;
      } catch (IOException e) {
        return; // closed
      }
      byte[] reply = reply(buf, p.getLength(), Misbehaviour.values()[(int) (n++ % Misbehaviour.values().length)]);
      if (reply == null) {
        continue;
      }
      try {
        socket.send(new DatagramPacket(reply, reply.length, p.getSocketAddress()));
      } catch (IOException e) {
        // the resolver's socket is gone or full; the next query comes anyway
      }
    }
  }

  /** The reply to one query, or null for silence (and for a query too short to have a question). */
  byte[] reply(byte[] query, int length, Misbehaviour how) {
    int questionEnd = questionEnd(query, length);
    if (questionEnd < 0) {
      return null;
    }
    counts.incrementAndGet(how.ordinal());
    switch (how) {
      case GARBAGE -> {
        byte[] b = new byte[12 + random.nextInt(300)];
        random.nextBytes(b);
        b[0] = query[0];
        b[1] = query[1];
        return b;
      }
      case SELF_POINTER -> {
        return answer(query, questionEnd, 0, true);
      }
      case WRONG_ID -> {
        return answer(query, questionEnd, 0x5a5a, false);
      }
      default -> {
        return null;
      }
    }
  }

  /**
   * The query turned into a one-record A answer: the ID XOR {@code idFlip}, QR, RD and RA set, the
   * question copied, and an A record owned by the question name (a pointer to offset 12) or, with
   * {@code selfPointer}, by a pointer to its own offset, which loops forever.
   */
  private static byte[] answer(byte[] query, int questionEnd, int idFlip, boolean selfPointer) {
    byte[] a = new byte[questionEnd + 16];
    System.arraycopy(query, 0, a, 0, questionEnd);
    int id = ((query[0] & 0xff) << 8 | (query[1] & 0xff)) ^ idFlip;
    a[0] = (byte) (id >> 8);
    a[1] = (byte) id;
    a[2] = (byte) 0x81; // QR, RD
    a[3] = (byte) 0x80; // RA, NOERROR
    a[4] = 0;
    a[5] = 1;
    a[6] = 0;
    a[7] = 1;
    for (int i = 8; i < 12; i++) {
      a[i] = 0;
    }
    int at = questionEnd;
    int target = selfPointer ? at : 12;
    a[at] = (byte) (0xc0 | target >> 8);
    a[at + 1] = (byte) target;
    byte[] rest = {0, 1, 0, 1, 0, 0, 0, 60, 0, 4, (byte) 192, 0, 2, 66}; // A IN TTL 60, 192.0.2.66
    System.arraycopy(rest, 0, a, at + 2, rest.length);
    return a;
  }

  /** The offset just past the first question (name, type, class), or -1 if it does not fit. */
  private static int questionEnd(byte[] q, int length) {
    int i = 12;
    for (int labels = 0; labels < 128 && i < length; labels++) {
      int len = q[i] & 0xff;
      if (len == 0) {
        return i + 5 <= length ? i + 5 : -1;
      }
      if (len > 63) {
        return -1; // a query's question is not compressed
      }
      i += 1 + len;
    }
    return -1;
  }

  @Override
  public void close() {
    closed = true;
    socket.close();
    Attack.awaitEnd(thread);
  }
}
