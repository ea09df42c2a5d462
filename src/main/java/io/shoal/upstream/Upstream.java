package io.shoal.upstream;

import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import java.util.concurrent.CompletionStage;

/** Where a profile's misses are resolved: a group of upstream servers behind one call. */
public interface Upstream {

  /** What came of a forwarded question. */
  sealed interface Outcome permits Answered, Failed {}

  /**
   * The upstream's answer, already matched to the question.
   *
   * @param why for a SERVFAIL made between the exchange and the cache (a DNSSEC validation
   *     failure): the extended DNS error its first clients get; null for the upstream's own answer
   */
  record Answered(byte[] wire, String server, ExtendedError why) implements Outcome {
    public Answered(byte[] wire, String server) {
      this(wire, server, null);
    }
  }

  /** No server gave a usable answer before the query's deadline. */
  record Failed(String reason) implements Outcome {}

  /**
   * A denial answered without asking upstream: its wire (records with the TTLs they were signed
   * with) and until when it holds, which caps every TTL in the reply.
   */
  record Denial(byte[] wire, long expiresAtMillis) {}

  /**
   * The answer to {@code query} that what this upstream proved before makes certain, so it need
   * not be asked (RFC 8198: a cached DNSSEC denial covering the name); null when there is none.
   * Read on a miss only, before the miss goes to an owner node or upstream.
   */
  default Denial denial(DnsQuery query, long nowMillis) {
    return null;
  }

  /**
   * Resolves {@code query}'s question upstream. The stage always completes, never exceptionally,
   * and no later than the query's one deadline.
   */
  CompletionStage<Outcome> forward(DnsQuery query);
}
