package io.shoal.cache;

import io.shoal.wire.AnswerRenderer;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.Rcode;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.TtlOffsetShapes;
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

  /** TTL of a stale answer's records (RFC 8767 section 4 suggests 30 seconds). */
  public static final long STALE_TTL_SECONDS = 30;

  /**
   * The reply to {@code query} from the cache: its ID and name case, each record's TTL counted
   * down to {@code nowMillis}. A negative answer's TTLs never exceed the entry's lifetime (RFC
   * 2308 section 5). A remembered SERVFAIL says so in an extended error (RFC 8914 code 13).
   */
  public byte[] render(DnsQuery query, long nowMillis, int sizeLimit) {
    return render(query, nowMillis, sizeLimit, ExtendedError.CACHED_ERROR);
  }

  /** The largest reply {@link #renderInto} writes: the stored answer and shoal's OPT with an extended error. */
  public int renderSize() {
    return wire.length + 64;
  }

  /**
   * {@link #render(DnsQuery, long, int)} written into {@code out} (at least {@link #renderSize}
   * bytes) instead of a new array; returns the reply's length.
   */
  public int renderInto(DnsQuery query, long nowMillis, int sizeLimit, byte[] out) {
    if (optStart >= 0) {
      // An answer stored with its upstream OPT: rare, rendered the long way.
      byte[] r = render(query, nowMillis, sizeLimit);
      System.arraycopy(r, 0, out, 0, r.length);
      return r.length;
    }
    long elapsed = Math.max(0, (nowMillis - storedAtMillis) / 1000);
    long cap = ScannedAnswer.positive(wire)
        ? Long.MAX_VALUE : Math.max(0, (expiresAtMillis - storedAtMillis) / 1000);
    ExtendedError ede = (wire[3] & 0x0F) == Rcode.SERVFAIL ? ExtendedError.CACHED_ERROR : null;
    return AnswerRenderer.renderInto(wire, ttlOffsets, query, elapsed, cap, sizeLimit, ede, out);
  }

  /**
   * The reply to {@code query} right after this answer came from upstream: as {@link #render},
   * but a SERVFAIL says that the upstream failed, not that it was remembered.
   */
  public byte[] renderFetched(DnsQuery query, long nowMillis, int sizeLimit) {
    return render(query, nowMillis, sizeLimit, ExtendedError.UPSTREAM_FAILED);
  }

  /** As {@link #renderFetched(DnsQuery, long, int)}, a SERVFAIL saying {@code why} (e.g. DNSSEC Bogus). */
  public byte[] renderFetched(DnsQuery query, long nowMillis, int sizeLimit, ExtendedError why) {
    return render(query, nowMillis, sizeLimit, why);
  }

  /** A negative answer: NXDOMAIN, NODATA (no answer records), or a remembered failure. */
  public boolean negative() {
    int rcode = wire[3] & 0x0F;
    return rcode != Rcode.NOERROR || (wire[6] == 0 && wire[7] == 0);
  }

  /**
   * Whether this answer may be served past its expiry when the upstreams fail (RFC 8767): an
   * answer or an NXDOMAIN; never a remembered failure or a truncated reply.
   */
  public boolean servableStale() {
    int rcode = wire[3] & 0x0F;
    return (rcode == Rcode.NOERROR || rcode == Rcode.NXDOMAIN) && (wire[2] & 0x02) == 0;
  }

  /**
   * The reply to {@code query} from this answer past its expiry: every TTL at most {@link
   * #STALE_TTL_SECONDS}, and an extended error that says it is stale (RFC 8767, RFC 8914 codes 3
   * and 19).
   */
  public byte[] renderStale(DnsQuery query, int sizeLimit) {
    ExtendedError why = (wire[3] & 0x0F) == Rcode.NXDOMAIN ? ExtendedError.STALE_NXDOMAIN : ExtendedError.STALE_ANSWER;
    return render(query, sizeLimit, 0, STALE_TTL_SECONDS, why);
  }

  private byte[] render(DnsQuery query, long nowMillis, int sizeLimit, ExtendedError servfailWhy) {
    long elapsed = Math.max(0, (nowMillis - storedAtMillis) / 1000);
    long cap = ScannedAnswer.positive(wire)
        ? Long.MAX_VALUE : Math.max(0, (expiresAtMillis - storedAtMillis) / 1000);
    return render(query, sizeLimit, elapsed, cap, (wire[3] & 0x0F) == Rcode.SERVFAIL ? servfailWhy : null);
  }

  private byte[] render(DnsQuery query, int sizeLimit, long elapsed, long cap, ExtendedError ede) {
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
    return AnswerRenderer.render(served, offsets, query, elapsed, cap, sizeLimit, ede);
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
    return new CachedAnswer(wire, TtlOffsetShapes.of(offsets, n), optStart, optEnd, stored, expires);
  }
}
