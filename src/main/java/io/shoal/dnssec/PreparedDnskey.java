package io.shoal.dnssec;

import java.security.PublicKey;
import org.xbill.DNS.DNSKEYRecord;
import org.xbill.DNS.DNSSEC;

/**
 * A DNSKEY record whose public key is made by {@link SignatureKeys} the first time a signature
 * is checked with it and kept with the record, which dnsjava's key cache keeps with the zone's
 * key set for its TTL: one conversion per key, not per check. Equal to the plain record in every
 * other way (same type, owner, rdata, wire form).
 */
final class PreparedDnskey extends DNSKEYRecord {
  private static final long serialVersionUID = 1L;
  private final transient SignatureKeys keys;
  private transient volatile PublicKey prepared;

  PreparedDnskey(DNSKEYRecord r, SignatureKeys keys) {
    super(r.getName(), r.getDClass(), r.getTTL(), r.getFlags(), r.getProtocol(), r.getAlgorithm(), r.getKey());
    this.keys = keys;
  }

  @Override
  public PublicKey getPublicKey() throws DNSSEC.DNSSECException {
    PublicKey k = prepared;
    if (k == null) {
      // Two threads may both convert the first time; either result is the same key.
      k = keys.prepare(this);
      if (k == null) {
        k = super.getPublicKey();
      }
      prepared = k;
    }
    return k;
  }
}
