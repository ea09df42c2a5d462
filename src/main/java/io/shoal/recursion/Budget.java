package io.shoal.recursion;

import io.shoal.config.RecursionSettings;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.xbill.DNS.Name;

/**
 * What one client query may still spend: authority queries, referrals, CNAME links, nested
 * name-server look-ups and NS names resolved per delegation, shared by every sub-resolution it
 * starts. Spent from the threads completing its exchanges one after another, never at once,
 * but synchronized so a sub-resolution running beside another cannot overspend.
 */
final class Budget {
  /** Limit labels of shoal_recursion_limit_hits_total. */
  static final String QUERIES = "queries";
  static final String REFERRALS = "referrals";
  static final String CNAME_LINKS = "cname_links";
  static final String NS_NAMES = "ns_names";
  static final String GLUELESS_DEPTH = "glueless_depth";
  static final String DEADLINE = "deadline";

  private final RecursionSettings limits;
  final long deadlineNanos;
  private int sent;
  private int referrals;
  private int links;
  private final Map<Name, Integer> nsNamesResolved = new HashMap<>();
  /** NS names whose addresses are being looked up: asking for one again is a dependency loop. */
  private final Set<Name> lookingUp = new HashSet<>();

  Budget(RecursionSettings limits, long startNanos) {
    this.limits = limits;
    this.deadlineNanos = startNanos + limits.deadline().toNanos();
  }

  synchronized void send() {
    if (++sent > limits.maxQueries()) {
      throw RecursionLimit.hit(QUERIES, "more than " + limits.maxQueries() + " authority queries for one question");
    }
    if (System.nanoTime() - deadlineNanos >= 0) {
      throw RecursionLimit.hit(DEADLINE, "resolution took longer than " + limits.deadline().toMillis() + " ms");
    }
  }

  synchronized int sent() {
    return sent;
  }

  synchronized void referral() {
    if (++referrals > limits.maxReferrals()) {
      throw RecursionLimit.hit(REFERRALS, "more than " + limits.maxReferrals() + " referrals for one question");
    }
  }

  synchronized void link() {
    if (++links > limits.maxCnameLinks()) {
      throw RecursionLimit.hit(CNAME_LINKS, "more than " + limits.maxCnameLinks() + " CNAME/DNAME links");
    }
  }

  /** Whether one more NS name of {@code zone}'s delegation may be resolved; counts it if so. */
  synchronized boolean nsName(Name zone) {
    int n = nsNamesResolved.getOrDefault(zone, 0);
    if (n >= limits.maxNsNames()) {
      return false;
    }
    nsNamesResolved.put(zone, n + 1);
    return true;
  }

  /** Starts looking up {@code host}'s addresses; false when that look-up is already under way (a loop). */
  synchronized boolean startLookup(Name host) {
    return lookingUp.add(host);
  }

  synchronized void endLookup(Name host) {
    lookingUp.remove(host);
  }

  void depth(int depth) {
    if (depth > limits.maxGluelessDepth()) {
      throw RecursionLimit.hit(GLUELESS_DEPTH, "name-server look-ups nested deeper than " + limits.maxGluelessDepth());
    }
  }
}
