package io.shoal.dnssec;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Verdicts of signature checks already made, so each RRSIG over the same data with the same key
 * is checked once: the DNSKEY RRset's signatures while the key set is refetched, and above all a
 * wildcard's signature, which covers the same canonical data (the RRset with the wildcard owner,
 * RFC 4035 section 5.3.2) for every name it expands to, so a zone answering many names from one
 * wildcard costs one check instead of one per name. Keyed by SHA-256 of algorithm, key, signature
 * and signed data; a verdict is the same whenever those are, and the validity window is checked
 * by the validator before the signature is, on every use. Bounded: two generations of at most
 * {@code capacity / 2} entries each, the older dropped whole when the newer fills (about 100 bytes
 * an entry).
 */
final class VerifiedSignatures {
  static final int DEFAULT_CAPACITY = 20_000;

  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  });

  /** Entries per generation; 0: remember nothing. */
  private final int generation;
  private volatile ConcurrentHashMap<ByteBuffer, Boolean> young = new ConcurrentHashMap<>();
  private volatile ConcurrentHashMap<ByteBuffer, Boolean> old = new ConcurrentHashMap<>();

  VerifiedSignatures(int capacity) {
    this.generation = capacity <= 0 ? 0 : Math.max(1, capacity / 2);
  }

  boolean enabled() {
    return generation > 0;
  }

  /** The memo key of one check. */
  static ByteBuffer key(PreparedKey key, byte[] signature, byte[] data, int dataLength) {
    MessageDigest d = SHA256.get();
    d.update((byte) key.algorithm);
    d.update(intBytes(key.dnsKey.length));
    d.update(key.dnsKey);
    d.update(intBytes(signature.length));
    d.update(signature);
    d.update(data, 0, dataLength);
    return ByteBuffer.wrap(d.digest());
  }

  private static byte[] intBytes(int v) {
    return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
  }

  /** The verdict kept for {@code key}, or null. */
  Boolean get(ByteBuffer key) {
    Boolean v = young.get(key);
    if (v == null) {
      v = old.get(key);
      if (v != null) {
        put(key, v);
      }
    }
    return v;
  }

  void put(ByteBuffer key, boolean verdict) {
    if (generation == 0) {
      return;
    }
    ConcurrentHashMap<ByteBuffer, Boolean> y = young;
    y.put(key, verdict);
    if (y.size() >= generation) {
      synchronized (this) {
        if (young == y) {
          old = y;
          young = new ConcurrentHashMap<>();
        }
      }
    }
  }

  /** Verdicts held now (for tests: the bound holds). */
  int size() {
    return young.size() + old.size();
  }
}
