package io.shoal.ratelimit;

import io.shoal.config.RateLimitSettings;
import io.shoal.metrics.ServerMetrics;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.function.LongSupplier;

/**
 * Response rate limiting (as Unbound's ip-ratelimit and Knot's RRL): UDP replies per client
 * prefix (/24 for IPv4, /56 for IPv6) and second are counted; beyond the limit a reply is
 * dropped, except every {@code slip}-th, which goes out truncated (TC=1) so a real client behind
 * a spoofed prefix can still get its answer over TCP.
 *
 * <p>The counters live in a fixed table indexed by a hash of the prefix: memory does not grow
 * with the number of addresses an attacker spoofs. A prefix that collides with another takes its
 * slot over and starts from zero, so a collision can only let a reply through, never drop an
 * honest one. Safe for concurrent senders (striped locks).
 */
public final class ResponseRateLimiter {
  private static final long V4_TAG = 1L << 32;
  private static final long V6_TAG = 1L << 62;

  private final int limit;
  private final int slip;
  private final boolean includeLoopback;
  private final ServerMetrics metrics;
  private final PerSecondCounts counts;

  public ResponseRateLimiter(RateLimitSettings settings, ServerMetrics metrics) {
    this(settings, metrics, System::nanoTime);
  }

  ResponseRateLimiter(RateLimitSettings settings, ServerMetrics metrics, LongSupplier nanoClock) {
    this.limit = settings.responsesPerSecond();
    this.slip = settings.slip();
    this.includeLoopback = settings.includeLoopback();
    this.metrics = metrics;
    this.counts = new PerSecondCounts(settings.enabled() ? settings.tableSize() : 0, nanoClock);
  }

  /** What the limit makes of one reply: sent as it is, sent truncated (a slip), or dropped. */
  public enum Verdict { SEND, SLIP, DROP }

  /**
   * Applies the limit to one reply about to be sent to {@code client}.
   *
   * @return {@code reply} itself when it may go out, a truncated copy when it slips, or null
   *     when it is dropped (counted as shoal_dropped_total{reason="rate_limited"})
   */
  public byte[] limit(byte[] reply, InetAddress client) {
    return switch (verdict(client)) {
      case SEND -> reply;
      case SLIP -> TruncatedReply.of(reply);
      case DROP -> null;
    };
  }

  /**
   * {@link #limit} without the reply: counts one reply to {@code client} and says what to do with
   * it; a slip and a drop are counted here. The caller sends a slip as {@link #truncated}.
   */
  public Verdict verdict(InetAddress client) {
    if (limit == 0 || (!includeLoopback && client.isLoopbackAddress())) {
      return Verdict.SEND;
    }
    int count = counts.increment(prefixOf(client, 24, 56));
    if (count <= limit) {
      return Verdict.SEND;
    }
    if (slip > 0 && (count - limit) % slip == 0) {
      metrics.slipped();
      return Verdict.SLIP;
    }
    metrics.dropped(ServerMetrics.RATE_LIMITED);
    return Verdict.DROP;
  }

  /** A slipped reply: header and question with TC=1, and the OPT when {@code reply} has one. */
  public static byte[] truncated(byte[] reply) {
    return TruncatedReply.of(reply);
  }

  /**
   * The client's prefix ({@code v4Bits} of an IPv4 address, {@code v6Bits} of an IPv6 one, at
   * most 64) as a number; the tag bits keep the families apart and never 0.
   */
  static long prefixOf(InetAddress client, int v4Bits, int v6Bits) {
    if (client instanceof Inet4Address) {
      // Inet4Address.hashCode() is the address itself: no copy of the bytes per reply.
      long mask = v4Bits == 0 ? 0 : (0xFFFFFFFFL << (32 - v4Bits)) & 0xFFFFFFFFL;
      return V4_TAG | (client.hashCode() & mask);
    }
    byte[] b = client.getAddress();
    long p = 0;
    for (int i = 0; i < 8; i++) {
      p = p << 8 | (b[i] & 0xFF);
    }
    long mask = v6Bits == 0 ? 0 : -1L << (64 - v6Bits);
    // Mixed into the 62 bits under the tag: two prefixes share a key only by a rare collision,
    // which lets something through, as a table collision does.
    return V6_TAG | (((p & mask) * 0x9E3779B97F4A7C15L) >>> 2);
  }
}
