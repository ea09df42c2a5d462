package io.shoal.recursion;

import static io.shoal.recursion.ReplyRecords.dname;
import static io.shoal.recursion.ReplyRecords.proofs;
import static io.shoal.recursion.ReplyRecords.records;
import static io.shoal.recursion.ReplyRecords.signatures;
import static io.shoal.recursion.ReplyRecords.soaAbove;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DNAMERecord;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.NameTooLongException;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * One client question resolved iteratively: from the closest known zone cut down the referrals,
 * asking each zone's servers for one label more of the name at a time (RFC 9156, relaxed: the full
 * name after an NXDOMAIN, REFUSED, SERVFAIL or time-out for a shortened one), following CNAME and
 * DNAME links across zones, and looking up the addresses of name servers the parent gave no glue
 * for as resolutions of their own. Every step spends from the one {@link Budget}; no step waits on
 * a thread: each continues when its exchange completes.
 *
 * <p>Bailiwick: from a server asked as an authority of zone Z only records at or below Z are used
 * or kept; a referral must lead strictly below Z (an upward or sideways one marks the server lame);
 * glue is taken only for NS names inside Z.
 *
 * <p>The questions to one zone's servers are {@link Attempts}; what a reply holds is read by
 * {@link ReplyRecords}; the delegations and addresses learnt are made by {@link Delegations}.
 */
final class Resolution {

  /** The records a resolution found: rcode, the answer chain (with RRSIGs), and proofs and SOA. */
  record Result(int rcode, List<Record> answer, List<Record> authority) {}

  private final RecursiveUpstream r;
  private final Budget budget;
  private final Delegations delegations;

  Resolution(RecursiveUpstream r, Budget budget) {
    this.r = r;
    this.budget = budget;
    this.delegations = new Delegations(r);
  }

  /**
   * Resolves {@code qname}/{@code qtype}, from the kept RRsets when they hold it: always for DS and
   * DNSKEY (the validator's questions), for the address and NS lookups of the walk itself (depth
   * above 0), never for a client's own A/AAAA/NS question, which the answer cache and its prefetch
   * must see fetched afresh.
   */
  CompletableFuture<Result> resolve(Name qname, int qtype, int depth) {
    long now = System.nanoTime();
    Result denied = r.rrsets.nxdomain(qname, now);
    if (denied != null) {
      return CompletableFuture.completedFuture(denied);
    }
    if (qtype != Type.CNAME) {
      Result link = r.rrsets.get(qname, Type.CNAME, now);
      if (link != null) {
        // A link already followed for another type: only its target is asked about.
        budget.link();
        Name target = ((CNAMERecord) records(link.answer(), Type.CNAME).get(0)).getTarget();
        return resolve(target, qtype, depth).thenApply(rest -> {
          List<Record> answer = new ArrayList<>(link.answer());
          answer.addAll(rest.answer());
          return new Result(rest.rcode(), answer, rest.authority());
        });
      }
    }
    boolean keep = RRsets.kept(qtype);
    if (keep && (depth > 0 || qtype == Type.DS || qtype == Type.DNSKEY)) {
      Result kept = r.rrsets.get(qname, qtype, now);
      if (kept != null) {
        return CompletableFuture.completedFuture(kept);
      }
    }
    CompletableFuture<Result> walked = r.startCut(qname, qtype == Type.DS).thenCompose(cut ->
        walk(cut, qname, qtype, r.settings.qnameMinimisation(), cut.zone().labels() + 1, depth));
    return walked.thenApply(result -> {
      long at = System.nanoTime();
      r.rrsets.putNxdomain(qname, result, at);
      if (depth > 0 || (qtype != Type.A && qtype != Type.AAAA)) {
        // A client's own address question is never read back from here (the answer cache holds
        // it): keeping it would only push the walk's DS, DNSKEY and NS sets out sooner.
        r.rrsets.put(qname, qtype, result, at);
      }
      return result;
    });
  }

  /** Asks the servers of the root hints for the root's NS set (RFC 8109): their reply, with AA. */
  CompletableFuture<Message> prime(ZoneCut hints) {
    return ask(hints, Name.root, Type.NS, 0);
  }

