package io.shoal.wire;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TextParseException;

/** DNS messages built with dnsjava, and raw byte helpers, shared by the wire-level tests. */
public final class Messages {
  private Messages() {}

  public static Name name(String text) {
    try {
      return Name.fromString(text);
    } catch (TextParseException e) {
      throw new IllegalArgumentException(e);
    }
  }

  /** A stub resolver's query: RD set, one question, no EDNS. */
  public static Message query(int id, String qname, int qtype) {
    Message m = Message.newQuery(Record.newRecord(name(qname), qtype, DClass.IN));
    m.getHeader().setID(id);
    return m;
  }

  /** A query with an OPT record advertising {@code udpSize}, DO as given. */
  public static Message ednsQuery(int id, String qname, int qtype, int udpSize, boolean dnssecOk) {
    Message m = query(id, qname, qtype);
    m.addRecord(new OPTRecord(udpSize, 0, 0, dnssecOk ? org.xbill.DNS.ExtendedFlags.DO : 0), Section.ADDITIONAL);
    return m;
  }

  /** An upstream-style response with only its question so far: QR, RD and RA set. */
  public static Message response(int id, String qname, int qtype, int rcode) {
    Message m = query(id, qname, qtype);
    m.getHeader().setFlag(Flags.QR);
    m.getHeader().setFlag(Flags.RA);
    m.getHeader().setRcode(rcode);
    return m;
  }

  public static byte[] wire(Message m) {
    return m.toWire();
  }

  public static Message parse(byte[] wire) {
    try {
      return new Message(wire);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A 12-byte header with the given ID, flag bytes and section counts. */
  public static byte[] header(int id, int flags2, int flags3, int qd, int an, int ns, int ar) {
    return new byte[] {
      (byte) (id >> 8), (byte) id, (byte) flags2, (byte) flags3,
      (byte) (qd >> 8), (byte) qd, (byte) (an >> 8), (byte) an,
      (byte) (ns >> 8), (byte) ns, (byte) (ar >> 8), (byte) ar
    };
  }

  public static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  public static byte[] bytes(int... values) {
    byte[] b = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      b[i] = (byte) values[i];
    }
    return b;
  }

  /** A wire-form name of labels of the given lengths (filled with 'a'), ending with the root. */
  public static byte[] nameOfLabels(int... lengths) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int len : lengths) {
      out.write(len);
      for (int i = 0; i < len; i++) {
        out.write('a');
      }
    }
    out.write(0);
    return out.toByteArray();
  }

  public static int u16(byte[] b, int off) {
    return ((b[off] & 0xFF) << 8) | (b[off + 1] & 0xFF);
  }

  public static void put32(byte[] b, int off, long v) {
    b[off] = (byte) (v >>> 24);
    b[off + 1] = (byte) (v >>> 16);
    b[off + 2] = (byte) (v >>> 8);
    b[off + 3] = (byte) v;
  }

  public static long u32(byte[] b, int off) {
    return ((long) u16(b, off) << 16) | u16(b, off + 2);
  }
}
