package io.shoal.cache.memory;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.ExpiryOrder;
import io.shoal.wire.CacheKey;
import io.shoal.wire.WireException;
import java.util.Arrays;

/**
 * One answer of the memory cache: the answer itself, no copy of its key when its own question
 * is the key (all but always: the key is the question, lowercased), and its place in the
 * expiry order. 32 bytes besides the answer (a 12-byte header and five 4-byte fields); the
 * fields read by the hit path are final, so a reader that finds the entry sees them whole.
 */
final class Entry extends ExpiryOrder.Placed<Entry> {
  /** A removed entry's slot in the table: probes go on past it, inserts may reuse it. */
  static final Entry TOMBSTONE = new Entry(null, 0, null, 0);

  /** The key when the answer's question is not it; null when it is. */
  final byte[] key;
  final int hash;
  final CachedAnswer answer;
  /**
   * Fill order above the key's DO/CD flags (the low 8 bits): the order is the tie-break between
   * equal expiries, compared as a difference, so it may wrap.
   */
  final int seqAndFlags;

  Entry(byte[] key, int hash, CachedAnswer answer, int seqAndFlags) {
    this.key = key;
    this.hash = hash;
    this.answer = answer;
    this.seqAndFlags = seqAndFlags;
  }

  /** The entry for {@code answer} filled under {@code key}, keeping the key only when its question is not the key. */
  static Entry of(CacheKey key, CachedAnswer answer, int seq) {
    byte[] keyBytes = key.matchesQuestion(answer.wire()) ? null : key.bytes();
    return new Entry(keyBytes, key.hashCode(), answer, seq << 8 | (key.flags() & 0xFF));
  }

  boolean is(CacheKey k) {
    if (hash != k.hashCode()) {
      return false;
    }
    return key != null ? Arrays.equals(key, k.bytes()) : flags() == k.flags() && k.matchesQuestion(answer.wire());
  }

  CacheKey cacheKey() {
    if (key != null) {
      return CacheKey.ofBytes(key);
    }
    try {
      return CacheKey.ofQuestion(answer.wire(), flags());
    } catch (WireException e) {
      throw new IllegalStateException("an entry kept without its key has no question", e);
    }
  }

  /** Whether this entry answers {@code target}'s name, of type {@code qtype} (0: any). */
  boolean named(CacheKey target, int qtype) {
    if (key == null) {
      return target.nameMatchesQuestion(answer.wire()) && (qtype == 0 || target.questionType(answer.wire()) == qtype);
    }
    int n = key.length - 5;
    return Arrays.equals(key, 0, n, target.bytes(), 0, target.nameLength())
        && (qtype == 0 || ((key[n] & 0xFF) << 8 | (key[n + 1] & 0xFF)) == qtype);
  }

  int flags() {
    return seqAndFlags & 0xFF;
  }

  boolean negative() {
    return answer.negative();
  }

  /** Sooner expiry first, then the older fill. */
  @Override
  public boolean before(Entry o) {
    long a = answer.expiresAtMillis();
    long b = o.answer.expiresAtMillis();
    return a != b ? a < b : seqAndFlags - o.seqAndFlags < 0;
  }
}