  /**
   * Asks {@code cut}'s servers about {@code qname}, shortened to {@code labels} labels while
   * minimising, and goes on from what they say.
   */
  private CompletableFuture<Result> walk(ZoneCut cut, Name qname, int qtype, boolean minimise, int labels, int depth) {
    Name ask = qname;
    int askType = qtype;
    if (minimise && labels < qname.labels()) {
      ask = new Name(qname, qname.labels() - labels);
      askType = Type.NS;
      if (r.rrsets.nodata(ask, Type.NS, System.nanoTime())) {
        // Learnt before from this zone's servers: no cut there, the next label is asked at once.
        return walk(cut, qname, qtype, true, labels + 1, depth);
      }
    }
    boolean minimised = ask != qname;
    Name asked = ask;
    return ask(cut, asked, askType, depth).thenCompose(reply -> {
      Message m = reply;
      ZoneCut referral = delegations.referral(m, cut, asked);
      if (referral != null) {
        if (qtype == Type.DS && referral.zone().equals(qname)) {
          // The DS is the parent's: a parent server handing us to the child cannot answer it.
          throw RecursionLimit.unreachable("the servers of " + cut.zone() + " delegate instead of answering DS");
        }
        budget.referral();
        r.cuts.put(referral);
        return walk(referral, qname, qtype, minimise, referral.zone().labels() + 1, depth);
      }
      if (minimised) {
        int rcode = m.getRcode();
        if (rcode == Rcode.NOERROR && m.getHeader().getFlag(Flags.AA)) {
          List<Record> ns = records(m, Section.ANSWER, asked, Type.NS);
          if (!ns.isEmpty() && asked.subdomain(cut.zone())) {
            // A child zone served by the same servers: a cut all the same.
            ZoneCut child = delegations.cut(m, cut, asked.canonicalize(), ns, Section.ANSWER);
            budget.referral();
            r.cuts.put(child);
            return walk(child, qname, qtype, true, child.zone().labels() + 1, depth);
          }
          if (records(m, Section.ANSWER, asked, Type.CNAME).isEmpty()) {
            if (m.getSection(Section.ANSWER).isEmpty()) {
              r.rrsets.put(asked, Type.NS, new Result(Rcode.NOERROR, List.of(), proofs(m, cut.zone(), true)),
                  System.nanoTime());
            }
            return walk(cut, qname, qtype, true, labels + 1, depth); // an empty non-terminal, or a name with data
          }
        }
        if (rcode == Rcode.NXDOMAIN && m.getHeader().getFlag(Flags.AA) && !proofs(m, cut.zone(), false).isEmpty()) {
          // A signed denial of an ancestor denies the name too (RFC 8020); the validator checks
          // its proof, as Unbound's harden-below-nxdomain does, so no quirk can hide behind it.
          return CompletableFuture.completedFuture(
              new Result(Rcode.NXDOMAIN, List.of(), proofs(m, cut.zone(), true)));
        }
        // An unsigned NXDOMAIN for a shortened name (some servers get empty non-terminals wrong),
        // or a CNAME where a zone cut could be: ask for the full name.
        return walk(cut, qname, qtype, false, qname.labels(), depth);
      }
      return answer(cut, m, qname, qtype, depth);
    }).exceptionallyCompose(failure -> {
      Throwable cause = unwrap(failure);
      if (minimised && cause instanceof RecursionLimit rl && rl.limit == null) {
        // Nobody answered the shortened question: some servers refuse or drop them.
        return walk(cut, qname, qtype, false, qname.labels(), depth);
      }
      return CompletableFuture.failedFuture(cause);
    });
  }

