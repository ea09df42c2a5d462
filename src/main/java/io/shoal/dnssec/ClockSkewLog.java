package io.shoal.dnssec;

import io.shoal.logging.FailureLog;
import java.io.IOException;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;

/**
 * Says once per zone that its signatures are outside their validity window by this host's clock:
 * one zone is usually a zone's mistake, many at once a skewed clock, and the operator is the one
 * to tell them apart. Past {@link #MAX_ZONES} zones it falls back to a rate-limited warning.
 */
final class ClockSkewLog {
  static final int MAX_ZONES = 1024;

  private final Logger log;
  private final Set<Name> told = ConcurrentHashMap.newKeySet();
  private final FailureLog overflow;

  ClockSkewLog(Logger log) {
    this.log = log;
    this.overflow = new FailureLog(log, 60);
  }

  /**
   * A signature for {@code qname} was expired or not yet valid at {@code now}: logs the zone (the
   * signer of the upstream answer's first RRSIG, else {@code qname}) and that signature's window.
   */
  void outsideValidity(byte[] upstreamAnswer, Name qname, Instant now) {
    RRSIGRecord sig = firstSignature(upstreamAnswer);
    Name zone = sig != null ? sig.getSigner() : qname;
    String window = sig != null ? " (signature valid from " + sig.getTimeSigned() + " to " + sig.getExpire() + ")" : "";
    String what = "DNSSEC signatures of zone " + zone + " are outside their validity window at " + now + window
        + ". If many zones say so, this host's clock may be skewed";
    if (told.contains(zone)) {
      return;
    }
    if (told.size() < MAX_ZONES) {
      if (told.add(zone)) {
        log.warn(what);
      }
    } else {
      overflow.warn(what);
    }
  }

  private static RRSIGRecord firstSignature(byte[] wire) {
    try {
      Message m = new Message(wire);
      for (int section = Section.ANSWER; section <= Section.AUTHORITY; section++) {
        for (Record r : m.getSection(section)) {
          if (r instanceof RRSIGRecord sig) {
            return sig;
          }
        }
      }
    } catch (IOException e) {
      // No window to report then: the zone name is the question's.
    }
    return null;
  }
}
