package io.shoal.metrics;

import io.shoal.wire.Rcode;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Gauge;
import kamon.metric.Timer;
import kamon.tag.TagSet;

/** Query, drop and upstream instruments of the resolver. */
public final class ServerMetrics {
  /** Reasons a query or packet is dropped without an answer, as shoal_dropped_total labels. */
  public static final String MALFORMED = "malformed";
  public static final String RESPONSE = "response";
  public static final String OVERLOAD = "overload";
  public static final String UPSTREAM_MISMATCH = "upstream_mismatch";
  public static final String WORKER_FAILURE = "worker_failure";
  /** An upstream answer that could not be made valid (bad names, counts, bounds): SERVFAIL instead. */
  public static final String BAD_UPSTREAM_ANSWER = "bad_upstream_answer";
  /** A cache fill not stored because its LMDB shard already had too many waiting. */
  public static final String FILL_QUEUE_FULL = "fill_queue_full";
  /** A TCP connection closed at accept: tcp_max_connections were already open. */
  public static final String TCP_CONNECTION_LIMIT = "tcp_connection_limit";
  /**
   * An idle TCP connection (no query in flight, the longest without one) closed to make room for
   * a new one when tcp_max_connections were open.
   */
  public static final String TCP_IDLE_EVICTED = "tcp_idle_evicted";
  /** A TCP connection closed with a query only partly received when tcp_idle_timeout ran out. */
  public static final String TCP_DEADLINE = "tcp_deadline";
  /** A query beyond tcp_max_queries on one connection: the connection is closed instead. */
  public static final String TCP_QUERY_LIMIT = "tcp_query_limit";
  /** A DoT or DoH connection whose TLS handshake failed (untrusted certificate, no TLS, no common version): closed. */
  public static final String TLS_HANDSHAKE = "tls_handshake";
  /** A DoT or DoH connection closed because its TLS handshake had not finished within tls_handshake_timeout. */
  public static final String TLS_HANDSHAKE_TIMEOUT = "tls_handshake_timeout";
  /** A DoT connection closed because its client asked to renegotiate TLS 1.2 (refused: a cheap way to make the server work). */
  public static final String TLS_RENEGOTIATION = "tls_renegotiation";
  /** A stream connection closed because no whole query (DoH: no request) arrived within tcp_first_query_timeout. */
  public static final String TCP_FIRST_QUERY_TIMEOUT = "tcp_first_query_timeout";
  /** A stream connection closed after tcp_idle_timeout with no query in flight and none begun. */
  public static final String TCP_IDLE_TIMEOUT = "tcp_idle_timeout";
  /**
   * A DoH connection closed because its client broke HTTP: an HTTP/2 connection error (answered
   * with GOAWAY, RFC 9113 section 5.4.1) or an HTTP/1.1 request that cannot be read (answered 400,
   * 431 or 501, then closed).
   */
  public static final String HTTP_PROTOCOL_ERROR = "http_protocol_error";
  /**
   * A DoH request whose HTTP/2 stream its client reset (RST_STREAM) before the answer was sent:
   * the answer is not sent. Its request still counts against the connection's streams until
   * answered, so a client that opens and resets streams at once (CVE-2023-44487, "rapid reset")
   * gets no more work done than one that waits; this count shows it trying.
   */
  public static final String HTTP_STREAM_RESET = "http_stream_reset";
  /** A query from a client network access_control denies. */
  public static final String ACCESS_DENIED = "access_denied";
  /** A UDP reply not sent: its client prefix was over rate_limit.responses_per_second. */
  public static final String RATE_LIMITED = "rate_limited";
  /** Why shoal answered REFUSED on its own, as shoal_refused_total labels. */
  public static final String ACCESS_REFUSED = "access_control";
  /** Refused: a miss with RD=0 (answered from the cache only). */
  public static final String NO_RECURSION = "no_recursion";
  /** A reply the kernel refused to send (shoal_dropped_total{reason="udp_send_failed"}). */
  public static final String UDP_SEND_FAILED = "udp_send_failed";
  /** shoal.dropped's description, shared by every place that registers it. */
  public static final String DROPPED_DESCRIPTION = "Packets dropped unanswered";

  /** Per transport, one counter per 4-bit rcode: the reply path looks one up without allocating. */
  private final ConcurrentHashMap<String, Replies> queries = new ConcurrentHashMap<>();
  private final LabelledCounters dropped;
  private final ConcurrentHashMap<String, Timer> upstream = new ConcurrentHashMap<>();
  private final LabelledCounters remoteLookups;
  private final LabelledCounters previousOwnerLookups;
  /** Created on the first owner lookup, so a node outside a cluster exports no such series. */
  private volatile Timer remoteLookupTime;
  private final LabelledCounters refused;
  private final LabelledCounters overBudget;
  private final ConcurrentHashMap<String, Gauge> upstreamUp = new ConcurrentHashMap<>();
  private final Counter slipped;
  private final Gauge tcpConnections;
  private final ConcurrentHashMap<String, Gauge> streamConnections = new ConcurrentHashMap<>();
  private final TagSet base;

