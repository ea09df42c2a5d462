package io.shoal.ingress;

import io.shoal.ingress.Stage.Verdict;
import io.shoal.profile.Profile;
import io.shoal.wire.DnsQuery;
import java.net.InetSocketAddress;
import java.util.function.LongSupplier;

/**
 * One query on its way through the {@link StageChain}: what came in, and what the stages found out
 * so far. One per reading thread, reused for every query it reads (a fresh one only when a reply
 * sent from a stage leads the same thread back into the front door), so a hit allocates no context.
 * Holds nothing once the query has left the chain.
 */
final class QueryContext {
  private final LongSupplier clock;

  /** The plan the query is answered by, read once as it came in. */
  QueryPlan plan;
  byte[] packet;
  InetSocketAddress client;
  Protocol protocol;
  /** Where its reply goes: the path it came in on, or the query log's watcher of it. */
  ReplyPath reply;
  /** The path it came in on (a UDP socket sends owner lookups from itself). */
  ReplyPath arrivedOn;
  /** The parsed query; null before the parse stage. */
  DnsQuery query;
  /** The worker that owns the query's key, once it is admitted to it; else -1. */
  int worker = -1;
  /** In the chain now: a second query on this thread meanwhile gets a context of its own. */
  boolean busy;

  private Profile profile;
  private long now;
  private boolean timed;

  /** @param clock epoch milliseconds */
  QueryContext(LongSupplier clock) {
    this.clock = clock;
  }

  void start(QueryPlan plan, byte[] packet, InetSocketAddress client, Protocol protocol, ReplyPath reply) {
    this.busy = true;
    this.plan = plan;
    this.packet = packet;
    this.client = client;
    this.protocol = protocol;
    this.reply = reply;
    this.arrivedOn = reply;
  }

  /** The query has left the chain: let go of it. */
  void clear() {
    busy = false;
    plan = null;
    packet = null;
    client = null;
    protocol = null;
    reply = null;
    arrivedOn = null;
    query = null;
    profile = null;
    worker = -1;
    timed = false;
  }

  /** The profile whose cache and upstreams serve the query's name; looked up once. */
  Profile profile() {
    if (profile == null) {
      profile = plan.profiles().match(query.key());
    }
    return profile;
  }

  /** The time the query is answered at, epoch milliseconds: read once, when a stage first asks. */
  long now() {
    if (!timed) {
      now = clock.getAsLong();
      timed = true;
    }
    return now;
  }

  /** The largest reply the query's transport carries for it. */
  int sizeLimit() {
    return protocol.sizeLimit(query);
  }

  /** Sends {@code wire} to the client. */
  Verdict answer(byte[] wire) {
    reply.send(wire, client);
    return Verdict.ANSWERED;
  }

  /** Tells the reply path the query gets no reply. */
  Verdict drop() {
    reply.drop();
    return Verdict.DROPPED;
  }
}
