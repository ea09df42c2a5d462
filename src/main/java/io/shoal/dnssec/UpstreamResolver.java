package io.shoal.dnssec;

import io.shoal.upstream.Upstream;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.DNSKEYRecord;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Resolver;
import org.xbill.DNS.Section;
import org.xbill.DNS.TSIG;
import org.xbill.DNS.Type;

/**
 * The validator's head resolver: dnsjava's {@link Resolver} over a profile's {@link Upstream}. It
 * asks with DO=1 (we need the signatures) and CD=1 (an upstream that validates must still hand over
 * what it thinks is bogus, or we cannot say why), and asks each question once however many
 * validations want it at the same time (and for {@link #REUSE_NANOS} after): concurrent misses in
 * one zone share one DNSKEY and one DS query. Transport, timeouts and retries are the upstream group's, so the setters here are no-ops.
 */
final class UpstreamResolver implements Resolver {
  /** What is asked: the coalescing key. */
  record Question(Name name, int type, int dclass) {}

  /** One question on its way upstream, and how many validations hold on to its answer. */
  static final class Fetch {
    final CompletableFuture<Upstream.Outcome> outcome = new CompletableFuture<>();
    /** A DNSKEY or DS question: its answer stays joinable for {@link #REUSE_NANOS}. */
    final boolean keys;
    int pins;
    /** When the answer came (System.nanoTime()); meaningful once {@link #outcome} is done. */
    volatile long answeredAt;

    Fetch(boolean keys) {
      this.keys = keys;
    }

    /** Whether nobody needs this any more: not pinned, and failed, not keys, or past the reuse window. */
    boolean droppable(long now) {
      return pins == 0 && outcome.isDone()
          && (!keys || !(outcome.join() instanceof Upstream.Answered) || now - answeredAt >= REUSE_NANOS);
    }
  }

  /**
   * How long a DNSKEY or DS answer stays joinable after it came. Validations started by one burst
   * of misses reach the zone's DNSKEY (and DS) query at slightly different times, and the key
   * cache has the key only once the first has checked it; within this window the late ones join
   * the answer already fetched instead of asking again. Short against any TTL, so nothing stale is
   * served. Other answers are dropped as soon as no validation holds them: kept, they would be a
   * second answer cache, outside the answer cache's size and the cluster's ownership.
   */
  static final long REUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final Upstream upstream;
  private final Executor executor;
  /** Turns the DNSKEY records of each answer into ones whose public key is made once per key. */
  private final SignatureKeys keys;
  private final ConcurrentHashMap<Question, Fetch> inFlight = new ConcurrentHashMap<>();
  private volatile Duration timeout = Duration.ofSeconds(10);

  UpstreamResolver(Upstream upstream, Executor executor, SignatureKeys keys) {
    this.upstream = upstream;
    this.executor = executor;
    this.keys = keys;
  }

  /**
   * Asks {@code q} (or joins the query already asking it) and keeps its answer for later askers
   * until {@link #unpin}: a validation pins its own question, so the validator's request for it is
   * answered from the same exchange instead of a second one.
   */
  Fetch pin(Question q) {
    return fetch(q, true);
  }

  /** Releases a {@link #pin}; the answer is dropped once nobody holds it. */
  void unpin(Question q, Fetch f) {
    inFlight.computeIfPresent(q, (k, e) -> {
      if (e != f) {
        return e;
      }
      e.pins--;
      return e.droppable(System.nanoTime()) ? null : e;
    });
  }

  private Fetch fetch(Question q, boolean pin) {
    Fetch[] started = new Fetch[1];
    long now = System.nanoTime();
    Fetch f = inFlight.compute(q, (k, e) -> {
      if (e == null || e.droppable(now)) {
        e = new Fetch(q.type() == Type.DNSKEY || q.type() == Type.DS);
        started[0] = e;
      }
      if (pin) {
        e.pins++;
      }
      return e;
    });
    if (started[0] != null) {
      ask(q).whenComplete((outcome, failure) -> {
        f.answeredAt = System.nanoTime();
        // Complete first, then drop: an unpin in between sees it done and drops it itself.
        f.outcome.complete(outcome != null ? outcome : new Upstream.Failed(String.valueOf(failure)));
        drop(q, f);
        if (f.keys && f.outcome.join() instanceof Upstream.Answered) {
          CompletableFuture.delayedExecutor(REUSE_NANOS, TimeUnit.NANOSECONDS).execute(() -> drop(q, f));
        }
      });
    }
    return f;
  }

