package io.shoal.dnssec;

import io.shoal.config.DnssecSettings;
import io.shoal.metrics.DnssecMetrics;
import io.shoal.upstream.Upstream;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.DClass;
import org.xbill.DNS.DNSInput;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;
import org.xbill.DNS.dnssec.ValidatingResolver;

/**
 * A profile's upstream with DNSSEC validation between the exchange and the cache fill (dnsjava's
 * {@link ValidatingResolver}, with signatures checked by the provider {@link SignatureKeys} chose,
 * on keys prepared once per DNSKEY). A secure answer gets AD, a bogus one becomes a
 * SERVFAIL whose extended DNS error says why (or, when permissive, the answer without AD), and
 * what is cached is what comes out of here, so a hit costs what a hit costs and carries the AD
 * bit the fill stored. Clients that set CD, and names under a negative trust anchor, get the
 * upstream's answer unvalidated and without AD.
 *
 * <p>DNSKEY and DS records are fetched through {@link UpstreamResolver}, coalesced, and kept
 * validated in the validator's own key cache for their TTL (at most 15 minutes): once per TTL per
 * node, not through the answer cache. The answer cache holds answers as clients see them (shaped
 * by their DO bit, keyed per profile); the validator needs the keys as validated RRsets at every
 * step of the chain, and dnsjava's validator asks its head resolver, not a cache of ours.
 */
public final class ValidatingUpstream implements Upstream {
  private static final Logger log = LoggerFactory.getLogger(ValidatingUpstream.class);
  /** EXTRA-TEXT beyond this is cut: it is for a person reading dig output. */
  private static final int MAX_TEXT = 160;

  private final Upstream inner;
  private final UpstreamResolver head;
  private final ValidatingResolver validator;
  private final ValidatorLimits limits;
  private final boolean permissive;
  private final List<Name> negativeTrustAnchors;
  private final DnssecMetrics metrics;
  private final Executor executor;
  private final ClockSkewLog skew;
  private final Clock clock;
  /** The upstream group's name: whose kept denials these are. */
  private final String group;
  /** The node's kept denials; null when aggressive use of them is off. */
  private final DenialProofs proofs;
  /** Whether the upstream hands over DNSSEC records at all. */
  private final UpstreamDnssecCheck capability;
  /** The group's one deadline per query: no client waits longer, however long validating takes. */
  private final Duration deadline;

  ValidatingUpstream(DnssecSettings settings, Upstream inner, Clock clock, DnssecMetrics metrics, Executor executor,
      String group, DenialProofs proofs, Duration deadline) {
    this.inner = inner;
    this.deadline = deadline;
    SignatureKeys keys = SignatureKeys.choose(settings.cryptoProvider(), settings.rememberedSignatures());
    keys.providers().forEach((alg, provider) -> metrics.signatureProvider(provider, SignatureKeys.algorithmLabel(alg)));
    keys.countIn((alg, provider, result) -> metrics.signatureCheck(SignatureKeys.algorithmLabel(alg), provider, result));
    this.head = new UpstreamResolver(inner, executor, keys);
    this.validator = new ValidatingResolver(head, clock);
    this.limits = ValidatorLimits.apply(settings, validator);
    String anchors = settings.trustAnchors().stream().map(Record::toString).collect(Collectors.joining("\n"));
    try {
      validator.loadTrustAnchors(new ByteArrayInputStream(anchors.getBytes(StandardCharsets.US_ASCII)));
    } catch (IOException e) {
      throw new UncheckedIOException("trust anchors checked at start no longer load", e);
    }
    this.permissive = settings.mode() == DnssecSettings.Mode.PERMISSIVE;
    this.negativeTrustAnchors = settings.negativeTrustAnchors();
    this.metrics = metrics;
    this.executor = executor;
    this.clock = clock;
    this.skew = new ClockSkewLog(log);
    this.group = group;
    this.proofs = settings.aggressiveNsec() ? proofs : null;
    Name anchor = settings.trustAnchors().stream().map(Record::getName).min((a, b) -> a.labels() - b.labels())
        .orElse(Name.root);
    this.capability = new UpstreamDnssecCheck(head, anchor, group, metrics, log, executor);
  }

