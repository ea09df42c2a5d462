package io.shoal.study.attack;

import io.shoal.study.scenario.AttackPlan;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * A second honest client of a robustness phase: a downstream resolver that asks new names of the
 * attacked zone now and then, {@code z<n>-<hex>.<zone>}, at a fixed rate from 127.2.0.1 (a /24 of
 * its own, apart from dnsperf's 127.0.0.1 and the spread flood's 127.1.N.1). Every name is new, so
 * every query is a miss the server must send upstream or turn away. One thread sends on time and
 * reads the replies without blocking, matching them to the queries outstanding by ID and question
 * name; each query gets one outcome: answered (NOERROR or NXDOMAIN), SERVFAIL, another rcode, or
 * no reply within {@link #REPLY_WAIT} of sending. It stops at its time limit or after rate x limit
 * queries, whichever comes first, then waits at most {@link #REPLY_WAIT} for the replies still due.
 */
final class ZoneClient extends AttackThread {
  /** The zone client's source address. */
  static final String SOURCE = "127.2.0.1";
  /** How long a query waits for its reply before it counts as not replied to. */
  static final Duration REPLY_WAIT = Duration.ofSeconds(2);
  /** Sleep between rounds of sending, reading and expiring. */
  private static final long POLL_NANOS = 2_000_000L;
  /** Replies read at most per round: enough for a round's worth at the highest rate. */
  private static final int READS_PER_ROUND = 1024;

  /** A query waiting for its reply. */
  private record Pending(Name name, long sentNanos) {}

  private final String zone;
  private final InetSocketAddress target;
  private final int perSecond;
  private final Duration limit;
  private final long max;
  private final long firstName;
  private final SplittableRandom random;
  private final DatagramChannel channel;
  /** Outstanding queries by ID, oldest first: only the client's thread touches it. */
  private final Map<Integer, Pending> outstanding = new LinkedHashMap<>();
  private long answered;
  private long servfail;
  private long other;
  private long noReply;
  private long unmatched;
  private long sendErrors;
  private volatile long asked;
  /** The outcomes, set once when the thread ends. */
  private volatile PhaseRow.ZoneClientCounts counts;
  private volatile String endNote = "";
  private volatile long startNanos;
  private volatile long endNanos;

  private ZoneClient(String zone, InetSocketAddress target, int perSecond, Duration limit, long seed, long firstName)
      throws IOException {
    super("study-zone-client");
    if (!target.getAddress().isLoopbackAddress()) {
      throw new IllegalArgumentException("the zone client asks loopback only, not " + target);
    }
    if (perSecond < 1 || perSecond > AttackPlan.MAX_ZONE_CLIENT_QPS) {
      throw new IllegalArgumentException("the zone client asks from 1 to " + AttackPlan.MAX_ZONE_CLIENT_QPS
          + " queries a second, not " + perSecond);
    }
    this.zone = zone.endsWith(".") ? zone : zone + ".";
    this.target = target;
    this.perSecond = perSecond;
    this.limit = limit;
    this.max = (long) perSecond * Math.max(1, limit.toSeconds());
    this.firstName = firstName;
    this.random = new SplittableRandom(seed + firstName);
    this.channel = DatagramChannel.open(StandardProtocolFamily.INET);
    try {
      channel.bind(new InetSocketAddress(SOURCE, 0));
      channel.configureBlocking(false);
    } catch (IOException e) {
      channel.close();
      throw e;
    }
  }

  /**
   * Starts asking {@code perSecond} new names under {@code zone} of {@code target} for at most {@code limit}.
   *
   * @param firstName the number in its first name, {@code z<firstName>-<hex>}: a client that starts
   *     after the names an earlier one asked asks none of them again, so none is in the cache
   */
  static ZoneClient start(String zone, InetSocketAddress target, int perSecond, Duration limit, long seed,
      long firstName) throws IOException {
    ZoneClient c = new ZoneClient(zone, target, perSecond, limit, seed, firstName);
    c.begin();
    return c;
  }

  /** Stops the client (waiting, bounded, for the replies still due) and says what its queries got. */
  PhaseRow.ZoneClientCounts counts() {
    stop();
    return tally();
  }

  /** The outcomes once the thread has ended; if it outlived the wait for it, every query as not replied to. */
  private PhaseRow.ZoneClientCounts tally() {
    PhaseRow.ZoneClientCounts c = counts;
    return c != null ? c : new PhaseRow.ZoneClientCounts(asked, 0, 0, 0, asked);
  }

  @Override
  protected void attack() {
    startNanos = System.nanoTime();
    long deadline = startNanos + limit.toNanos();
    long waitNanos = REPLY_WAIT.toNanos();
    ByteBuffer reply = ByteBuffer.allocate(4096);
    long n = 0;
    try {
      while (!stopped && n < max) {
        long now = System.nanoTime();
        if (now >= deadline) {
          break;
        }
        long due = Math.min(max, (now - startNanos) * perSecond / 1_000_000_000L + 1);
        while (n < due && !stopped) {
          send(n++, now);
          asked = n;
        }
        read(reply);
        expire(now - waitNanos);
        LockSupport.parkNanos(POLL_NANOS);
      }
      // the queries still out get their full wait, and not a moment more
      long last = System.nanoTime() + waitNanos;
      while (!outstanding.isEmpty()) {
        long now = System.nanoTime();
        read(reply);
        expire(now - waitNanos);
        if (now >= last) {
          break;
        }
        LockSupport.parkNanos(POLL_NANOS);
      }
    } catch (IOException e) {
      endNote = "; stopped early: " + e.getMessage();
    } finally {
      noReply += outstanding.size();
      outstanding.clear();
      counts = new PhaseRow.ZoneClientCounts(n, answered, servfail, other, noReply);
      endNanos = System.nanoTime();
    }
  }

  /** Sends query number {@code n}; a query that cannot be sent is outstanding all the same, and gets no reply. */
  private void send(long n, long now) {
    int id = (int) (n & 0xffff);
    String name = "z" + (firstName + n) + "-" + Integer.toHexString(random.nextInt()) + "." + zone;
    // at any rate the plan allows, the ID's previous query has had its wait; if it is still here, it got no reply
    if (outstanding.remove(id) != null) {
      noReply++;
    }
    outstanding.put(id, new Pending(Name.fromConstantString(name), now));
    try {
      channel.send(ByteBuffer.wrap(AttackPackets.query(id, name, Type.A)), target);
    } catch (IOException e) {
      sendErrors++; // a full socket buffer or an ICMP error from an earlier packet; keep going
    }
  }

  /** Reads the replies waiting, at most {@link #READS_PER_ROUND}, each to its query's outcome. */
  private void read(ByteBuffer buffer) throws IOException {
    for (int i = 0; i < READS_PER_ROUND; i++) {
      buffer.clear();
      if (channel.receive(buffer) == null) {
        return;
      }
      Message m;
      try {
        m = new Message(Arrays.copyOf(buffer.array(), buffer.position()));
      } catch (IOException e) {
        unmatched++;
        continue;
      }
      int id = m.getHeader().getID();
      Pending p = outstanding.get(id);
      // a reply may leave the question out (FORMERR, some REFUSED): then the ID alone says which query it is
      if (p == null || m.getQuestion() != null && !m.getQuestion().getName().equals(p.name())) {
        unmatched++; // a reply after its query's wait, or one for no query of ours
        continue;
      }
      outstanding.remove(id);
      int rcode = m.getRcode();
      if (rcode == Rcode.NOERROR || rcode == Rcode.NXDOMAIN) {
        answered++;
      } else if (rcode == Rcode.SERVFAIL) {
        servfail++;
      } else {
        other++;
      }
    }
  }

  /** Counts the queries sent before {@code sentBefore} as not replied to. */
  private void expire(long sentBefore) {
    Iterator<Pending> oldest = outstanding.values().iterator();
    while (oldest.hasNext()) {
      Pending p = oldest.next();
      if (p.sentNanos() - sentBefore >= 0) {
        return;
      }
      oldest.remove();
      noReply++;
    }
  }

  @Override
  protected Report finish() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing a datagram socket we opened; nothing to do about a failure
    }
    PhaseRow.ZoneClientCounts c = tally();
    long end = endNanos == 0 ? System.nanoTime() : endNanos;
    double seconds = Math.max(1e-3, (end - startNanos) / 1e9);
    return new Report(c.asked(), c.asked() / seconds, String.format(Locale.ROOT,
        "zone client: new names under %s from %s at %d/s: %s (%d replies matched no query, %d send errors)%s",
        zone, SOURCE, perSecond, c.words(), unmatched, sendErrors, endNote));
  }
}
