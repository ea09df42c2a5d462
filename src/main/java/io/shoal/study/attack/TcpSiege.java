package io.shoal.study.attack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Slow, silent and empty TCP clients, as one thread of the study process: {@code drip} connections
 * that each send one byte of a query per second, {@code idle} connections that send nothing, and
 * {@code empty} connections that send a zero-length message (the two bytes {@code 00 00}) a
 * second. A connection the server closes is opened again, as a persistent attacker would, until
 * the siege has made its budget of connects per connection it holds. It ends at its time limit.
 */
final class TcpSiege extends AttackThread {
  private static final Duration DRIP_EVERY = Duration.ofSeconds(1);
  /**
   * How often silent holders look whether the server closed them: the resolution of the time to
   * close they report (a read on each connection a round, nothing sent).
   */
  private static final Duration SILENT_EVERY = Duration.ofMillis(200);
  private static final int CONNECTS_PER_SLOT = 4;
  private static final byte[] EMPTY_MESSAGE = {0, 0};

  /** What a connection sends once a round. */
  private enum Kind { DRIP, IDLE, EMPTY }

  /**
   * One connection slot: its channel (null while closed; connecting until the kernel completes it)
   * and how far into the query it has dripped.
   */
  private static final class Slot {
    final Kind kind;
    SocketChannel channel;
    int position;
    /** When the connect was started (System.nanoTime): the time to close is counted from it. */
    long openedNanos;

    Slot(Kind kind) {
      this.kind = kind;
    }
  }

  private final InetSocketAddress target;
  private final byte[] framedQuery;
  private final List<Slot> slots = new ArrayList<>();
  private final Duration limit;
  private final Duration every;
  /** Milliseconds from connect to the server's close, one per connection the server closed. */
  private final List<Long> closeMillis = new ArrayList<>();
  private final int connectBudget;
  private volatile long startNanos;
  private long connects;
  private long connectFailures;
  private long closedByServer;
  private long bytesDripped;
  private int heldMost;
  private String firstFailure;

  private TcpSiege(InetSocketAddress target, int drip, int idle, int empty, int connectsPerSlot, Duration limit,
      Duration every, byte[] query) {
    super("study-tcp-siege");
    if (!target.getAddress().isLoopbackAddress()) {
      throw new IllegalArgumentException("a siege goes to loopback only, not " + target);
    }
    this.target = target;
    this.framedQuery = AttackPackets.tcpFramed(query);
    // The empty ones first: opened before the idle ones, they are at the head of the server's
    // accept queue, so even a short phase on a slow host shows what the server does with them
    // (behind 1,300 idle connections a 3 s phase on one busy core once ended before the server
    // had read a single zero-length message).
    for (int i = 0; i < empty; i++) {
      slots.add(new Slot(Kind.EMPTY));
    }
    for (int i = 0; i < idle; i++) {
      slots.add(new Slot(Kind.IDLE));
    }
    for (int i = 0; i < drip; i++) {
      slots.add(new Slot(Kind.DRIP));
    }
    this.connectBudget = connectsPerSlot * slots.size();
    this.limit = limit;
    this.every = every;
  }

  /** Opens the connections and keeps them up for at most {@code limit}. */
  static TcpSiege start(InetSocketAddress target, int drip, int idle, Duration limit, byte[] query) {
    TcpSiege s = new TcpSiege(target, drip, idle, 0, CONNECTS_PER_SLOT, limit, DRIP_EVERY, query);
    s.begin();
    return s;
  }

  /**
   * Holds connections the way an attacker at the connection cap does: {@code empty} connections
   * sending zero-length messages and {@code idle} silent ones, each opened again as soon as the
   * server closes it, once a round for as long as {@code limit} lasts.
   */
  static TcpSiege hold(InetSocketAddress target, int empty, int idle, Duration limit) {
    int rounds = (int) Math.max(1, limit.toSeconds() + 1);
    TcpSiege s = new TcpSiege(target, 0, idle, empty, rounds, limit, DRIP_EVERY, new byte[0]);
    s.begin();
    return s;
  }

  /**
   * Holds {@code connections} silent connections, as a client that connects to a DoT or DoH port
   * and never starts its TLS handshake does: each opened again as soon as the server closes it,
   * up to once per second of {@code limit}, looked at every 200 ms so that the time the server
   * took to close each (from the connect) is known to that.
   */
  static TcpSiege silent(InetSocketAddress target, int connections, Duration limit) {
    int connects = (int) Math.max(1, limit.toSeconds() + 1);
    TcpSiege s = new TcpSiege(target, 0, connections, 0, connects, limit, SILENT_EVERY, new byte[0]);
    s.begin();
    return s;
  }

