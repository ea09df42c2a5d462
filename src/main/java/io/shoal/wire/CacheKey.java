package io.shoal.wire;

import java.util.Arrays;

/**
 * What an answer is cached under: the lower-cased question name in wire form, qtype, qclass and
 * the DO and CD bits. Built from raw bytes; the bytes are also the on-disk key of the LMDB
 * backend, so their layout is stable: name, type (2), class (2), flags (1).
 */
public final class CacheKey {
  public static final int FLAG_DO = 1;
  public static final int FLAG_CD = 2;

  private final byte[] bytes;
  private final int hash;
  /** {@link #crc32}'s value once computed, 0 before (a key whose CRC-32 is 0 computes it each time). */
  private int crc32;

  private CacheKey(byte[] bytes) {
    this(bytes, Arrays.hashCode(bytes));
  }

  /** @param hash {@code Arrays.hashCode(bytes)}, computed by the caller as it wrote them */
  private CacheKey(byte[] bytes, int hash) {
    this.bytes = bytes;
    this.hash = hash;
  }

  /** Wraps key bytes produced by {@link #bytes()} (for example read back from disk). */
  public static CacheKey ofBytes(byte[] bytes) {
    if (bytes.length < 6) {
      throw new IllegalArgumentException("cache key too short: " + bytes.length + " bytes");
    }
    return new CacheKey(bytes.clone());
  }

  static CacheKey of(byte[] msg, int nameOff, int nameEnd, int qtype, int qclass, int flags) {
    int nameLen = nameEnd - nameOff;
    byte[] k = new byte[nameLen + 5];
    // Lower-cased and hashed in one pass (the hash is Arrays.hashCode's, as for any other key).
    int h = 1;
    for (int i = 0; i < nameLen; i++) {
      byte b = Wire.lower(msg[nameOff + i]);
      k[i] = b;
      h = 31 * h + b;
    }
    Wire.put16(k, nameLen, qtype);
    Wire.put16(k, nameLen + 2, qclass);
    k[nameLen + 4] = (byte) flags;
    for (int i = nameLen; i < k.length; i++) {
      h = 31 * h + k[i];
    }
    return new CacheKey(k, h);
  }

  /**
   * The {@link #hashCode} of the key {@code DnsQuery.parse(packet)} would give, read from the
   * packet as it came, without parsing or allocating: for a UDP reader to warm the cache for a
   * batch of queries before it answers them (AnswerCache.warm). A guess: 0 when the packet is no
   * plain query of one question with an uncompressed name, and the DO bit is looked for only in
   * an OPT record that is the packet's first record after the question. A wrong guess costs a
   * wasted read, never a wrong answer.
   */
  public static int hashOfQuery(byte[] packet) {
    int len = packet.length;
    if (len < Wire.HEADER + 5 || (packet[2] & 0x80) != 0 || Wire.u16(packet, 4) != 1) {
      return 0;
    }
    int h = 1;
    int pos = Wire.HEADER;
    while (true) {
      int labelLen = packet[pos] & 0xFF;
      if (labelLen > 63 || pos + labelLen + 1 > len) {
        return 0;
      }
      h = 31 * h + packet[pos++];
      if (labelLen == 0) {
        break;
      }
      for (int end = pos + labelLen; pos < end; pos++) {
        h = 31 * h + Wire.lower(packet[pos]);
      }
    }
    if (pos + 4 > len) {
      return 0;
    }
    for (int end = pos + 4; pos < end; pos++) {
      h = 31 * h + packet[pos];
    }
    boolean dnssecOk = Wire.u16(packet, 6) == 0 && Wire.u16(packet, 8) == 0 && Wire.u16(packet, 10) > 0
        && pos + 11 <= len && packet[pos] == 0 && Wire.u16(packet, pos + 1) == Wire.TYPE_OPT
        && (packet[pos + 7] & 0x80) != 0;
    boolean checkingDisabled = (packet[3] & 0x10) != 0;
    return 31 * h + ((dnssecOk ? FLAG_DO : 0) | (checkingDisabled ? FLAG_CD : 0));
  }

  /** A key for a presentation-format name such as {@code www.example.} (used by flush). */
  public static CacheKey of(String name, int qtype, int qclass, int flags) {
    byte[] wire = nameToWire(name);
    return of(wire, 0, wire.length, qtype, qclass, flags);
  }

