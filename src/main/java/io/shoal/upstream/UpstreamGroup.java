package io.shoal.upstream;

import io.shoal.config.DotServerSettings;
import io.shoal.config.UpstreamGroupSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.Rcode;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Forwards questions to one upstream group: a fresh random 16-bit ID and source port per attempt,
 * the next server on a timeout, error, SERVFAIL or REFUSED, TCP when an answer comes back
 * truncated, all within one deadline per query. It starts with the server that answered last, so
 * one dead server costs one timeout, not one per query; a server that keeps failing is marked down
 * ({@link ServerHealth}) and skipped, and when every server is down a query fails at once.
 * Servers listed as {@code tls://} are asked through {@link DotExchanges} instead, under the same
 * rules (no TCP retry there: a DoT answer is never truncated).
 */
public final class UpstreamGroup implements Upstream {
  private final List<InetSocketAddress> servers;
  private final String[] labels;
  private final long attemptNanos;
  private final long deadlineNanos;
  private final UpstreamSelector sockets;
  /** Per server, its DoT settings, or null for a server asked over UDP/TCP. */
  private final DotServerSettings[] dot;
  private final DotExchanges dotExchanges;
  private final ServerMetrics metrics;
  private final ServerHealth[] health;
  private volatile int preferred;
  /** Set when a reload replaced this group: its down servers are no longer probed. */
  private volatile boolean retired;

  public UpstreamGroup(UpstreamGroupSettings group, UpstreamSelector sockets, ServerMetrics metrics) {
    this(group, sockets, DotExchanges.NONE, metrics);
  }

  public UpstreamGroup(
      UpstreamGroupSettings group, UpstreamSelector sockets, DotExchanges dotExchanges, ServerMetrics metrics) {
    this.servers = group.servers();
    this.dot = servers.stream().map(a -> group.dot().get(a)).toArray(DotServerSettings[]::new);
    this.dotExchanges = dotExchanges;
    this.labels = new String[servers.size()];
    for (int i = 0; i < labels.length; i++) {
      labels[i] = (dot[i] == null ? "" : "tls://") + label(servers.get(i));
    }
    this.attemptNanos = group.timeout().toNanos();
    this.deadlineNanos = group.deadline().toNanos();
    this.sockets = sockets;
    this.metrics = metrics;
    this.health = new ServerHealth[servers.size()];
    for (int i = 0; i < health.length; i++) {
      int server = i;
      health[i] = new ServerHealth(labels[i], group.maxFails(), group.backoff(), group.maxBackoff(), metrics,
          () -> probe(server), () -> retired || sockets.closed());
    }
  }

  /** A reload replaced this group: queries already sent finish, probing of its down servers stops. */
  public void retire() {
    retired = true;
  }

  /** Asks server {@code i} for {@code . NS}, over UDP or its TLS connection: any reply means it is alive. */
  private CompletableFuture<byte[]> probe(int i) {
    long deadline = System.nanoTime() + attemptNanos;
    if (dot[i] != null) {
      int id = sockets.newQueryId();
      return dotExchanges.exchange(dot[i], PROBE.upstreamQuery(id), id, PROBE.key(), deadline);
    }
    return sockets.udp(servers.get(i), PROBE, deadline);
  }

  /** The probe question: root NS, which every DNS server answers somehow. */
  private static final DnsQuery PROBE = rootNsQuery();

  private static DnsQuery rootNsQuery() {
    byte[] q = {0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1};
    try {
      return DnsQuery.parse(q);
    } catch (BadQuery e) {
      throw new IllegalStateException("the probe question does not parse", e);
    }
  }

  @Override
  public CompletionStage<Outcome> forward(DnsQuery query) {
    CompletableFuture<Outcome> result = new CompletableFuture<>();
    next(query, result, preferred, 0, System.nanoTime() + deadlineNanos);
    return result;
  }

  /**
   * Sends to the first server from {@code from} on that health admits, having considered {@code
   * considered} servers of the group already; fails the query when none is left.
   */
  private void next(DnsQuery query, CompletableFuture<Outcome> result, int from, int considered, long deadline) {
    for (int k = 0; considered + k < servers.size(); k++) {
      int server = (from + k) % servers.size();
      if (!health[server].down()) {
        attempt(query, result, considered + k, server, false, deadline);
        return;
      }
    }
    result.complete(new Failed(considered == 0
        ? "every upstream server is marked down after failures" : "no upstream server answered"));
  }

  private void attempt(
      DnsQuery query, CompletableFuture<Outcome> result, int attempt, int server, boolean overTcp, long deadline) {
    long start = System.nanoTime();
    long attemptDeadline = Math.min(deadline, start + attemptNanos);
    if (deadline - start <= 0) {
      result.complete(new Failed("the query's deadline passed"));
      return;
    }
    int id = sockets.newQueryId();
    byte[] wire = query.upstreamQuery(id);
    InetSocketAddress address = servers.get(server);
    CompletableFuture<byte[]> exchange = dot[server] != null
        ? dotExchanges.exchange(dot[server], wire, id, query.key(), attemptDeadline)
        : overTcp
            ? sockets.tcp(address, wire, id, query.key(), attemptDeadline)
            : sockets.udp(address, wire, id, query.key(), attemptDeadline);
    exchange.whenComplete((answer, failure) -> {
      try {
        onAttemptDone(query, result, attempt, server, overTcp, deadline, start, answer, failure);
      } catch (RuntimeException e) {
        result.complete(new Failed(e.toString()));
      }
    });
  }

  private void onAttemptDone(
      DnsQuery query, CompletableFuture<Outcome> result, int attempt, int server, boolean overTcp, long deadline,
      long start, byte[] answer, Throwable failure) {
    String label = labels[server];
    long end = System.nanoTime();
    long nanos = end - start;
    boolean moreServers = attempt + 1 < servers.size();
    int nextServer = (server + 1) % servers.size();
    if (failure != null) {
      Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
      String outcome = cause instanceof UpstreamException ue ? ue.outcome() : "error";
      metrics.upstream(label, outcome, nanos);
      if (!outcome.equals(UpstreamException.OVERLOAD)) {
        // Out of sockets here says nothing about the server.
        health[server].failed();
      }
      if (moreServers) {
        next(query, result, nextServer, attempt + 1, deadline);
      } else {
        result.complete(new Failed(cause.getMessage()));
      }
      return;
    }
    health[server].answered();
    if (!overTcp && dot[server] == null && (answer[2] & 0x02) != 0) {
      metrics.upstream(label, "truncated", nanos);
      attempt(query, result, attempt, server, true, deadline);
      return;
    }
    int rcode = answer[3] & 0x0F;
    if ((rcode == Rcode.SERVFAIL || rcode == Rcode.REFUSED) && moreServers) {
      metrics.upstream(label, Rcode.name(rcode).toLowerCase(Locale.ROOT), nanos);
      next(query, result, nextServer, attempt + 1, deadline);
      return;
    }
    metrics.upstream(label, "ok", nanos);
    preferred = server;
    result.complete(new Answered(answer, label));
  }

  /** A server's {@code upstream} metric label: {@code ADDRESS:PORT}, IPv6 in brackets. */
  public static String label(InetSocketAddress a) {
    String host = a.getAddress().getHostAddress();
    return host.indexOf(':') >= 0 ? "[" + host + "]:" + a.getPort() : host + ":" + a.getPort();
  }
}
