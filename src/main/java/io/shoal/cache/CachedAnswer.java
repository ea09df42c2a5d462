package io.shoal.cache;

import io.shoal.wire.AnswerRenderer;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.nio.ByteBuffer;

/**
 * An upstream answer as cached: its wire bytes, where its TTL fields sit, and absolute (epoch
 * millisecond) store and expiry times, so expiry is wall-clock deterministic and survives a
 * restart of a disk-backed cache. The wire holds no OPT record (EDNS is per hop) and every
 * record's own TTL, already clamped by the cache's rules; {@code optStart}/{@code optEnd} are -1,
 * except in answers stored before OPT records were removed on the way in, whose OPT is removed
 * when they are read.
 */
public record CachedAnswer(
    byte[] wire, int[] ttlOffsets, int optStart, int optEnd, long storedAtMillis, long expiresAtMillis) {

  public static CachedAnswer of(ScannedAnswer scan, long storedAtMillis, long expiresAtMillis) {
    return new CachedAnswer(
        scan.wire(), scan.ttlOffsets(), scan.optStart(), scan.optEnd(), storedAtMillis, expiresAtMillis);
  }

  public boolean expiredAt(long nowMillis) {
    return nowMillis >= expiresAtMillis;
  }

  /**
   * The reply to {@code query}: its ID and name case, each record's TTL counted down to {@code
   * nowMillis}. A negative answer's TTLs never exceed the entry's lifetime (RFC 2308 section 5).
   */
  public byte[] render(DnsQuery query, long nowMillis, int sizeLimit) {
    long elapsed = Math.max(0, (nowMillis - storedAtMillis) / 1000);
    byte[] served = wire;
    int[] offsets = ttlOffsets;
    if (optStart >= 0) {
      try {
        ScannedAnswer clean = ScannedAnswer.withoutUpstreamOpt(wire);
        served = clean.wire();
        offsets = clean.ttlOffsets();
      } catch (WireException e) {
        return query.servfail();
      }
    }
    long cap = ScannedAnswer.positive(served)
        ? Long.MAX_VALUE : Math.max(0, (expiresAtMillis - storedAtMillis) / 1000);
    return AnswerRenderer.render(served, offsets, query, elapsed, cap, sizeLimit);
  }

  /** Size of {@link #encode()}'s output. */
  public int encodedSize() {
    return 8 + 8 + 4 + 4 + 2 + ttlOffsets.length * 2 + wire.length;
  }

  /**
   * Serialises for a disk-backed cache or a peer: expires-at, stored-at (8 bytes each, big-endian),
   * OPT start/end, TTL offset count, offsets (u16 each), then the wire bytes. Expiry first, so the
   * LMDB backend and its tools read it without decoding the rest.
   */
  public void encode(ByteBuffer out) {
    out.putLong(expiresAtMillis);
    out.putLong(storedAtMillis);
    out.putInt(optStart);
    out.putInt(optEnd);
    out.putShort((short) ttlOffsets.length);
    for (int off : ttlOffsets) {
      out.putShort((short) off);
    }
    out.put(wire);
  }

  /** Reads what {@link #encode} wrote; the buffer's position moves to its end. */
  public static CachedAnswer decode(ByteBuffer in) {
    long expires = in.getLong();
    long stored = in.getLong();
    int optStart = in.getInt();
    int optEnd = in.getInt();
    int n = in.getShort() & 0xFFFF;
    int[] offsets = new int[n];
    for (int i = 0; i < n; i++) {
      offsets[i] = in.getShort() & 0xFFFF;
    }
    byte[] wire = new byte[in.remaining()];
    in.get(wire);
    return new CachedAnswer(wire, offsets, optStart, optEnd, stored, expires);
  }
}
