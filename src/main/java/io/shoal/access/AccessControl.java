package io.shoal.access;

import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.Rcode;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Decides from a client's address whether its queries are answered, refused or dropped: the
 * longest matching {@link AccessRule} wins, and a client no rule matches is refused. Immutable,
 * so the transports' threads share one instance; an IPv4 check allocates nothing.
 */
public final class AccessControl {
  /** The default: loopback, RFC 1918 private and link-local networks, and ::1, fc00::/7 (RFC 4193), fe80::/10. */
  public static final List<String> PRIVATE_NETWORKS = List.of(
      "127.0.0.0/8 allow", "10.0.0.0/8 allow", "172.16.0.0/12 allow", "192.168.0.0/16 allow",
      "169.254.0.0/16 allow", "::1/128 allow", "fc00::/7 allow", "fe80::/10 allow");

  private static final Optional<byte[]> DROP = Optional.empty();

  // Rules split by family, longest prefix first, as masks over the address's bits.
  private final int[] v4Network;
  private final int[] v4Mask;
  private final AccessRule.Action[] v4Action;
  private final long[] v6High;
  private final long[] v6Low;
  private final long[] v6MaskHigh;
  private final long[] v6MaskLow;
  private final AccessRule.Action[] v6Action;
  private final ServerMetrics metrics;

  public AccessControl(List<AccessRule> rules, ServerMetrics metrics) {
    this.metrics = metrics;
    List<AccessRule> sorted = new ArrayList<>(rules);
    sorted.sort(Comparator.comparingInt(AccessRule::prefixLength).reversed());
    List<AccessRule> v4 = sorted.stream().filter(r -> r.network() instanceof Inet4Address).toList();
    List<AccessRule> v6 = sorted.stream().filter(r -> !(r.network() instanceof Inet4Address)).toList();
    v4Network = new int[v4.size()];
    v4Mask = new int[v4.size()];
    v4Action = new AccessRule.Action[v4.size()];
    for (int i = 0; i < v4.size(); i++) {
      AccessRule r = v4.get(i);
      v4Mask[i] = r.prefixLength() == 0 ? 0 : -1 << (32 - r.prefixLength());
      v4Network[i] = toInt(r.network().getAddress()) & v4Mask[i];
      v4Action[i] = r.action();
    }
    v6High = new long[v6.size()];
    v6Low = new long[v6.size()];
    v6MaskHigh = new long[v6.size()];
    v6MaskLow = new long[v6.size()];
    v6Action = new AccessRule.Action[v6.size()];
    for (int i = 0; i < v6.size(); i++) {
      AccessRule r = v6.get(i);
      byte[] b = r.network().getAddress();
      int len = r.prefixLength();
      v6MaskHigh[i] = len == 0 ? 0 : len >= 64 ? -1L : -1L << (64 - len);
      v6MaskLow[i] = len <= 64 ? 0 : len == 128 ? -1L : -1L << (128 - len);
      v6High[i] = toLong(b, 0) & v6MaskHigh[i];
      v6Low[i] = toLong(b, 8) & v6MaskLow[i];
      v6Action[i] = r.action();
    }
  }

  /** The action for a client address: the longest matching rule's, or refuse when none matches. */
  public AccessRule.Action actionFor(InetAddress client) {
    if (client instanceof Inet4Address) {
      // Inet4Address.hashCode() is the address itself: no copy of the bytes per query.
      int a = client.hashCode();
      for (int i = 0; i < v4Mask.length; i++) {
        if ((a & v4Mask[i]) == v4Network[i]) {
          return v4Action[i];
        }
      }
      return AccessRule.Action.REFUSE;
    }
    byte[] b = client.getAddress();
    long high = toLong(b, 0);
    long low = toLong(b, 8);
    for (int i = 0; i < v6Action.length; i++) {
      if ((high & v6MaskHigh[i]) == v6High[i] && (low & v6MaskLow[i]) == v6Low[i]) {
        return v6Action[i];
      }
    }
    return AccessRule.Action.REFUSE;
  }

  /**
   * Screens a query before anything else looks at it.
   *
   * @return null when the client may ask; otherwise what to send instead of an answer: a
   *     REFUSED reply with the question, or empty to drop the packet (denied clients, and
   *     packets from refused clients that are not well-formed queries)
   */
  public Optional<byte[]> turnAway(byte[] packet, InetAddress client) {
    AccessRule.Action action = actionFor(client);
    if (action == AccessRule.Action.ALLOW) {
      return null;
    }
    if (denied(action)) {
      return DROP;
    }
    metrics.refused(ServerMetrics.ACCESS_REFUSED);
    try {
      byte[] reply = DnsQuery.parse(packet).servfail();
      // The same reply as SERVFAIL (question, OPT when the client used EDNS), another rcode.
      reply[3] = (byte) ((reply[3] & 0xF0) | Rcode.REFUSED);
      return Optional.of(reply);
    } catch (BadQuery bad) {
      // Answering junk from a network we do not serve would only help reflection.
      return DROP;
    }
  }

  /**
   * Whether a stream connection from {@code client} is to be closed before anything is read:
   * true for a client the rules deny (counted as a denied drop, as its queries would be).
   */
  public boolean deniesConnection(InetAddress client) {
    return denied(actionFor(client));
  }

  private boolean denied(AccessRule.Action action) {
    if (action != AccessRule.Action.DENY) {
      return false;
    }
    metrics.dropped(ServerMetrics.ACCESS_DENIED);
    return true;
  }

  private static int toInt(byte[] b) {
    return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
  }

  private static long toLong(byte[] b, int off) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = v << 8 | (b[off + i] & 0xFF);
    }
    return v;
  }
}
