package io.shoal.dnssec;

import io.shoal.metrics.DnssecMetrics;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Whether an upstream group can do DNSSEC at all: asked for the trust anchor's DNSKEY (the root's
 * by default) with DO and CD, it must answer NOERROR with the DNSKEY RRset and an RRSIG over it.
 * One that strips RRSIGs, refuses DNSKEY queries or ignores DO turns every validated name into a
 * SERVFAIL (EDE 9 or 10, as Unbound answers), and without this the log would not say why. The
 * check runs at start (or with the first validated query, if that comes first), through the
 * validator's head resolver, so a validation that needs the anchor's keys within a second of its
 * answer joins it instead of asking again; and again, at most every {@link #RECHECK_NANOS}, whenever a validation ends with missing keys or
 * signatures or cannot finish. A change either way is logged once, with the remedy, and shown in
 * shoal_dnssec_upstream_capable{upstream}. An upstream that does not answer at all is not judged:
 * that is the upstream's timeout, counted where upstream failures are.
 */
final class UpstreamDnssecCheck {
  static final long RECHECK_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final UpstreamResolver head;
  private final Name anchor;
  private final String group;
  private final DnssecMetrics metrics;
  private final Logger log;
  private final Executor executor;
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicLong lastRun = new AtomicLong();
  /** Null while unknown; otherwise null reason = capable, a reason = not capable. */
  private final AtomicReference<Verdict> verdict = new AtomicReference<>();

  /** What the last check found: {@code problem} is null when the upstream hands over DNSSEC records. */
  record Verdict(String problem) {}

  UpstreamDnssecCheck(UpstreamResolver head, Name anchor, String group, DnssecMetrics metrics, Logger log,
      Executor executor) {
    this.head = head;
    this.anchor = anchor;
    this.group = group;
    this.metrics = metrics;
    this.log = log;
    this.executor = executor;
    // The first suspicion may check at once.
    lastRun.set(System.nanoTime() - RECHECK_NANOS);
  }

  /** A validated query is about to be asked: the first one after start checks the upstream. */
  void firstUse() {
    if (!started.get() && started.compareAndSet(false, true)) {
      run();
    }
  }

  /** A validation found keys or signatures missing, or could not finish: check again if it is time. */
  void suspect() {
    long now = System.nanoTime();
    long last = lastRun.get();
    if (now - last >= RECHECK_NANOS && lastRun.compareAndSet(last, now)) {
      run();
    }
  }

  /** Why the upstream group cannot do DNSSEC, or null (it can, or it has not been checked yet). */
  String problem() {
    Verdict v = verdict.get();
    return v == null ? null : v.problem();
  }

  private void run() {
    if (!running.compareAndSet(false, true)) {
      return;
    }
    lastRun.set(System.nanoTime());
    Message ask = Message.newQuery(Record.newRecord(anchor, Type.DNSKEY, DClass.IN));
    head.sendAsync(ask, executor).whenComplete((reply, failure) -> {
      try {
        if (reply != null) {
          judged(problemIn(reply));
        }
      } catch (RuntimeException e) {
        log.debug("checking DNSSEC support of upstream group {}", group, e);
      } finally {
        running.set(false);
      }
    });
  }

  /** What is wrong with {@code reply} to the DNSKEY query with DO, or null. */
  String problemIn(Message reply) {
    int rcode = reply.getRcode();
    if (rcode != Rcode.NOERROR) {
      return "it answers the DNSKEY query for " + anchor + " with " + Rcode.string(rcode);
    }
    boolean keys = false;
    boolean signed = false;
    for (Record r : reply.getSection(Section.ANSWER)) {
      keys |= r.getType() == Type.DNSKEY && r.getName().equals(anchor);
      signed |= r instanceof RRSIGRecord sig && sig.getTypeCovered() == Type.DNSKEY && sig.getName().equals(anchor);
    }
    if (!keys) {
      return "it answers the DNSKEY query for " + anchor + " without DNSKEY records";
    }
    if (!signed) {
      return "it strips RRSIG records (the DNSKEY RRset of " + anchor + " came without its signature, though asked with DO)";
    }
    return null;
  }

  /** The log line and readiness detail for upstream group {@code group} that cannot do DNSSEC: why, and the remedy. */
  static String explained(String group, String problem) {
    return "upstream group '" + group + "' cannot do DNSSEC: " + problem + ". Every answer validated through it is "
        + "SERVFAIL (EDE 9 DNSKEY Missing or 10 RRSIGs Missing) until it can. Remedy: point upstreams." + group
        + ".servers at a resolver that passes DNSSEC records (DO bit), or set dnssec.validation = off";
  }

  private void judged(String problem) {
    Verdict was = verdict.getAndSet(new Verdict(problem));
    metrics.upstreamCapable(group, problem == null);
    if (problem != null && (was == null || was.problem() == null)) {
      log.warn(explained(group, problem));
    } else if (problem == null && was != null && was.problem() != null) {
      log.info("upstream group '{}' hands over DNSSEC records again (DNSKEY of {} with its RRSIG)", group, anchor);
    }
  }
}
