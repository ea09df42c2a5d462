package io.shoal.recursion;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import org.xbill.DNS.Name;

/**
 * A delegation: the zone, the names of its servers, the addresses the parent gave for those of
 * them inside its own zone (glue), and whether the parent showed a DS record for it.
 *
 * @param glue addresses by NS name, only for names the referring zone may speak for
 * @param signed the parent answered DS records with the referral (the validator asks for them anyway)
 * @param expiresAtNanos when the delegation must be learnt again (System.nanoTime)
 * @param stub set by configuration (a stub zone), never replaced by what a server says
 */
record ZoneCut(Name zone, List<Name> nsNames, Map<Name, List<InetSocketAddress>> glue, boolean signed,
    long expiresAtNanos, boolean stub) {

  boolean expired(long now) {
    return now - expiresAtNanos >= 0;
  }
}