  /** Instruments of a single node: no node label. */
  public ServerMetrics() {
    this(TagSet.Empty());
  }

  /** Instruments of a cluster node, every series labelled {@code node}. */
  public ServerMetrics(String node) {
    this(TagSet.of("node", node));
  }

  private ServerMetrics(TagSet base) {
    this.base = base;
    dropped = new LabelledCounters("shoal.dropped", DROPPED_DESCRIPTION, base, "reason");
    refused = new LabelledCounters("shoal.refused", "Queries refused by policy", base, "reason");
    overBudget = new LabelledCounters("shoal.miss.budget.exceeded",
        "Misses answered SERVFAIL at once because their client prefix or zone was over its miss budget", base, "budget");
    remoteLookups = new LabelledCounters("shoal.cluster.remote.lookups",
        "Misses asked of the owner node: answered, stale, timeout, failed, refused", base, "outcome");
    previousOwnerLookups = new LabelledCounters("shoal.cluster.previous.owner.lookups",
        "Misses of a node that has just joined, asked of the previous owner's cache: held, not_held, timeout", base,
        "outcome");
    for (String reason : new String[] {MALFORMED, RESPONSE, OVERLOAD, UPSTREAM_MISMATCH, WORKER_FAILURE, FILL_QUEUE_FULL,
        UDP_SEND_FAILED, TCP_CONNECTION_LIMIT, TCP_DEADLINE, TCP_QUERY_LIMIT, ACCESS_DENIED, RATE_LIMITED,
        BAD_UPSTREAM_ANSWER, TLS_HANDSHAKE, TLS_HANDSHAKE_TIMEOUT, TLS_RENEGOTIATION, TCP_FIRST_QUERY_TIMEOUT,
        TCP_IDLE_TIMEOUT, TCP_IDLE_EVICTED}) {
      dropped.counter(reason);
    }
    refused.counter(ACCESS_REFUSED);
    refused.counter(NO_RECURSION);
    slipped = Kamon.counter("shoal.rate.limit.slipped", "Rate-limited UDP replies sent truncated (TC=1) instead")
        .withTags(base);
    tcpConnections = Kamon.gauge("shoal.tcp.connections", "TCP client connections open").withTags(base);
  }

  /** One reply sent: shoal_queries_total{transport,rcode}; {@code rcode} as {@link io.shoal.wire.AnswerRenderer#rcode}. */
  public void answered(String transport, int rcode) {
    replies(transport).answered(rcode);
  }

  /**
   * The reply counters of one transport, for a caller that counts every reply it sends (a UDP
   * socket): resolved once, so a reply costs one counter increment and no map look-up.
   */
  public Replies replies(String transport) {
    return queries.computeIfAbsent(transport, Replies::new);
  }

  /** shoal_queries_total{transport,rcode} of one transport, by rcode. */
  public final class Replies {
    private final String transport;
    // The 16 header rcodes, and BADVERS, the one extended rcode shoal sends.
    private final AtomicReferenceArray<Counter> byRcode = new AtomicReferenceArray<>(17);

    private Replies(String transport) {
      this.transport = transport;
    }

    public void answered(int rcode) {
      int slot = rcode == Rcode.BADVERS ? 16 : rcode & 0x0F;
      Counter c = byRcode.get(slot);
      if (c == null) {
        c = Kamon.counter("shoal.queries", "Replies sent")
            .withTags(base.withTag("transport", transport).withTag("rcode", Rcode.name(slot == 16 ? Rcode.BADVERS : slot)));
        // Kamon returns the same instrument for the same tags, so a lost race is harmless.
        byRcode.compareAndSet(slot, null, c);
      }
      c.increment();
    }
  }

  public void dropped(String reason) {
    dropped.counter(reason).increment();
  }

  /**
   * A miss answered SERVFAIL because its client prefix or zone was over its miss budget:
   * shoal_miss_budget_exceeded_total{budget}.
   */
  public void overMissBudget(String budget) {
    overBudget.counter(budget).increment();
  }

  /** A query answered REFUSED by policy: shoal_refused_total{reason}. */
  public void refused(String reason) {
    refused.counter(reason).increment();
  }

  /** A rate-limited UDP reply sent as TC=1: shoal_rate_limit_slipped_total. */
  public void slipped() {
    slipped.increment();
  }

  /** Connections open now on a stream listener: shoal_tcp_connections, or shoal_dot_connections for DoT. */
  public void streamConnections(String transport, int open) {
    if (transport.equals("tcp")) {
      tcpConnections.update(open);
      return;
    }
    streamConnections.computeIfAbsent(transport, t -> Kamon.gauge("shoal." + t + ".connections",
        t.toUpperCase(java.util.Locale.ROOT) + " client connections open").withTags(base)).update(open);
  }

  /** A changed TLS certificate file checked: shoal_tls_certificate_reloads_total{outcome="loaded"|"failed"}. */
  public void certificateReload(String outcome) {
    Kamon.counter("shoal.tls.certificate.reloads",
        "Changed certificate or key files: loaded, or failed (the certificate in use stays)")
        .withTags(base.withTag("outcome", outcome)).increment();
  }

