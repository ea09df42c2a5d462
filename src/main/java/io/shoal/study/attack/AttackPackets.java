package io.shoal.study.attack;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The DNS packets the robustness attacks send, built on the wire by hand so that a generator
 * thread can make tens of thousands a second: plain queries for chosen names, and malformed
 * packets (random bytes, and queries mutated in the ways parsers get wrong). Seeded, so a run
 * sends the same packets again.
 */
final class AttackPackets {
  /** The ways a malformed packet is made; each packet takes the next one in turn. */
  private static final int MALFORMED_KINDS = 7;

  private final SplittableRandom random;
  private long sequence;

  AttackPackets(long seed) {
    this.random = new SplittableRandom(seed);
  }

  /** A query with RD=1 and no EDNS for {@code name} (absolute, dot-separated labels) of {@code type}. */
  static byte[] query(int id, String name, int type) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    out.write(id >> 8 & 0xff);
    out.write(id & 0xff);
    out.write(0x01); // RD
    out.write(0x00);
    out.writeBytes(new byte[] {0, 1, 0, 0, 0, 0, 0, 0}); // one question, no records
    for (String label : name.split("\\.")) {
      if (label.isEmpty()) {
        continue;
      }
      byte[] b = label.getBytes(StandardCharsets.US_ASCII);
      out.write(b.length);
      out.writeBytes(b);
    }
    out.write(0);
    out.write(type >> 8 & 0xff);
    out.write(type & 0xff);
    out.writeBytes(new byte[] {0, 1}); // class IN
    return out.toByteArray();
  }

  /** The same query in DNS over TCP framing: a two-byte length first. */
  static byte[] tcpFramed(byte[] query) {
    byte[] framed = new byte[query.length + 2];
    framed[0] = (byte) (query.length >> 8);
    framed[1] = (byte) query.length;
    System.arraycopy(query, 0, framed, 2, query.length);
    return framed;
  }

  /**
   * A query for a name under {@code zone} that no earlier call returned ({@code m<n>-<random>}),
   * so a cache never holds its answer.
   */
  byte[] uniqueQuery(String zone) {
    return query(random.nextInt(1 << 16), "m" + (sequence++) + "-" + Integer.toHexString(random.nextInt()) + "."
        + zone, 1);
  }

  /**
   * A packet a DNS parser must refuse or answer FORMERR: in turn random bytes (some shorter than a
   * header), a truncated query, a query with QR set (a response sent to a server), a name whose
   * compression pointer points at itself, a question count far beyond the packet, a label longer
   * than what is left, and a query with a few random bytes flipped.
   */
  byte[] malformed(String zone) {
    long kind = sequence++ % MALFORMED_KINDS;
    byte[] q = query(random.nextInt(1 << 16), "n" + random.nextInt(100_000) + "." + zone, 1);
    switch ((int) kind) {
      case 0 -> {
        byte[] b = new byte[random.nextInt(600)];
        random.nextBytes(b);
        return b;
      }
      case 1 -> {
        byte[] cut = new byte[random.nextInt(q.length - 1)];
        System.arraycopy(q, 0, cut, 0, cut.length);
        return cut;
      }
      case 2 -> {
        q[2] |= (byte) 0x80;
        return q;
      }
      case 3 -> {
        // header, then a name that is only a pointer to its own offset (12), then type and class
        byte[] loop = new byte[12 + 2 + 4];
        System.arraycopy(q, 0, loop, 0, 12);
        loop[12] = (byte) 0xc0;
        loop[13] = 12;
        loop[15] = 1;
        loop[17] = 1;
        return loop;
      }
      case 4 -> {
        q[4] = (byte) 0xff;
        q[5] = (byte) 0xff;
        return q;
      }
      case 5 -> {
        q[12] = 63; // the first label claims 63 bytes; fewer are left
        return q;
      }
      default -> {
        for (int i = 0, n = 1 + random.nextInt(4); i < n; i++) {
          q[random.nextInt(q.length)] = (byte) random.nextInt(256);
        }
        return q;
      }
    }
  }

  /** A query for {@code h<n>.<zone>}: a name of the hostile profile, new each time. */
  byte[] hostileQuery(String zone) {
    return query(random.nextInt(1 << 16), "h" + (sequence++) + "." + zone, 1);
  }
}
