package io.shoal.admin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.DNAMERecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.NameTooLongException;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * Which records of a loaded answer belong to the question it is stored under, judged as a
 * resolver judges an upstream reply (RFC 1034 section 4.3.2, RFC 6672, RFC 2181 section 5.4.1):
 * the answer section must be the chain from the question's name (records of its type at the
 * name, or a CNAME to the next name, or a DNAME above it that the following CNAME obeys) and
 * nothing else, so a dump cannot make {@code www.test} be answered with {@code
 * www.victim.test}'s records. Authority records must speak for a zone at or above a name of the
 * chain, and additional records must be the addresses of names the other sections refer to; the
 * ones that do not are dropped, as a resolver scrubs them.
 */
final class AnswerChain {
  /** Records the authority section may hold: a zone's SOA, NS and DS, and its denial proofs. */
  private static final Set<Integer> AUTHORITY_TYPES =
      Set.of(Type.SOA, Type.NS, Type.DS, Type.NSEC, Type.NSEC3, Type.RRSIG);

  /** An answer that does not belong to its key: what is wrong. */
  static final class Misfit extends Exception {
    Misfit(String why) {
      super(why);
    }
  }

  /** The records to keep, by section, and how many authority and additional records were dropped. */
  record Kept(List<Record> answer, List<Record> authority, List<Record> additional, int dropped) {}

  private AnswerChain() {}