  @Override
  protected void attack() {
    startNanos = System.nanoTime();
    long deadline = startNanos + limit.toNanos();
    try {
      while (!stopped && System.nanoTime() < deadline) {
        long roundStart = System.nanoTime();
        int held = 0;
        for (Slot s : slots) {
          if (stopped || System.nanoTime() >= deadline) {
            break;
          }
          if (s.channel == null && !open(s)) {
            continue;
          }
          if (!connected(s)) {
            continue;
          }
          if (switch (s.kind) {
            case DRIP -> dripOne(s);
            case IDLE -> stillOpen(s);
            case EMPTY -> sendEmpty(s);
          }) {
            held++;
          } else {
            closedByServer++;
            closeMillis.add((System.nanoTime() - s.openedNanos) / 1_000_000L);
            closeQuietly(s);
          }
        }
        heldMost = Math.max(heldMost, held);
        long rest = every.toNanos() - (System.nanoTime() - roundStart);
        if (rest > 0) {
          Thread.sleep(rest / 1_000_000L);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      slots.forEach(TcpSiege::closeQuietly);
    }
  }

  /**
   * Starts connecting a slot without waiting (the kernel completes it, or the server's backlog
   * holds it); false if the connect budget is spent or the connect failed at once.
   */
  private boolean open(Slot s) {
    if (connects + connectFailures >= connectBudget) {
      return false;
    }
    try {
      SocketChannel c = SocketChannel.open();
      try {
        c.configureBlocking(false);
        c.connect(target);
      } catch (IOException e) {
        c.close();
        throw e;
      }
      s.channel = c;
      s.position = 0;
      s.openedNanos = System.nanoTime();
      connects++;
      return true;
    } catch (IOException e) {
      failed(e);
      return false;
    }
  }

  /**
   * True once a slot's connect completed; a connect still pending leaves the slot as it is until
   * the next round, one that failed (refused, or timed out in the kernel) closes it.
   */
  private boolean connected(Slot s) {
    if (s.channel.isConnected()) {
      return true;
    }
    try {
      return s.channel.finishConnect();
    } catch (IOException e) {
      failed(e);
      closeQuietly(s);
      return false;
    }
  }

  private void failed(IOException e) {
    // a refused or failed connect, or the study's own descriptor limit: counted, tried again later
    connectFailures++;
    if (firstFailure == null) {
      firstFailure = e.toString();
    }
  }

  private boolean dripOne(Slot s) {
    try {
      if (!stillOpen(s)) {
        return false;
      }
      int written = s.channel.write(ByteBuffer.wrap(framedQuery, s.position, 1));
      bytesDripped += written;
      s.position = (s.position + written) % framedQuery.length;
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Sends a zero-length message; false once the server closed the connection. */
  private boolean sendEmpty(Slot s) {
    try {
      if (!stillOpen(s)) {
        return false;
      }
      bytesDripped += s.channel.write(ByteBuffer.wrap(EMPTY_MESSAGE));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** False once the server closed the connection (a read sees its end, or a reset). */
  private static boolean stillOpen(Slot s) {
    try {
      ByteBuffer sink = ByteBuffer.allocate(512);
      int n;
      // a drip connection the server answered would have replies to read; none is expected
      while ((n = s.channel.read(sink)) > 0) {
        sink.clear();
      }
      return n == 0;
    } catch (IOException e) {
      return false;
    }
  }

  private static void closeQuietly(Slot s) {
    if (s.channel != null) {
      try {
        s.channel.close();
      } catch (IOException ignored) {
        // our own socket; closing it cannot be helped further
      }
      s.channel = null;
    }
  }

  @Override
  protected Report finish() {
    double seconds = Math.max(1e-3, (System.nanoTime() - startNanos) / 1e9);
    long drips = slots.stream().filter(s -> s.kind == Kind.DRIP).count();
    long empties = slots.stream().filter(s -> s.kind == Kind.EMPTY).count();
    String kinds = empties == 0 && drips == 0 ? slots.size() + " silent"
        : empties == 0 ? drips + " drip + " + (slots.size() - drips) + " idle"
        : empties + " zero-length + " + (slots.size() - empties - drips) + " idle";
    PhaseRow.Held held = new PhaseRow.Held(connects, closedByServer, medianSeconds(closeMillis));
    return new Report(connects, connects / seconds, String.format(Locale.ROOT,
        "%s TCP connections: %d connects (%d failed%s), at most %d open at once, %d closed by "
            + "the server%s, %d bytes sent",
        kinds, connects, connectFailures, firstFailure == null ? "" : ", first: " + firstFailure,
        heldMost, closedByServer, held.closeMedianSeconds() == null ? "" : String.format(Locale.ROOT,
            " (median %.1f s after the connect)", held.closeMedianSeconds()), bytesDripped), held);
  }

  /** The median of {@code millis} in seconds; null when there is none. */
  static Double medianSeconds(List<Long> millis) {
    if (millis.isEmpty()) {
      return null;
    }
    long[] sorted = millis.stream().mapToLong(Long::longValue).sorted().toArray();
    int n = sorted.length;
    double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    return median / 1000.0;
  }
}