  /** A presentation-format name in uncompressed wire form (labels as written, no escapes). */
  public static byte[] nameToWire(String name) {
    String n = name.endsWith(".") ? name : name + ".";
    if (n.equals(".")) {
      return new byte[] {0};
    }
    String[] labels = n.substring(0, n.length() - 1).split("\\.", -1);
    int size = 1;
    for (String l : labels) {
      if (l.isEmpty() || l.length() > 63) {
        throw new IllegalArgumentException("bad label in name '" + name + "'");
      }
      size += l.length() + 1;
    }
    if (size > 255) {
      throw new IllegalArgumentException("name longer than 255 octets: '" + name + "'");
    }
    byte[] out = new byte[size];
    int pos = 0;
    for (String l : labels) {
      out[pos++] = (byte) l.length();
      for (int i = 0; i < l.length(); i++) {
        out[pos++] = (byte) l.charAt(i);
      }
    }
    out[pos] = 0;
    return out;
  }

  /**
   * Whether {@code wire}'s one question is this key's name (in any case), type and class: then a
   * cache need not keep the key beside the answer, the answer's question says it. The flags are
   * not in the question; the caller compares them.
   */
  public boolean matchesQuestion(byte[] wire) {
    int nameLen = bytes.length - 5;
    if (!nameMatchesQuestion(wire)) {
      return false;
    }
    for (int i = 0; i < 4; i++) {
      if (wire[Wire.HEADER + nameLen + i] != bytes[nameLen + i]) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code wire}'s one question asks for this key's name (in any case), of any type. */
  public boolean nameMatchesQuestion(byte[] wire) {
    int nameLen = bytes.length - 5;
    if (wire.length < Wire.HEADER + nameLen + 4 || Wire.u16(wire, 4) != 1) {
      return false;
    }
    // Most answers carry the question as asked, in lower case: one vectorised compare settles it.
    int differs = Arrays.mismatch(wire, Wire.HEADER, Wire.HEADER + nameLen, bytes, 0, nameLen);
    if (differs < 0) {
      return true;
    }
    for (int i = differs; i < nameLen; i++) {
      if (Wire.lower(wire[Wire.HEADER + i]) != bytes[i]) {
        return false;
      }
    }
    return true;
  }

  /** The type {@code wire}'s question asks for, when {@link #nameMatchesQuestion} is true of it. */
  public int questionType(byte[] wire) {
    return Wire.u16(wire, Wire.HEADER + bytes.length - 5);
  }

  /** The key of {@code wire}'s question with {@code flags}: the inverse of {@link #matchesQuestion}. */
  public static CacheKey ofQuestion(byte[] wire, int flags) throws WireException {
    if (wire.length < Wire.HEADER || Wire.u16(wire, 4) != 1) {
      throw new WireException("no single question");
    }
    int nameEnd = Wire.checkName(wire, Wire.HEADER, wire.length);
    if (nameEnd + 4 > wire.length) {
      throw new WireException("question runs past the end");
    }
    return of(wire, Wire.HEADER, nameEnd, Wire.u16(wire, nameEnd), Wire.u16(wire, nameEnd + 2), flags);
  }

  /** The key's bytes; callers must not modify them. */
  public byte[] bytes() {
    return bytes;
  }

  /** Length of the wire-form name at the start of {@link #bytes()}. */
  public int nameLength() {
    return bytes.length - 5;
  }

  public int qtype() {
    return Wire.u16(bytes, bytes.length - 5);
  }

  public int qclass() {
    return Wire.u16(bytes, bytes.length - 3);
  }

  public int flags() {
    return bytes[bytes.length - 1];
  }

  /** The question name in presentation form, lower-cased, with the trailing dot. */
  public String name() {
    StringBuilder sb = new StringBuilder();
    int pos = 0;
    while (bytes[pos] != 0) {
      int len = bytes[pos];
      for (int i = 1; i <= len; i++) {
        char c = (char) (bytes[pos + i] & 0xFF);
        if (c == '.' || c == '\\') {
          sb.append('\\');
        }
        sb.append(c);
      }
      sb.append('.');
      pos += len + 1;
    }
    return sb.length() == 0 ? "." : sb.toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CacheKey other && other.hash == hash && Arrays.equals(other.bytes, bytes);
  }

  @Override
  public int hashCode() {
    return hash;
  }

  /**
   * The CRC-32 of the key's bytes (as {@link java.util.zip.CRC32} computes it), computed once per
   * key object: the LMDB backend places a key in a shard by it, and one miss asks three times
   * (the reader's look-up, the worker's, the fill). Threads that race to compute it write the
   * same value.
   */
  public long crc32() {
    int c = crc32;
    if (c == 0) {
      c = (int) Crc32.of(bytes);
      crc32 = c;
    }
    return c & 0xFFFFFFFFL;
  }

  @Override
  public String toString() {
    return name() + " type " + qtype() + " class " + qclass() + " flags " + flags();
  }
}
