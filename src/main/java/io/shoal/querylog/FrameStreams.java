package io.shoal.querylog;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The Frame Streams framing that dnstap travels in (farsightsec/fstrm): a data frame is a 4-byte
 * big-endian length and the payload; a control frame is an escape (a zero length), its own length,
 * a control type and, for READY, ACCEPT and START, a content-type field. A file is START, data
 * frames, STOP; a socket first exchanges READY and ACCEPT and ends with STOP answered by FINISH.
 */
final class FrameStreams {
  static final String DNSTAP = "protobuf:dnstap.Dnstap";

  static final int ACCEPT = 0x01;
  static final int START = 0x02;
  static final int STOP = 0x03;
  static final int READY = 0x04;
  static final int FINISH = 0x05;

  private static final int CONTENT_TYPE = 0x01;
  /** fstrm's limit on a control frame; a peer's larger one is a broken stream, not a bigger buffer. */
  static final int MAX_CONTROL = 512;

  private FrameStreams() {}

  /** A control frame of {@code type}, with {@code contentType} unless it is null. */
  static byte[] control(int type, String contentType) {
    byte[] ct = contentType == null ? new byte[0] : contentType.getBytes(StandardCharsets.US_ASCII);
    int body = 4 + (contentType == null ? 0 : 8 + ct.length);
    ByteBuffer b = ByteBuffer.allocate(8 + body);
    b.putInt(0).putInt(body).putInt(type);
    if (contentType != null) {
      b.putInt(CONTENT_TYPE).putInt(ct.length).put(ct);
    }
    return b.array();
  }

  /** Writes one data frame. */
  static void data(OutputStream out, byte[] payload) throws IOException {
    if (payload.length == 0) {
      throw new IllegalArgumentException("a data frame cannot be empty: length 0 is the control escape");
    }
    int n = payload.length;
    out.write(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
    out.write(payload);
  }

  /** A control frame as read: its type and content type (null when it has none). */
  record Control(int type, String contentType) {}

  /** Reads the next frame, which must be a control frame (a bidirectional peer sends no data). */
  static Control readControl(InputStream in) throws IOException {
    DataInputStream d = new DataInputStream(in);
    try {
      if (d.readInt() != 0) {
        throw new IOException("expected a control frame, got a data frame");
      }
      int length = d.readInt();
      if (length < 4 || length > MAX_CONTROL) {
        throw new IOException("control frame of " + length + " bytes");
      }
      byte[] body = d.readNBytes(length);
      if (body.length < length) {
        throw new EOFException("control frame cut short");
      }
      ByteBuffer b = ByteBuffer.wrap(body);
      int type = b.getInt();
      String contentType = null;
      while (b.remaining() >= 8) {
        int field = b.getInt();
        int len = b.getInt();
        if (len < 0 || len > b.remaining()) {
          throw new IOException("control field of " + len + " bytes");
        }
        byte[] v = new byte[len];
        b.get(v);
        if (field == CONTENT_TYPE && contentType == null) {
          contentType = new String(v, StandardCharsets.US_ASCII);
        }
      }
      return new Control(type, contentType);
    } catch (EOFException e) {
      throw new EOFException("stream ended inside a control frame");
    }
  }
}
