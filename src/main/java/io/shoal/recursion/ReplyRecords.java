package io.shoal.recursion;

import java.util.ArrayList;
import java.util.List;
import org.xbill.DNS.DNAMERecord;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Reading an authority's reply for a {@link Resolution}: the records of a section by owner and
 * type, their signatures, the denial proofs inside a zone, a DNAME above a name, and whether the
 * reply shows a lame or broken server. Nothing here keeps state.
 */
final class ReplyRecords {

  private ReplyRecords() {}

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

  /** The records of {@code in} of {@code type}. */
  static List<Record> records(List<Record> in, int type) {
    List<Record> out = new ArrayList<>();
    for (Record rec : in) {
      if (rec.getType() == type) {
        out.add(rec);
      }
    }
    return out;
  }

  /** The RRSIGs of {@code section} owned by {@code owner} covering {@code covered} ({@link Type#ANY}: any). */
  static List<Record> signatures(Message m, int section, Name owner, int covered) {
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
  static List<Record> proofs(Message m, Name zone, boolean soa) {
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

  /** Whether the authority section holds a SOA at or above {@code name} and inside {@code zone}. */
  static boolean soaAbove(Message m, Name name, Name zone) {
    for (Record soa : records(m, Section.AUTHORITY, null, Type.SOA)) {
      if (name.subdomain(soa.getName()) && soa.getName().subdomain(zone)) {
        return true;
      }
    }
    return false;
  }

  /** The DNAME of the answer section strictly above {@code name} and inside {@code zone}, or null. */
  static DNAMERecord dname(Message m, Name zone, Name name) {
    for (Record rec : m.getSection(Section.ANSWER)) {
      if (rec instanceof DNAMERecord d && name.subdomain(d.getName()) && !name.equals(d.getName())
          && d.getName().subdomain(zone)) {
        return d;
      }
    }
    return null;
  }

  /** Whether {@code child} is strictly below {@code zone}. */
  static boolean isBelow(Name child, Name zone) {
    return child.subdomain(zone) && !child.equals(zone);
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
}