  static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** What an authoritative reply says about {@code qname}: data (after CNAME/DNAME links), or a denial. */
  private CompletableFuture<Result> answer(ZoneCut cut, Message m, Name qname, int qtype, int depth) {
    List<Record> chain = new ArrayList<>();
    List<Record> proofs = new ArrayList<>(proofs(m, cut.zone(), false));
    Name cur = qname;
    while (true) {
      List<Record> data = records(m, Section.ANSWER, cur, qtype);
      if (!data.isEmpty()) {
        chain.addAll(data);
        chain.addAll(signatures(m, Section.ANSWER, cur, qtype));
        return CompletableFuture.completedFuture(new Result(Rcode.NOERROR, chain, proofs));
      }
      if (qtype != Type.CNAME) {
        List<Record> cname = records(m, Section.ANSWER, cur, Type.CNAME);
        if (!cname.isEmpty()) {
          budget.link();
          List<Record> link = new ArrayList<>();
          link.add(cname.get(0));
          link.addAll(signatures(m, Section.ANSWER, cur, Type.CNAME));
          r.rrsets.putCname(cur, link, System.nanoTime());
          chain.addAll(link);
          cur = ((CNAMERecord) cname.get(0)).getTarget();
          if (!cur.subdomain(cut.zone())) {
            break;
          }
          continue;
        }
      }
      DNAMERecord dname = dname(m, cut.zone(), cur);
      if (dname != null && qtype != Type.DNAME) {
        budget.link();
        chain.add(dname);
        chain.addAll(signatures(m, Section.ANSWER, dname.getName(), Type.DNAME));
        Name target;
        try {
          target = cur.fromDNAME(dname);
        } catch (NameTooLongException e) {
          return CompletableFuture.completedFuture(new Result(Rcode.YXDOMAIN, chain, proofs));
        }
        // The synthesized CNAME is unsigned (RFC 6672): made here rather than taken on trust.
        chain.add(new CNAMERecord(cur, dname.getDClass(), dname.getTTL(), target));
        cur = target;
        if (!cur.subdomain(cut.zone())) {
          break;
        }
        continue;
      }
      break;
    }
    int rcode = m.getRcode();
    boolean denial = rcode == Rcode.NXDOMAIN
        || (rcode == Rcode.NOERROR && !records(m, Section.AUTHORITY, null, Type.SOA).isEmpty());
    if (cur.equals(qname) || (cur.subdomain(cut.zone()) && denial && soaAbove(m, cur, cut.zone()))) {
      // No data for the name (or the chain's last in-zone target): the server's denial is final.
      List<Record> authority = new ArrayList<>(proofs(m, cut.zone(), true));
      return CompletableFuture.completedFuture(new Result(
          rcode == Rcode.NXDOMAIN ? Rcode.NXDOMAIN : Rcode.NOERROR, chain, authority));
    }
    // The chain leaves what this server speaks for: resolve the target as any other name.
    Name next = cur;
    return resolve(next, qtype, depth).thenApply(rest -> {
      List<Record> answer = new ArrayList<>(chain);
      answer.addAll(rest.answer());
      List<Record> authority = new ArrayList<>(proofs);
      authority.addAll(rest.authority());
      return new Result(rest.rcode(), answer, authority);
    });
  }

  /** Asks {@code cut}'s servers, one address after another, until one gives a usable reply. */
  private CompletableFuture<Message> ask(ZoneCut cut, Name name, int type, int depth) {
    try {
      return new Attempts(r, budget, this, cut, name, type, depth).next();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * The addresses of name server {@code host} (A, or AAAA when it has no A), resolved with this
   * resolution's budget and kept in the zone-cut cache; an empty list when it has none reachable.
   */
  CompletableFuture<List<InetSocketAddress>> lookUp(Name host, int depth) {
    return resolve(host, Type.A, depth).thenCompose(a -> {
      List<InetSocketAddress> found = delegations.hostAddresses(a, host);
      if (!found.isEmpty() || a.rcode() != Rcode.NOERROR) {
        return CompletableFuture.completedFuture(found); // NXDOMAIN: no AAAA either
      }
      return resolve(host, Type.AAAA, depth).thenApply(aaaa -> delegations.hostAddresses(aaaa, host));
    }).exceptionallyCompose(failure -> {
      Throwable cause = unwrap(failure);
      if (cause instanceof RecursionLimit rl && rl.limit != null) {
        return CompletableFuture.failedFuture(cause);
      }
      return CompletableFuture.completedFuture(List.of());
    }).whenComplete((found, failure) -> budget.endLookup(host));
  }
}