  /**
   * {@code upstream} validated as {@code settings} say ({@code upstream} itself when validation
   * is off), checking signature times against {@code clock} (epoch milliseconds, shoal's clock).
   * Secure denials of upstream group {@code group} are kept in {@code proofs} and answer the
   * misses they cover when {@code settings} turn aggressive use on (RFC 8198). A query whose
   * answer and validation together take longer than {@code deadline} (the group's) fails then.
   */
  public static Upstream wrap(DnssecSettings settings, Upstream upstream, LongSupplier clock, DnssecMetrics metrics,
      String group, DenialProofs proofs, Duration deadline) {
    if (settings.mode() == DnssecSettings.Mode.OFF) {
      return upstream;
    }
    // Signature checks run on validation's own threads, off the sockets' threads and the actors'.
    return new ValidatingUpstream(settings, upstream, new EpochClock(clock), metrics, ValidationThreads.shared(),
        group, proofs, deadline);
  }

  /**
   * Where an upstream that resolves by itself runs the steps between its exchanges, when
   * {@code settings} have its answers validated next: on the validation threads (its last step
   * then hands the answer to the validator on the same thread, one hand-off fewer per answer);
   * else on the JVM's common pool.
   */
  public static Executor upstreamSteps(DnssecSettings settings) {
    return settings.mode() == DnssecSettings.Mode.OFF ? ForkJoinPool.commonPool() : ValidationThreads.forUpstreamSteps();
  }

  /**
   * NXDOMAIN or NODATA for {@code query} from a kept secure denial (RFC 8198), or null: never for
   * a client that set CD (it asked for what the upstream says), nor under a negative trust anchor,
   * nor when aggressive use is off or validation permissive.
   */
  @Override
  public Denial denial(DnsQuery query, long nowMillis) {
    if (proofs == null || query.checkingDisabled() || query.qclass() != DClass.IN || !proofs.holdsAny(group)) {
      return null;
    }
    Name name;
    try {
      name = questionName(query);
    } catch (IOException e) {
      return null;
    }
    if (underNegativeAnchor(name)) {
      return null;
    }
    DenialCache.Synthesized s = proofs.synthesize(group, name, query.qtype(), query.dnssecOk(), nowMillis);
    if (s == null) {
      return null;
    }
    metrics.synthesized(s.nxdomain() ? DnssecMetrics.NXDOMAIN : DnssecMetrics.NODATA);
    return new Denial(s.wire(), s.expiresAtMillis());
  }

  private static Name questionName(DnsQuery query) throws IOException {
    DNSInput in = new DNSInput(query.packet());
    in.jump(12);
    return new Name(in);
  }

  @Override
  public CompletionStage<Outcome> forward(DnsQuery query) {
    Name name;
    try {
      name = questionName(query);
    } catch (IOException e) {
      return CompletableFuture.completedFuture(new Failed("question name: " + e.getMessage()));
    }
    if (query.checkingDisabled() || underNegativeAnchor(name)) {
      return inner.forward(query).thenApply(ValidatingUpstream::withoutAd);
    }
    UpstreamResolver.Question question = new UpstreamResolver.Question(name, query.qtype(), query.qclass());
    UpstreamResolver.Fetch fetch = head.pin(question);
    capability.firstUse();
    CompletionStage<Outcome> result = fetch.outcome.thenCompose(raw -> {
      if (!(raw instanceof Answered answered)) {
        return CompletableFuture.completedFuture(raw);
      }
      int rcode = answered.wire().length >= 12 ? answered.wire()[3] & 0x0F : Rcode.SERVFAIL;
      if (rcode != Rcode.NOERROR && rcode != Rcode.NXDOMAIN) {
        // The upstream's own failure: the worker's SERVFAIL and REFUSED handling, not a verdict.
        return CompletableFuture.completedFuture(withoutAd(raw));
      }
      try {
        Message ask = Message.newQuery(Record.newRecord(name, query.qtype(), query.qclass()));
        // Its steps wait in its zone's lane, behind the validations there that began before it.
        Executor steps = executor instanceof ValidationThreads lanes ? lanes.validationOf(name) : executor;
        return validator.sendAsync(ask, steps)
            .thenCompose(validated -> KeysetWindow.refine(validated, head, clock, steps))
            .handle((validated, failure) -> verdict(query, name, answered, validated, failure));
      } catch (RuntimeException e) {
        // The stage must never fail (Upstream's contract), whatever dnsjava makes of the question.
        return CompletableFuture.completedFuture(verdict(query, name, answered, null, e));
      }
    });
    result.whenComplete((outcome, failure) -> head.unpin(question, fetch));
    return withinDeadline(result, name);
  }

