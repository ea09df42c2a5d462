package io.shoal.recursion;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What this node learnt of each authority address: its smoothed round-trip time (RFC 6298), time-outs
 * in a row (each doubles how long it is passed over), and zones it was lame for. Bounded in entries,
 * least recently used first out.
 *
 * <p>Choice follows Unbound: among the addresses not backed off, any whose smoothed RTT is within
 * {@link #BAND_MILLIS} of the fastest, at random, so a slightly slower server is still explored and
 * its RTT kept current; an address never asked counts as {@link #UNKNOWN_MILLIS}.
 */
final class AuthorityServers {
  static final long BAND_MILLIS = 400;
  static final long UNKNOWN_MILLIS = 376;
  private static final long MIN_TIMEOUT_MILLIS = 300;
  /** How long an address stays passed over for a zone it served badly. */
  static final long LAME_NANOS = TimeUnit.MINUTES.toNanos(2);
  private static final long MAX_BACKOFF_NANOS = TimeUnit.MINUTES.toNanos(2);

  private static final class Server {
    double srtt = UNKNOWN_MILLIS;
    double rttvar = UNKNOWN_MILLIS / 4.0;
    boolean measured;
    int timeouts;
    long backedOffUntil;
  }

  private final LinkedHashMap<InetSocketAddress, Server> servers;
  private final LinkedHashMap<String, Long> lame;

  AuthorityServers(int max) {
    this.servers = new LinkedHashMap<>(64, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<InetSocketAddress, Server> eldest) {
        return size() > max;
      }
    };
    this.lame = new LinkedHashMap<>(64, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
        return size() > max;
      }
    };
  }

  /**
   * The address of {@code candidates} to ask next for {@code zone}: one that is neither backed off
   * nor lame for the zone if there is one (within the RTT band of the fastest such), else the one
   * whose back-off ends first; null for an empty list.
   */
  synchronized InetSocketAddress choose(List<InetSocketAddress> candidates, String zone, long now) {
    double best = Double.MAX_VALUE;
    for (InetSocketAddress a : candidates) {
      if (usable(a, zone, now)) {
        best = Math.min(best, rtt(a));
      }
    }
    if (best == Double.MAX_VALUE) {
      InetSocketAddress soonest = null;
      long soonestAt = Long.MAX_VALUE;
      for (InetSocketAddress a : candidates) {
        Server s = servers.get(a);
        long at = s == null ? now : s.backedOffUntil;
        if (soonest == null || at - soonestAt < 0) {
          soonest = a;
          soonestAt = at;
        }
      }
      return soonest;
    }
    int inBand = 0;
    InetSocketAddress pick = null;
    for (InetSocketAddress a : candidates) {
      if (usable(a, zone, now) && rtt(a) <= best + BAND_MILLIS
          && ThreadLocalRandom.current().nextInt(++inBand) == 0) {
        pick = a; // reservoir sampling: each in the band equally likely
      }
    }
    return pick;
  }

  private boolean usable(InetSocketAddress a, String zone, long now) {
    Server s = servers.get(a);
    if (s != null && s.backedOffUntil - now > 0) {
      return false;
    }
    Long until = lame.get(a + "/" + zone);
    return until == null || until - now <= 0;
  }

  private double rtt(InetSocketAddress a) {
    Server s = servers.get(a);
    return s == null ? UNKNOWN_MILLIS : s.srtt;
  }

  /**
   * How long to wait for {@code a}: its retransmission time-out (smoothed RTT plus four deviations,
   * doubled per time-out in a row), at least 300 ms (a loaded host's scheduling, not the network),
   * at most {@code max}.
   */
  synchronized long timeoutNanos(InetSocketAddress a, long maxNanos) {
    Server s = servers.get(a);
    double rto = s == null ? UNKNOWN_MILLIS * 2 : s.srtt + 4 * s.rttvar;
    if (s != null) {
      rto *= 1L << Math.min(s.timeouts, 6);
    }
    long nanos = TimeUnit.MICROSECONDS.toNanos((long) (Math.max(rto, MIN_TIMEOUT_MILLIS) * 1000));
    return Math.min(nanos, maxNanos);
  }

  synchronized void answered(InetSocketAddress a, long rttNanos) {
    Server s = servers.computeIfAbsent(a, k -> new Server());
    double r = rttNanos / 1e6;
    if (!s.measured) {
      s.srtt = r;
      s.rttvar = r / 2;
      s.measured = true;
    } else {
      s.rttvar = 0.75 * s.rttvar + 0.25 * Math.abs(s.srtt - r);
      s.srtt = 0.875 * s.srtt + 0.125 * r;
    }
    s.timeouts = 0;
    s.backedOffUntil = 0;
  }

  /** {@code a} did not answer: passed over for a while, twice as long each time in a row. */
  synchronized void timedOut(InetSocketAddress a, long now) {
    Server s = servers.computeIfAbsent(a, k -> new Server());
    s.timeouts++;
    long backoff = Math.min(MAX_BACKOFF_NANOS, TimeUnit.MILLISECONDS.toNanos(250) << Math.min(s.timeouts, 20));
    s.backedOffUntil = now + backoff;
  }

  /** {@code a} answered for {@code zone} in a way no authority of it should: passed over for the zone a while. */
  synchronized void lame(InetSocketAddress a, String zone, long now) {
    lame.put(a + "/" + zone, now + LAME_NANOS);
  }

  synchronized int size() {
    return servers.size() + lame.size();
  }

  synchronized void clear() {
    servers.clear();
    lame.clear();
  }
}
