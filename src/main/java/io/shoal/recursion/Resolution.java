package io.shoal.recursion;

import io.shoal.upstream.UpstreamException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DNAMERecord;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.NameTooLongException;
import org.xbill.DNS.RRSIGRecord;
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
 */
final class Resolution {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Resolution.class);

  /** The records a resolution found: rcode, the answer chain (with RRSIGs), and proofs and SOA. */
  record Result(int rcode, List<Record> answer, List<Record> authority) {}

  /** Longest a learnt delegation or address is kept, whatever its TTL. */
  private static final long MAX_TTL_SECONDS = 86_400;
  /** Shortest: a TTL of 0 would make every question walk again from the root. */
  private static final long MIN_TTL_SECONDS = 5;
  /** Rounds over a zone's addresses when they time out: the first, and two more. */
  private static final int MAX_ROUNDS = 3;

  private final RecursiveUpstream r;
  private final Budget budget;

  Resolution(RecursiveUpstream r, Budget budget) {
    this.r = r;
    this.budget = budget;
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
      r.rrsets.put(qname, qtype, result, at);
      return result;
    });
  }

  private static List<Record> records(List<Record> in, int type) {
    List<Record> out = new ArrayList<>();
    for (Record rec : in) {
      if (rec.getType() == type) {
        out.add(rec);
      }
    }
    return out;
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
      ZoneCut referral = referral(m, cut, asked);
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
            ZoneCut child = cut(m, cut, asked.canonicalize(), ns, Section.ANSWER);
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

  private static boolean soaAbove(Message m, Name name, Name zone) {
    for (Record soa : records(m, Section.AUTHORITY, null, Type.SOA)) {
      if (name.subdomain(soa.getName()) && soa.getName().subdomain(zone)) {
        return true;
      }
    }
    return false;
  }

  private static DNAMERecord dname(Message m, Name zone, Name name) {
    for (Record rec : m.getSection(Section.ANSWER)) {
      if (rec instanceof DNAMERecord d && name.subdomain(d.getName()) && !name.equals(d.getName())
          && d.getName().subdomain(zone)) {
        return d;
      }
    }
    return null;
  }

  /**
   * The records of {@code section} owned by {@code owner} (any owner when null) of {@code type}
   * ({@link Type#ANY}: every type but RRSIG).
   */
  static List<Record> records(Message m, int section, Name owner, int type) {
    List<Record> out = new ArrayList<>();
    for (Record rec : m.getSection(section)) {
      boolean typeMatches = type == Type.ANY ? rec.getType() != Type.RRSIG : rec.getType() == type;
      if (typeMatches && (owner == null || rec.getName().equals(owner))) {
        out.add(rec);
      }
    }
    return out;
  }

  private static List<Record> signatures(Message m, int section, Name owner, int covered) {
    List<Record> out = new ArrayList<>();
    for (Record rec : m.getSection(section)) {
      if (rec instanceof RRSIGRecord sig && sig.getName().equals(owner)
          && (covered == Type.ANY || sig.getTypeCovered() == covered)) {
        out.add(rec);
      }
    }
    return out;
  }

  /**
   * The authority records a validator needs, inside {@code zone}: NSEC, NSEC3 and their RRSIGs
   * (wildcard and denial proofs), and with {@code soa} the SOA and its RRSIGs.
   */
  private static List<Record> proofs(Message m, Name zone, boolean soa) {
    List<Record> out = new ArrayList<>();
    for (Record rec : m.getSection(Section.AUTHORITY)) {
      if (!rec.getName().subdomain(zone)) {
        continue;
      }
      int t = rec instanceof RRSIGRecord sig ? sig.getTypeCovered() : rec.getType();
      if (t == Type.NSEC || t == Type.NSEC3 || (soa && t == Type.SOA)) {
        out.add(rec);
      }
    }
    return out;
  }

  /**
   * The delegation in {@code m}, when it is a referral downward from {@code cut} towards {@code
   * name}; null when it is none (an answer or a denial). An upward or sideways one never gets
   * here: {@link #lameReason} turned it away.
   */
  private ZoneCut referral(Message m, ZoneCut cut, Name name) {
    if (m.getRcode() != Rcode.NOERROR || !m.getSection(Section.ANSWER).isEmpty()
        || !records(m, Section.AUTHORITY, null, Type.SOA).isEmpty()) {
      return null;
    }
    List<Record> ns = records(m, Section.AUTHORITY, null, Type.NS);
    if (ns.isEmpty()) {
      return null;
    }
    // Lower case: the owner often points at our 0x20-mixed question name.
    Name zone = ns.get(0).getName().canonicalize();
    if (!isBelow(zone, cut.zone()) || !name.subdomain(zone)) {
      return null;
    }
    return cut(m, cut, zone, records(m, Section.AUTHORITY, zone, Type.NS), Section.AUTHORITY);
  }

  private static boolean isBelow(Name child, Name zone) {
    return child.subdomain(zone) && !child.equals(zone);
  }

  /** The delegation of {@code zone} named by {@code ns}, with the glue {@code from}'s zone may give. */
  private ZoneCut cut(Message m, ZoneCut from, Name zone, List<Record> ns, int nsSection) {
    List<Name> names = new ArrayList<>();
    long ttl = MAX_TTL_SECONDS;
    for (Record rec : ns) {
      Name target = ((NSRecord) rec).getTarget().canonicalize();
      if (!names.contains(target)) {
        names.add(target);
      }
      ttl = Math.min(ttl, rec.getTTL());
    }
    Map<Name, List<InetSocketAddress>> glue = new LinkedHashMap<>();
    for (Record rec : m.getSection(Section.ADDITIONAL)) {
      if ((rec instanceof ARecord || rec instanceof AAAARecord) && names.contains(rec.getName().canonicalize())
          && rec.getName().subdomain(from.zone())) {
        InetSocketAddress a = r.authority(rec instanceof ARecord ar ? ar.getAddress() : ((AAAARecord) rec).getAddress());
        if (a != null) {
          glue.computeIfAbsent(rec.getName().canonicalize(), k -> new ArrayList<>()).add(a);
        }
      }
    }
    boolean signed = !records(m, nsSection, zone, Type.DS).isEmpty();
    long now = System.nanoTime();
    return new ZoneCut(zone, List.copyOf(names), Map.copyOf(glue), signed,
        now + TimeUnit.SECONDS.toNanos(Math.max(MIN_TTL_SECONDS, ttl)), false);
  }

  /**
   * Why {@code m} from an authority of {@code cut} for {@code name} shows a lame or broken server,
   * or null when it is usable: an answer or denial with AA, or a referral downward.
   */
  static String lameReason(Message m, ZoneCut cut, Name name) {
    int rcode = m.getRcode();
    if (rcode == Rcode.REFUSED) {
      return "refused";
    }
    if (rcode == Rcode.SERVFAIL) {
      return "servfail";
    }
    if (rcode != Rcode.NOERROR && rcode != Rcode.NXDOMAIN) {
      return "rcode";
    }
    if (m.getHeader().getFlag(Flags.AA)) {
      return null;
    }
    List<Record> ns = records(m, Section.AUTHORITY, null, Type.NS);
    if (rcode == Rcode.NOERROR && m.getSection(Section.ANSWER).isEmpty() && !ns.isEmpty()) {
      Name zone = ns.get(0).getName();
      return isBelow(zone, cut.zone()) && name.subdomain(zone) ? null : "upward_referral";
    }
    return "not_authoritative";
  }

  /** Asks {@code cut}'s servers, one address after another, until one gives a usable reply. */
  private CompletableFuture<Message> ask(ZoneCut cut, Name name, int type, int depth) {
    try {
      return new Attempts(cut, name, type, depth).next();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The addresses tried so far for one question to one zone, and the NS names looked up for it. */
  private final class Attempts {
    final ZoneCut cut;
    final Name name;
    final int type;
    final int depth;
    final Set<InetSocketAddress> tried = new HashSet<>();
    final Set<Name> lookedUp = new HashSet<>();
    /** Addresses that timed out: asked once more, with a longer wait, before the zone is given up. */
    final Set<InetSocketAddress> timedOut = new HashSet<>();
    int rounds;
    String lastFailure = "no address";

    Attempts(ZoneCut cut, Name name, int type, int depth) {
      this.cut = cut;
      this.name = name;
      this.type = type;
      this.depth = depth;
    }

    CompletableFuture<Message> next() {
      long now = System.nanoTime();
      List<InetSocketAddress> candidates = new ArrayList<>();
      for (Name ns : cut.nsNames()) {
        for (InetSocketAddress a : addresses(ns, now)) {
          if (!tried.contains(a) && !candidates.contains(a)) {
            candidates.add(a);
          }
        }
      }
      if (!candidates.isEmpty()) {
        InetSocketAddress a = r.servers.choose(candidates, cut.zone().toString(), now);
        tried.add(a);
        return send(a);
      }
      for (Name ns : cut.nsNames()) {
        if (lookedUp.contains(ns) || cut.glue().containsKey(ns) || r.cuts.host(ns, now) != null) {
          continue;
        }
        if (ns.subdomain(cut.zone())) {
          continue; // inside the zone, without glue: only the zone's own servers could say
        }
        lookedUp.add(ns);
        if (!budget.nsName(cut.zone())) {
          throw RecursionLimit.hit(Budget.NS_NAMES, "more than " + r.settings.maxNsNames()
              + " name servers of " + cut.zone() + " to look up");
        }
        budget.depth(depth + 1);
        if (!budget.startLookup(ns)) {
          continue; // already being looked up further up this resolution: a dependency loop
        }
        return lookUp(ns, depth + 1).thenCompose(found -> next());
      }
      if (!timedOut.isEmpty() && ++rounds < MAX_ROUNDS) {
        // A lost datagram is not a dead server: the time-outs are asked again (each waits twice
        // as long now, see AuthorityServers#timeoutNanos), within the budget and deadline.
        tried.removeAll(timedOut);
        timedOut.clear();
        return next();
      }
      throw RecursionLimit.unreachable("no authority of " + cut.zone() + " answered (" + lastFailure + ")");
    }

    private List<InetSocketAddress> addresses(Name ns, long now) {
      List<InetSocketAddress> glue = cut.glue().get(ns);
      if (glue != null) {
        return glue;
      }
      ZoneCuts.Host h = r.cuts.host(ns, now);
      return h == null ? List.of() : h.addresses();
    }

    private CompletableFuture<Message> send(InetSocketAddress a) {
      budget.send();
      if (log.isDebugEnabled()) {
        log.debug("asking {} {} {} (zone {})", a.getAddress().getHostAddress(), name, Type.string(type), cut.zone());
      }
      long now = System.nanoTime();
      long deadline = Math.min(now + r.servers.timeoutNanos(a, r.attemptMaxNanos), budget.deadlineNanos);
      return AuthorityQuery.ask(r.sockets, a, name, type, deadline)
          .handleAsync((reply, failure) -> {
            if (failure != null) {
              Throwable cause = unwrap(failure);
              String outcome = cause instanceof UpstreamException ue ? ue.outcome() : "error";
              r.metrics.query(outcome);
              if (outcome.equals("timeout")) {
                r.servers.timedOut(a, System.nanoTime());
                timedOut.add(a);
              }
              lastFailure = outcome + " from " + a.getAddress().getHostAddress();
              return next();
            }
            r.servers.answered(a, reply.rttNanos());
            String lame = lameReason(reply.message(), cut, name);
            if (lame != null) {
              r.metrics.query("lame");
              r.metrics.lame(lame);
              r.servers.lame(a, cut.zone().toString(), System.nanoTime());
              lastFailure = lame + " from " + a.getAddress().getHostAddress();
              return next();
            }
            r.metrics.query("ok");
            return CompletableFuture.completedFuture(reply.message());
          }, r.executor)
          .thenCompose(f -> f);
    }
  }

  /**
   * The addresses of name server {@code host} (A, or AAAA when it has no A), resolved with this
   * resolution's budget and kept in the zone-cut cache; an empty list when it has none reachable.
   */
  private CompletableFuture<List<InetSocketAddress>> lookUp(Name host, int depth) {
    return resolve(host, Type.A, depth).thenCompose(a -> {
      List<InetSocketAddress> found = addresses(a, host);
      if (!found.isEmpty() || a.rcode() != Rcode.NOERROR) {
        return CompletableFuture.completedFuture(found); // NXDOMAIN: no AAAA either
      }
      return resolve(host, Type.AAAA, depth).thenApply(aaaa -> addresses(aaaa, host));
    }).exceptionallyCompose(failure -> {
      Throwable cause = unwrap(failure);
      if (cause instanceof RecursionLimit rl && rl.limit != null) {
        return CompletableFuture.failedFuture(cause);
      }
      return CompletableFuture.completedFuture(List.of());
    }).whenComplete((found, failure) -> budget.endLookup(host));
  }

  private List<InetSocketAddress> addresses(Result result, Name host) {
    List<InetSocketAddress> out = new ArrayList<>();
    long ttl = MAX_TTL_SECONDS;
    for (Record rec : result.answer()) {
      InetSocketAddress a = null;
      if (rec instanceof ARecord ar) {
        a = r.authority(ar.getAddress());
      } else if (rec instanceof AAAARecord ar) {
        a = r.authority(ar.getAddress());
      } else {
        continue;
      }
      ttl = Math.min(ttl, rec.getTTL());
      if (a != null && !out.contains(a)) {
        out.add(a);
      }
    }
    if (!out.isEmpty()) {
      r.cuts.putHost(host, new ZoneCuts.Host(List.copyOf(out),
          System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(MIN_TTL_SECONDS, ttl))));
    }
    return out;
  }
}