  /**
   * {@code validation}'s outcome, or a failure at the group's deadline if it has none by then (its
   * key fetches each have a deadline of their own, so a chain of slow ones could take several).
   * The validation goes on: the keys it fetches are kept for the next query.
   */
  private CompletionStage<Outcome> withinDeadline(CompletionStage<Outcome> validation, Name name) {
    CompletableFuture<Outcome> bounded = new CompletableFuture<>();
    validation.whenComplete((outcome, failure) -> bounded.complete(
        outcome != null ? outcome : new Failed("DNSSEC validation of " + name + ": " + failure)));
    if (!bounded.isDone()) {
      bounded.completeOnTimeout(new Failed("DNSSEC validation of " + name + " did not finish within the deadline of "
          + deadline.toMillis() + " ms"), deadline.toNanos(), TimeUnit.NANOSECONDS);
    }
    return bounded;
  }

  /** Checks now each of {@code upstreams} that validates ({@link #checkUpstream}). */
  public static void checkUpstreams(List<Upstream> upstreams) {
    for (Upstream u : upstreams) {
      if (u instanceof ValidatingUpstream v) {
        v.checkUpstream();
      }
    }
  }

  /** Why each of {@code upstreams} that validates cannot do DNSSEC ({@link #dnssecProblem}); empty when none. */
  public static List<String> dnssecProblems(List<Upstream> upstreams) {
    return upstreams.stream().filter(ValidatingUpstream.class::isInstance)
        .map(u -> ((ValidatingUpstream) u).dnssecProblem()).filter(java.util.Objects::nonNull).toList();
  }

  /**
   * Asks the upstream group, now, whether it hands over DNSSEC records (the trust anchor's DNSKEY
   * with DO), unless the first validated query did already: at start, so an upstream that cannot
   * is named before the first client meets it.
   */
  public void checkUpstream() {
    capability.firstUse();
  }

  /**
   * Why this upstream group cannot do DNSSEC, with the remedy, for the readiness page; null when it
   * can or has not been checked yet.
   */
  public String dnssecProblem() {
    String problem = capability.problem();
    return problem == null ? null : UpstreamDnssecCheck.explained(group, problem);
  }

  private boolean underNegativeAnchor(Name name) {
    for (Name nta : negativeTrustAnchors) {
      if (name.subdomain(nta)) {
        return true;
      }
    }
    return false;
  }

  /** What the cache gets for {@code query}, given what the validator made of the upstream's answer. */
  private Outcome verdict(DnsQuery query, Name name, Answered raw, Message validated, Throwable failure) {
    try {
      if (failure != null) {
        capability.suspect();
        metrics.answer(DnssecMetrics.INDETERMINATE);
        log.debug("DNSSEC validation of {} could not finish", name, failure);
        return new Failed("DNSSEC validation of " + name + " could not finish: " + failure.getMessage());
      }
      // Taken out first: the reason record must never reach a client.
      String reason = ValidatorLimits.reason(validated);
      if (validated.getRcode() == Rcode.SERVFAIL) {
        // The upstream said NOERROR or NXDOMAIN (see forward): a SERVFAIL now is the validator's.
        ExtendedErrorCodeOption why = extendedError(validated);
        int code = why == null ? ExtendedErrorCodeOption.DNSSEC_BOGUS : why.getErrorCode();
        String text = why == null || why.getText() == null ? "" : why.getText();
        Message upstream = new Message(raw.wire());
        if (limits.nsec3IterationsTooHigh(text, upstream)) {
          // dnsjava calls a NODATA proved only by such records bogus; RFC 9276 says insecure.
          return insecureForIterations(upstream, query, raw.server());
        }
        String limit = limits.bogusLimit(text, upstream);
        if (limit != null) {
          metrics.limitHit(limit);
        }
        code = DsMismatch.refine(code, text);
        if (code == ExtendedErrorCodeOption.DNSKEY_MISSING || code == ExtendedErrorCodeOption.RRSIGS_MISSING) {
          capability.suspect();
        }
        if (code == ExtendedErrorCodeOption.DNSSEC_BOGUS) {
          code = SignatureWindow.refine(raw.wire(), clock.instant(), code);
        }
        metrics.answer(DnssecMetrics.BOGUS);
        metrics.failure(reasonLabel(code));
        if (code == ExtendedErrorCodeOption.SIGNATURE_EXPIRED || code == ExtendedErrorCodeOption.SIGNATURE_NOT_YET_VALID
            || code == ExtendedErrorCodeOption.SIGNATURE_EXPIRED_BEFORE_VALID) {
          skew.outsideValidity(raw.wire(), name, clock.instant());
        }
        log.debug("bogus answer for {}: {} {}", name, ExtendedErrorCodeOption.text(code), text);
        if (permissive) {
          Message unvalidated = new Message(raw.wire());
          unvalidated.getHeader().unsetFlag(Flags.AD);
          return new Answered(clientWire(unvalidated, query), raw.server());
        }
        return new Answered(query.servfailToCache(), raw.server(), new ExtendedError(code, ascii(text)));
      }
      boolean secure = validated.getHeader().getFlag(Flags.AD);
      if (!secure && limits.nsec3IterationsTooHigh(reason, new Message(raw.wire()))) {
        metrics.limitHit(DnssecMetrics.NSEC3_ITERATIONS);
      }
      metrics.answer(secure ? DnssecMetrics.SECURE : DnssecMetrics.INSECURE);
      if (secure && proofs != null && denial(validated)) {
        // Before the clientWire below strips the proof for a client without DO.
        proofs.learned(group, validated, clock.millis());
      }
      return new Answered(clientWire(validated, query), raw.server());
    } catch (IOException | RuntimeException e) {
      metrics.answer(DnssecMetrics.INDETERMINATE);
      return new Failed("DNSSEC validation of " + name + ": " + e);
    }
  }

