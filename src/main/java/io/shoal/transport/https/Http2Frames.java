package io.shoal.transport.https;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/2 frames (RFC 9113 section 4 and 6) as the DoH server writes them, and the few header
 * fields of its responses, encoded with HPACK's static table only (RFC 7541 section 6.2.2,
 * "literal without indexing" with an indexed name), so the client's dynamic table is never touched.
 */
final class Http2Frames {
  static final int HEADER = 9;
  static final int DATA = 0;
  static final int HEADERS = 1;
  static final int PRIORITY = 2;
  static final int RST_STREAM = 3;
  static final int SETTINGS = 4;
  static final int PUSH_PROMISE = 5;
  static final int PING = 6;
  static final int GOAWAY = 7;
  static final int WINDOW_UPDATE = 8;
  static final int CONTINUATION = 9;

  static final int END_STREAM = 0x1;
  static final int ACK = 0x1;
  static final int END_HEADERS = 0x4;
  static final int PADDED = 0x8;
  static final int PRIORITY_FLAG = 0x20;

  static final int NO_ERROR = 0x0;
  static final int PROTOCOL_ERROR = 0x1;
  static final int FLOW_CONTROL_ERROR = 0x3;
  static final int STREAM_CLOSED = 0x5;
  static final int FRAME_SIZE_ERROR = 0x6;
  static final int REFUSED_STREAM = 0x7;
  static final int COMPRESSION_ERROR = 0x9;
  static final int ENHANCE_YOUR_CALM = 0xb;

  static final int SETTINGS_HEADER_TABLE_SIZE = 0x1;
  static final int SETTINGS_ENABLE_PUSH = 0x2;
  static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
  static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
  static final int SETTINGS_MAX_FRAME_SIZE = 0x5;
  static final int SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

  /** The smallest SETTINGS_MAX_FRAME_SIZE, the default, and the size of every frame this server takes. */
  static final int DEFAULT_FRAME = 16384;
  static final int DEFAULT_WINDOW = 65535;
  static final long MAX_WINDOW = Integer.MAX_VALUE;

  /** HPACK static-table indexes of the names the responses carry (RFC 7541 appendix A). */
  private static final int STATUS = 8;
  private static final int CACHE_CONTROL = 24;
  private static final int CONTENT_LENGTH = 28;
  private static final int CONTENT_TYPE = 31;
  /** ":status: 200" is static entry 8 itself: one byte. */
  private static final byte STATUS_200 = (byte) 0x88;

  private Http2Frames() {}

  /** Writes a frame header at {@code b}'s position. */
  static void header(ByteBuffer b, int length, int type, int flags, int stream) {
    b.put((byte) (length >>> 16)).put((byte) (length >>> 8)).put((byte) length)
        .put((byte) type).put((byte) flags).putInt(stream & 0x7fffffff);
  }

  static ByteBuffer frame(int type, int flags, int stream, byte[] payload) {
    ByteBuffer b = ByteBuffer.allocate(HEADER + payload.length);
    header(b, payload.length, type, flags, stream);
    return b.put(payload).flip();
  }

  static ByteBuffer settings(int[] idsAndValues) {
    ByteBuffer b = ByteBuffer.allocate(HEADER + idsAndValues.length * 3);
    header(b, idsAndValues.length * 3, SETTINGS, 0, 0);
    for (int i = 0; i < idsAndValues.length; i += 2) {
      b.putShort((short) idsAndValues[i]).putInt(idsAndValues[i + 1]);
    }
    return b.flip();
  }

  static ByteBuffer settingsAck() {
    ByteBuffer b = ByteBuffer.allocate(HEADER);
    header(b, 0, SETTINGS, ACK, 0);
    return b.flip();
  }

  static ByteBuffer windowUpdate(int stream, int increment) {
    ByteBuffer b = ByteBuffer.allocate(HEADER + 4);
    header(b, 4, WINDOW_UPDATE, 0, stream);
    return b.putInt(increment).flip();
  }

  static ByteBuffer rstStream(int stream, int error) {
    ByteBuffer b = ByteBuffer.allocate(HEADER + 4);
    header(b, 4, RST_STREAM, 0, stream);
    return b.putInt(error).flip();
  }

  static ByteBuffer goaway(int lastStream, int error, String debug) {
    byte[] text = debug.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(HEADER + 8 + text.length);
    header(b, 8 + text.length, GOAWAY, 0, 0);
    return b.putInt(lastStream).putInt(error).put(text).flip();
  }

  /** The HPACK block of a response's header fields. */
  static byte[] responseHeaders(DohExchange.Response r) {
    ByteBuffer b = ByteBuffer.allocate(128 + r.contentType().length());
    if (r.status() == 200) {
      b.put(STATUS_200);
    } else {
      literal(b, STATUS, Integer.toString(r.status()));
    }
    literal(b, CONTENT_TYPE, r.contentType());
    literal(b, CONTENT_LENGTH, Integer.toString(r.body().length));
    if (r.maxAge() >= 0) {
      literal(b, CACHE_CONTROL, "max-age=" + r.maxAge());
    }
    byte[] block = new byte[b.position()];
    b.flip().get(block);
    return block;
  }

  /** A literal field without indexing whose name is static entry {@code index}, its value not Huffman-coded. */
  private static void literal(ByteBuffer b, int index, String value) {
    integer(b, 0x00, 4, index);
    integer(b, 0x00, 7, value.length());
    b.put(value.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** An HPACK integer with an N-bit prefix (RFC 7541 section 5.1). */
  private static void integer(ByteBuffer b, int first, int prefixBits, int value) {
    int max = (1 << prefixBits) - 1;
    if (value < max) {
      b.put((byte) (first | value));
      return;
    }
    b.put((byte) (first | max));
    value -= max;
    while (value >= 0x80) {
      b.put((byte) ((value & 0x7f) | 0x80));
      value >>>= 7;
    }
    b.put((byte) value);
  }
}