  /** Questions asked or held right now (for tests: nothing may stay once its window has passed). */
  int held() {
    return inFlight.size();
  }

  private void drop(Question q, Fetch f) {
    inFlight.computeIfPresent(q, (k, e) -> e == f && e.droppable(System.nanoTime()) ? null : e);
  }

  private CompletionStage<Upstream.Outcome> ask(Question q) {
    Message m = new Message();
    m.getHeader().setFlag(Flags.RD);
    m.getHeader().setFlag(Flags.CD);
    m.addRecord(Record.newRecord(q.name(), q.type(), q.dclass()), Section.QUESTION);
    m.addRecord(new OPTRecord(DnsQuery.EDNS_UDP_SIZE, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    try {
      return upstream.forward(DnsQuery.parse(m.toWire()));
    } catch (BadQuery e) {
      return CompletableFuture.completedFuture(new Upstream.Failed("cannot ask " + q + ": " + e.getMessage()));
    }
  }

  @Override
  public CompletionStage<Message> sendAsync(Message query, Executor validation) {
    Record r = query.getQuestion();
    Fetch f = fetch(new Question(r.getName(), r.getType(), r.getDClass()), false);
    int id = query.getHeader().getID();
    if (f.outcome.isDone() && ValidationThreads.current()) {
      // Already on a validation thread with the answer there (a resolving group's walk ends on
      // one): validation goes on here; a hand-off to another validation thread would only cost.
      return f.outcome.thenApply(outcome -> answer(outcome, id));
    }
    // Validation (signature checks) continues on the validation's own lane where it has one,
    // else on the executor: never on the upstream's socket thread.
    Executor next = validation instanceof ValidationThreads.Validation ? validation : executor;
    return f.outcome.thenApplyAsync(outcome -> answer(outcome, id), next);
  }

  /** The validator's view of {@code outcome} (as the answer to query {@code id}), its DNSKEYs prepared; a failure for no answer. */
  private Message answer(Upstream.Outcome outcome, int id) {
    if (!(outcome instanceof Upstream.Answered answered)) {
      throw new CompletionException(new IOException(((Upstream.Failed) outcome).reason()));
    }
    try {
      Message m = new Message(answered.wire());
      m.getHeader().setID(id);
      return withPreparedKeys(m);
    } catch (IOException e) {
      throw new CompletionException(e);
    }
  }

  /**
   * {@code m} with its DNSKEY records replaced by {@link PreparedDnskey}s (same records, same
   * order): the validator keeps the zone's key set from this message in its key cache, and each
   * key's public key is then made once for all the signatures checked with it while cached.
   */
  private Message withPreparedKeys(Message m) {
    for (int section = Section.ANSWER; section <= Section.ADDITIONAL; section++) {
      List<Record> records = m.getSection(section);
      boolean any = false;
      for (Record r : records) {
        any |= r instanceof DNSKEYRecord;
      }
      if (!any) {
        continue;
      }
      m.removeAllRecords(section);
      for (Record r : records) {
        m.addRecord(r instanceof DNSKEYRecord k ? keys.prepared(k) : r, section);
      }
    }
    return m;
  }

  @Override
  public void setPort(int port) {}

  @Override
  public void setTCP(boolean flag) {}

  @Override
  public void setIgnoreTruncation(boolean flag) {}

  @Override
  public void setEDNS(int version, int payloadSize, int flags, List<EDNSOption> options) {}

  @Override
  public void setTSIGKey(TSIG key) {}

  @Override
  public void setTimeout(Duration timeout) {
    this.timeout = timeout;
  }

  @Override
  public Duration getTimeout() {
    return timeout;
  }
}