  /** {@code upstream}'s answer as an insecure one: its NSEC3 records have too many iterations to be checked. */
  private Outcome insecureForIterations(Message upstream, DnsQuery query, String server) {
    metrics.limitHit(DnssecMetrics.NSEC3_ITERATIONS);
    metrics.answer(DnssecMetrics.INSECURE);
    upstream.getHeader().unsetFlag(Flags.AD);
    return new Answered(clientWire(upstream, query), server);
  }

  /** NXDOMAIN (at the end of a CNAME chain too: the proof is the target's), or NODATA: no answer records. */
  private static boolean denial(Message m) {
    return m.getRcode() == Rcode.NXDOMAIN || (m.getRcode() == Rcode.NOERROR && m.getSection(Section.ANSWER).isEmpty());
  }

  static ExtendedErrorCodeOption extendedError(Message m) {
    OPTRecord opt = m.getOPT();
    if (opt == null) {
      return null;
    }
    for (EDNSOption o : opt.getOptions()) {
      if (o instanceof ExtendedErrorCodeOption ede) {
        return ede;
      }
    }
    return null;
  }

  /** The reason label of shoal_dnssec_validation_failures_total: the EDE's name in snake case. */
  static String reasonLabel(int code) {
    String text = ExtendedErrorCodeOption.text(code);
    return text == null ? "ede_" + code : text.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
  }

  /** Printable ASCII, short: EXTRA-TEXT is for people. */
  private static String ascii(String s) {
    String clean = s.replaceAll("[^\\x20-\\x7E]", "?");
    return clean.length() > MAX_TEXT ? clean.substring(0, MAX_TEXT) : clean;
  }

  /**
   * {@code m} as the wire the cache stores for {@code query}: AD only when secure (dnsjava sets it
   * then), no OPT (EDNS is per hop), and without RRSIG, NSEC and NSEC3 records for a client that
   * did not set DO unless it asked for that type (the DO bit is in the cache key, so the two
   * kinds of answer are cached apart).
   */
  private static byte[] clientWire(Message m, DnsQuery query) {
    OPTRecord opt = m.getOPT();
    if (opt != null) {
      m.removeRecord(opt, Section.ADDITIONAL);
    }
    if (!query.dnssecOk()) {
      for (int section = Section.ANSWER; section <= Section.ADDITIONAL; section++) {
        for (Record r : List.copyOf(m.getSection(section))) {
          int type = r.getType();
          if ((type == Type.RRSIG || type == Type.NSEC || type == Type.NSEC3) && type != query.qtype()) {
            m.removeRecord(r, section);
          }
        }
      }
    }
    return m.toWire();
  }

  /** An unvalidated answer says nothing of its security: AD cleared, whatever the upstream said. */
  private static Outcome withoutAd(Outcome outcome) {
    if (outcome instanceof Answered a && a.wire().length >= 12 && (a.wire()[3] & 0x20) != 0) {
      byte[] wire = a.wire().clone();
      wire[3] &= ~0x20;
      return new Answered(wire, a.server(), a.why());
    }
    return outcome;
  }

  /** A {@link Clock} reading shoal's epoch-millisecond clock (which tests move by hand). */
  private static final class EpochClock extends Clock {
    private final LongSupplier millis;

    EpochClock(LongSupplier millis) {
      this.millis = millis;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis.getAsLong());
    }
  }
}