  /**
   * The records of an answer to {@code qname qtype qclass} that belong to it; throws when the
   * answer section holds a record that is not on the chain from {@code qname}, or a record of
   * another class.
   */
  static Kept check(Name qname, int qtype, int qclass, List<Record> answer, List<Record> authority,
      List<Record> additional) throws Misfit {
    for (List<Record> section : List.of(answer, authority, additional)) {
      for (Record r : section) {
        if (qclass != DClass.ANY && r.getDClass() != qclass) {
          throw new Misfit("record '" + r + "' is of class " + DClass.string(r.getDClass())
              + ", the key of class " + DClass.string(qclass));
        }
      }
    }
    // The names of the chain, in order, and the types each carries in the answer (for its RRSIGs).
    Set<Name> chain = new LinkedHashSet<>();
    Map<Name, Set<Integer>> typesAt = new HashMap<>();
    boolean[] onChain = new boolean[answer.size()];
    Name sname = qname;
    chain.add(sname);
    // Each round follows one link; there are never more links than records.
    for (int link = 0; link <= answer.size(); link++) {
      boolean answered = false;
      CNAMERecord cname = null;
      for (int i = 0; i < answer.size(); i++) {
        Record r = answer.get(i);
        if (r.getType() == Type.RRSIG || !r.getName().equals(sname)) {
          continue;
        }
        if (r.getType() == qtype || qtype == Type.ANY) {
          onChain[i] = true;
          answered = true;
          typesAt.computeIfAbsent(r.getName(), n -> new HashSet<>()).add(r.getType());
        } else if (r.getType() == Type.CNAME) {
          if (cname != null) {
            throw new Misfit("two CNAME records for " + sname);
          }
          cname = (CNAMERecord) r;
          onChain[i] = true;
          typesAt.computeIfAbsent(r.getName(), n -> new HashSet<>()).add(Type.CNAME);
        }
      }
      if (answered) {
        if (cname != null) {
          throw new Misfit("CNAME beside other data at " + sname);
        }
        break;
      }
      Name next = null;
      for (int i = 0; i < answer.size() && next == null; i++) {
        Record r = answer.get(i);
        if (r instanceof DNAMERecord dname && sname.subdomain(dname.getName()) && !sname.equals(dname.getName())) {
          Name substituted;
          try {
            substituted = sname.fromDNAME(dname);
          } catch (NameTooLongException e) {
            throw new Misfit("DNAME '" + r + "' makes " + sname + " too long a name");
          }
          if (cname != null && !cname.getTarget().equals(substituted)) {
            throw new Misfit("CNAME '" + cname + "' is not what DNAME '" + r + "' makes of " + sname
                + " (" + substituted + ")");
          }
          onChain[i] = true;
          typesAt.computeIfAbsent(r.getName(), n -> new HashSet<>()).add(Type.DNAME);
          next = substituted;
        }
      }
      if (next == null && cname != null) {
        next = cname.getTarget();
      }
      if (next == null) {
        break;
      }
      if (!chain.add(next)) {
        throw new Misfit("CNAME loop at " + next);
      }
      sname = next;
    }
    for (int i = 0; i < answer.size(); i++) {
      Record r = answer.get(i);
      if (!onChain[i] && !(r instanceof RRSIGRecord sig && signs(typesAt, sig))) {
        throw new Misfit("answer record '" + r + "' is not on the chain from " + qname + " " + Type.string(qtype));
      }
    }

    int dropped = 0;
    List<Record> keptAuthority = new ArrayList<>();
    Set<Name> zones = new HashSet<>();
    for (Record r : authority) {
      if ((r.getType() == Type.SOA || r.getType() == Type.NS || r.getType() == Type.DS) && above(chain, r.getName())) {
        zones.add(r.getName());
      }
    }
    for (List<Record> section : List.of(answer, authority)) {
      for (Record r : section) {
        // The signer of a signature over the chain is the zone it came from (a wildcard's proof has no SOA).
        if (r instanceof RRSIGRecord sig && above(chain, sig.getSigner())) {
          zones.add(sig.getSigner());
        }
      }
    }
    Map<Name, Set<Integer>> authorityTypes = new HashMap<>();
    boolean[] fits = new boolean[authority.size()];
    for (int i = 0; i < authority.size(); i++) {
      Record r = authority.get(i);
      int t = r.getType();
      fits[i] = AUTHORITY_TYPES.contains(t) && t != Type.RRSIG
          && (t == Type.NSEC || t == Type.NSEC3 ? under(zones, r.getName()) : above(chain, r.getName()));
      if (fits[i]) {
        authorityTypes.computeIfAbsent(r.getName(), n -> new HashSet<>()).add(t);
      }
    }
    for (int i = 0; i < authority.size(); i++) {
      Record r = authority.get(i);
      if (fits[i] || r instanceof RRSIGRecord sig && signs(authorityTypes, sig)) {
        keptAuthority.add(r);
      } else {
        dropped++;
      }
    }
    Set<Name> referred = new HashSet<>();
    for (List<Record> section : List.of(answer, keptAuthority)) {
      for (Record r : section) {
        Name target = r.getAdditionalName();
        if (target != null) {
          referred.add(target);
        }
      }
    }
    List<Record> keptAdditional = new ArrayList<>();
    for (Record r : additional) {
      int t = r instanceof RRSIGRecord sig ? sig.getTypeCovered() : r.getType();
      if ((t == Type.A || t == Type.AAAA) && referred.contains(r.getName())) {
        keptAdditional.add(r);
      } else {
        dropped++;
      }
    }
    return new Kept(answer, keptAuthority, keptAdditional, dropped);
  }

  /** Whether {@code sig} covers a type held at its owner. */
  private static boolean signs(Map<Name, Set<Integer>> typesAt, RRSIGRecord sig) {
    Set<Integer> types = typesAt.get(sig.getName());
    return types != null && types.contains(sig.getTypeCovered());
  }

  /** Whether {@code zone} is a name of the chain or above one: a zone the answer passes through. */
  private static boolean above(Set<Name> chain, Name zone) {
    for (Name n : chain) {
      if (n.subdomain(zone)) {
        return true;
      }
    }
    return false;
  }

  private static boolean under(Set<Name> zones, Name name) {
    for (Name z : zones) {
      if (name.subdomain(z)) {
        return true;
      }
    }
    return false;
  }
}