  /** When the certificate DoT and DoH present expires, seconds since the epoch: shoal_tls_certificate_expiry_seconds. */
  public void certificateExpiry(long epochSeconds) {
    Kamon.gauge("shoal.tls.certificate.expiry.seconds", "When the certificate in use expires (Unix time)")
        .withTags(base).update(epochSeconds);
  }

  /**
   * shoal_tls_provider{provider}: 1 for the TLS implementation serving the DoT and DoH listeners,
   * 0 for the other ("conscrypt", "jdk").
   */
  public void tlsProvider(String provider) {
    for (String p : new String[] {"conscrypt", "jdk"}) {
      Kamon.gauge("shoal.tls.provider", "1 for the TLS implementation serving the DoT and DoH listeners, 0 for the other")
          .withTags(base.withTag("provider", p)).update(p.equals(provider) ? 1 : 0);
    }
  }

  /**
   * shoal_upstream_tls_provider{provider}: 1 for the TLS implementation of the connections to DoT
   * upstream servers, 0 for the other ("conscrypt", "jdk"); set when the first one is asked.
   */
  public void upstreamTlsProvider(String provider) {
    for (String p : new String[] {"conscrypt", "jdk"}) {
      Kamon.gauge("shoal.upstream.tls.provider", "1 for the TLS implementation of DoT upstream connections, 0 for the other")
          .withTags(base.withTag("provider", p)).update(p.equals(provider) ? 1 : 0);
    }
  }

  /** One upstream exchange: shoal_upstream_seconds{upstream,outcome}. */
  public void upstream(String server, String outcome, long nanos) {
    String key = server + "/" + outcome;
    Timer t = upstream.get(key);
    if (t == null) {
      t = upstream.computeIfAbsent(key, k -> Kamon.timer("shoal.upstream", "Upstream exchanges")
          .withTags(base.withTag("upstream", server).withTag("outcome", outcome)));
    }
    t.record(nanos);
  }

  /**
   * A connection to a DoT upstream refused during or right after its handshake:
   * shoal_upstream_tls_failures_total{upstream,reason}, reason one of hostname, expired, untrusted,
   * pin, handshake.
   */
  public void upstreamTlsFailure(String server, String reason) {
    Kamon.counter("shoal.upstream.tls.failures", "Connections to DoT upstreams refused at the TLS handshake")
        .withTags(base.withTag("upstream", server).withTag("reason", reason)).increment();
  }

  /** Whether an upstream server is asked (1) or marked down after failures (0): shoal_upstream_up{upstream}. */
  public void upstreamUp(String server, boolean up) {
    upstreamUp.computeIfAbsent(server, s -> Kamon.gauge("shoal.upstream.up",
        "1 while an upstream server is asked, 0 while it is marked down after timeouts or errors")
        .withTags(base.withTag("upstream", s))).update(up ? 1 : 0);
  }

  /** Datagrams read by one of the reuseport sockets: shoal_udp_received_total{socket}. */
  public Counter udpSocketReceived(int socket) {
    return Kamon.counter("shoal.udp.received", "Datagrams read, per listening UDP socket")
        .withTags(base.withTag("socket", String.valueOf(socket)));
  }

  /**
   * Reads of one of the reuseport sockets that returned datagrams: shoal_udp_reads_total{socket}.
   * shoal_udp_received_total over this is how many datagrams a read found (a batched reader takes
   * up to listen.udp_batch per read; one through the JDK's channel).
   */
  public Counter udpSocketReads(int socket) {
    return Kamon.counter("shoal.udp.reads", "Reads that returned datagrams, per listening UDP socket")
        .withTags(base.withTag("socket", String.valueOf(socket)));
  }

  /**
   * How long datagrams of one kind ({@code query} or {@code response}) waited in a listening UDP
   * socket's receive queue, from the kernel's receipt to their reader's read:
   * shoal_udp_queue_seconds{datagram}. In a cluster a lookup waits there twice: as a query at the
   * owner, and as the owner's response at the asking node.
   */
  public Timer udpQueueTime(String datagram) {
    return Kamon.timer("shoal.udp.queue", "Time datagrams waited in a listening UDP socket's receive queue")
        .withTags(base.withTag("datagram", datagram));
  }

  /**
   * How long an owner lookup that the owner answered took, from the question leaving this node to
   * the answer back in its worker: shoal_cluster_remote_lookup_seconds.
   */
  public void remoteLookupTime(long nanos) {
    Timer t = remoteLookupTime;
    if (t == null) {
      t = Kamon.timer("shoal.cluster.remote.lookup", "Round trip of owner lookups the owner answered").withTags(base);
      remoteLookupTime = t;
    }
    t.record(nanos);
  }

  /** A miss asked of the key's owner node: shoal_cluster_remote_lookups_total{outcome}. */
  public void remoteLookup(String outcome) {
    remoteLookups.counter(outcome).increment();
  }

  /**
   * A miss of a node that has just entered the ring, asked of the key's previous owner's cache:
   * shoal_cluster_previous_owner_lookups_total{outcome}.
   */
  public void previousOwnerLookup(String outcome) {
    previousOwnerLookups.counter(outcome).increment();
  }
}
