package io.shoal.transport.https;

import static io.shoal.transport.https.Http2Frames.*;

import io.shoal.metrics.ServerMetrics;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.MetaData;

/**
 * The server side of HTTP/2 (RFC 9113) as DoH needs it: the preface and SETTINGS, requests in
 * HEADERS (+CONTINUATION) decoded by Jetty's HPACK decoder, bodies in DATA under flow control in
 * both directions, PING, RST_STREAM, GOAWAY; PRIORITY is read and ignored, as are unknown frames.
 * Limits: {@link DohConnection#MAX_IN_FLIGHT} concurrent streams (more are refused), frames of at
 * most 16 KiB, header blocks of at most {@link Http2HeaderBlock#MAX_HEADER_LIST} bytes. A
 * connection error is answered with GOAWAY naming its code (RFC 9113 section 5.4.1) and the
 * connection closes; a stream error with RST_STREAM.
 */
final class Http2Session implements HttpSession {
  static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final DohConnection connection;
  private final Http2HeaderBlock headerBlocks = new Http2HeaderBlock();
  private final Map<Integer, Http2Stream> streams = new HashMap<>();
  private final Http2Sender sender;
  private boolean prefaceRead;
  private boolean settingsRead;
  private boolean failed;
  private boolean goingAway;
  private int lastStream;
  /** Whether the header block under way ends its stream (END_STREAM on its HEADERS). */
  private boolean endsStream;
  private int connectionRecvWindow = DEFAULT_WINDOW;
  private int connectionConsumed;

  Http2Session(DohConnection connection) {
    this.connection = connection;
    this.sender = new Http2Sender(connection, streams);
    connection.send(settings(new int[] {
        SETTINGS_MAX_CONCURRENT_STREAMS, DohConnection.MAX_IN_FLIGHT,
        SETTINGS_MAX_HEADER_LIST_SIZE, Http2HeaderBlock.MAX_HEADER_LIST}));
  }

  @Override
  public void read(ByteBuffer in) {
    if (!prefaceRead) {
      int n = Math.min(in.remaining(), PREFACE.length);
      for (int i = 0; i < n; i++) {
        if (in.get(in.position() + i) != PREFACE[i]) {
          fail(PROTOCOL_ERROR, "no HTTP/2 connection preface");
          return;
        }
      }
      if (n < PREFACE.length) {
        return;
      }
      in.position(in.position() + PREFACE.length);
      prefaceRead = true;
    }
    while (!failed && in.remaining() >= HEADER) {
      int at = in.position();
      int length = ((in.get(at) & 0xff) << 16) | ((in.get(at + 1) & 0xff) << 8) | (in.get(at + 2) & 0xff);
      int type = in.get(at + 3) & 0xff;
      int flags = in.get(at + 4) & 0xff;
      int stream = in.getInt(at + 5) & 0x7fffffff;
      if (length > DEFAULT_FRAME) {
        fail(FRAME_SIZE_ERROR, "a frame over " + DEFAULT_FRAME + " bytes");
        return;
      }
      if (in.remaining() < HEADER + length) {
        return;
      }
      ByteBuffer payload = in.slice(at + HEADER, length);
      in.position(at + HEADER + length);
      if (!settingsRead && type != SETTINGS) {
        fail(PROTOCOL_ERROR, "the preface must end with SETTINGS");
        return;
      }
      if (headerBlocks.continuing() != 0 && (type != CONTINUATION || stream != headerBlocks.continuing())) {
        fail(PROTOCOL_ERROR, "a header block cut by another frame");
        return;
      }
      onFrame(type, flags, stream, payload);
    }
  }

  private void onFrame(int type, int flags, int stream, ByteBuffer payload) {
    switch (type) {
      case DATA -> data(flags, stream, payload);
      case HEADERS -> headers(flags, stream, payload);
      case PRIORITY -> {
        if (stream == 0) {
          fail(PROTOCOL_ERROR, "PRIORITY on stream 0");
        } else if (payload.remaining() != 5) {
          fail(FRAME_SIZE_ERROR, "PRIORITY is 5 bytes");
        }
      }
      case RST_STREAM -> {
        if (payload.remaining() != 4) {
          fail(FRAME_SIZE_ERROR, "RST_STREAM is 4 bytes");
        } else if (stream == 0 || stream > lastStream) {
          fail(PROTOCOL_ERROR, "RST_STREAM on an idle stream");
        } else {
          // Its request, if in flight, still counts against the connection until answered.
          if (streams.remove(stream) != null) {
            connection.counted(ServerMetrics.HTTP_STREAM_RESET);
          }
        }
      }
      case SETTINGS -> onSettings(flags, stream, payload);
      case PUSH_PROMISE -> fail(PROTOCOL_ERROR, "a client cannot push");
      case PING -> {
        if (stream != 0) {
          fail(PROTOCOL_ERROR, "PING on a stream");
        } else if (payload.remaining() != 8) {
          fail(FRAME_SIZE_ERROR, "PING is 8 bytes");
        } else if ((flags & ACK) == 0) {
          byte[] data = new byte[8];
          payload.get(data);
          connection.send(frame(PING, ACK, 0, data));
        }
      }
      case GOAWAY -> {
        if (stream != 0) {
          fail(PROTOCOL_ERROR, "GOAWAY on a stream");
        } else {
          // The client leaves: what it asked is answered, nothing new is read.
          goingAway = true;
          connection.stop(null);
        }
      }
      case WINDOW_UPDATE -> onWindowUpdate(stream, payload);
      case CONTINUATION -> continuation(flags, stream, payload);
      default -> { } // unknown frame types are ignored (RFC 9113 section 4.1)
    }
  }

  private void onSettings(int flags, int stream, ByteBuffer payload) {
    if (stream != 0) {
      fail(PROTOCOL_ERROR, "SETTINGS on a stream");
      return;
    }
    if ((flags & ACK) != 0) {
      if (payload.hasRemaining()) {
        fail(FRAME_SIZE_ERROR, "a SETTINGS acknowledgement with a payload");
      }
      return;
    }
    if (payload.remaining() % 6 != 0) {
      fail(FRAME_SIZE_ERROR, "SETTINGS is a multiple of 6 bytes");
      return;
    }
    settingsRead = true;
    while (payload.hasRemaining()) {
      int id = payload.getShort() & 0xffff;
      long value = payload.getInt() & 0xffffffffL;
      if (id == SETTINGS_ENABLE_PUSH && value > 1) {
        fail(PROTOCOL_ERROR, "ENABLE_PUSH is 0 or 1");
        return;
      } else if (id == SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) {
          fail(FLOW_CONTROL_ERROR, "INITIAL_WINDOW_SIZE over 2^31-1");
          return;
        }
        if (!sender.initialWindow(value)) {
          fail(FLOW_CONTROL_ERROR, "a stream window over 2^31-1");
          return;
        }
      } else if (id == SETTINGS_MAX_FRAME_SIZE) {
        if (value < DEFAULT_FRAME || value > 0xffffff) {
          fail(PROTOCOL_ERROR, "MAX_FRAME_SIZE out of range");
          return;
        }
        sender.maxFrame((int) value);
      }
      // HEADER_TABLE_SIZE needs nothing (responses use the static table only), nor do the others.
    }
    connection.send(settingsAck());
    sender.pumpAll();
  }

  private void onWindowUpdate(int stream, ByteBuffer payload) {
    if (payload.remaining() != 4) {
      fail(FRAME_SIZE_ERROR, "WINDOW_UPDATE is 4 bytes");
      return;
    }
    int increment = payload.getInt() & 0x7fffffff;
    if (stream == 0) {
      if (increment == 0) {
        fail(PROTOCOL_ERROR, "a WINDOW_UPDATE of 0");
      } else if (!sender.connectionWindow(increment)) {
        fail(FLOW_CONTROL_ERROR, "the connection window over 2^31-1");
      } else {
        sender.pumpAll();
      }
      return;
    }
    if (stream > lastStream) {
      fail(PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream");
      return;
    }
    Http2Stream s = streams.get(stream);
    if (s == null) {
      return; // closed: a late update is harmless
    }
    if (increment == 0 || (s.sendWindow += increment) > MAX_WINDOW) {
      reset(s.id, increment == 0 ? PROTOCOL_ERROR : FLOW_CONTROL_ERROR);
      return;
    }
    sender.pump(s);
  }

  private void headers(int flags, int stream, ByteBuffer payload) {
    if (stream == 0 || (stream & 1) == 0) {
      fail(PROTOCOL_ERROR, "HEADERS on stream " + stream);
      return;
    }
    int padding = 0;
    if ((flags & PADDED) != 0) {
      if (!payload.hasRemaining()) {
        fail(FRAME_SIZE_ERROR, "PADDED without a pad length");
        return;
      }
      padding = payload.get() & 0xff;
    }
    if ((flags & PRIORITY_FLAG) != 0) {
      if (payload.remaining() < 5) {
        fail(FRAME_SIZE_ERROR, "HEADERS too short for its priority");
        return;
      }
      payload.position(payload.position() + 5);
    }
    if (padding > payload.remaining()) {
      fail(PROTOCOL_ERROR, "padding longer than the frame");
      return;
    }
    payload.limit(payload.limit() - padding);
    if (stream <= lastStream) {
      Http2Stream s = streams.get(stream);
      if (s == null || s.remoteClosed || (flags & END_STREAM) == 0) {
        fail(STREAM_CLOSED, "HEADERS on a closed stream");
        return;
      }
    } else {
      lastStream = stream;
    }
    try {
      endsStream = (flags & END_STREAM) != 0;
      if (headerBlocks.begin(stream, (flags & END_HEADERS) != 0, payload)) {
        headerBlock(stream, endsStream);
      }
    } catch (Http2HeaderBlock.ConnectionError e) {
      fail(e.code, e.getMessage());
    }
  }

  private void continuation(int flags, int stream, ByteBuffer payload) {
    if (headerBlocks.continuing() == 0 || stream != headerBlocks.continuing()) {
      fail(PROTOCOL_ERROR, "CONTINUATION without HEADERS");
      return;
    }
    try {
      if (headerBlocks.add((flags & END_HEADERS) != 0, payload)) {
        headerBlock(stream, endsStream);
      }
    } catch (Http2HeaderBlock.ConnectionError e) {
      fail(e.code, e.getMessage());
    }
  }

  /** A whole header block: a new request, trailers, or a stream refused. */
  private void headerBlock(int stream, boolean endStream) throws Http2HeaderBlock.ConnectionError {
    MetaData metaData = headerBlocks.decode();
    if (metaData == null) {
      streams.remove(stream);
      reset(stream, PROTOCOL_ERROR);
      return;
    }
    Http2Stream open = streams.get(stream);
    if (open != null) {
      // trailers: nothing in them matters to DoH
      endOfRequest(open);
      return;
    }
    if (!(metaData instanceof MetaData.Request request)) {
      reset(stream, PROTOCOL_ERROR);
      return;
    }
    if (goingAway || streams.size() >= DohConnection.MAX_IN_FLIGHT) {
      reset(stream, REFUSED_STREAM);
      return;
    }
    Http2Stream s = new Http2Stream(stream, sender.initialWindow());
    s.request = request;
    streams.put(stream, s);
    if (endStream) {
      endOfRequest(s);
    }
  }

  private void data(int flags, int stream, ByteBuffer payload) {
    if (stream == 0) {
      fail(PROTOCOL_ERROR, "DATA on stream 0");
      return;
    }
    int length = payload.remaining();
    // Flow control counts the whole frame, padding included (RFC 9113 section 6.9.1).
    connectionRecvWindow -= length;
    if (connectionRecvWindow < 0) {
      fail(FLOW_CONTROL_ERROR, "DATA over the connection window");
      return;
    }
    connectionConsumed += length;
    if (connectionConsumed >= DEFAULT_WINDOW / 2) {
      connection.send(windowUpdate(0, connectionConsumed));
      connectionRecvWindow += connectionConsumed;
      connectionConsumed = 0;
    }
    if ((flags & PADDED) != 0) {
      int padding = payload.hasRemaining() ? payload.get() & 0xff : -1;
      if (padding < 0 || padding > payload.remaining()) {
        fail(PROTOCOL_ERROR, "padding longer than the frame");
        return;
      }
      payload.limit(payload.limit() - padding);
    }
    if (stream > lastStream) {
      fail(PROTOCOL_ERROR, "DATA on an idle stream");
      return;
    }
    Http2Stream s = streams.get(stream);
    if (s == null || s.remoteClosed) {
      reset(stream, STREAM_CLOSED);
      return;
    }
    if ((s.recvWindow -= length) < 0) {
      streams.remove(stream);
      reset(stream, FLOW_CONTROL_ERROR);
      return;
    }
    int n = payload.remaining();
    int keep = (int) Math.max(0, Math.min(n, DohExchange.MAX_BODY + 1L - s.bodyFilled));
    if (keep > 0) {
      if (s.body.length < s.bodyFilled + keep) {
        s.body = java.util.Arrays.copyOf(s.body, Math.max(s.bodyFilled + keep, Math.min(2 * s.body.length, 65536)));
      }
      payload.get(s.body, s.bodyFilled, keep);
      s.bodyFilled += keep;
    }
    s.bodyLength += n;
    if (s.bodyLength > DohExchange.DRAIN_LIMIT) {
      // Not read further: answered now, the rest of the upload refused.
      s.remoteClosed = true;
      respond(s, DohExchange.Response.error(413, "a DNS message is at most " + DohExchange.MAX_BODY + " bytes"));
      reset(stream, NO_ERROR);
      streams.remove(stream);
      return;
    }
    if ((flags & END_STREAM) != 0) {
      endOfRequest(s);
      return;
    }
    s.recvConsumed += length;
    if (s.recvConsumed >= DEFAULT_WINDOW / 2) {
      connection.send(windowUpdate(stream, s.recvConsumed));
      s.recvWindow += s.recvConsumed;
      s.recvConsumed = 0;
    }
  }

  private void endOfRequest(Http2Stream s) {
    s.remoteClosed = true;
    MetaData.Request r = s.request;
    byte[] body = s.bodyFilled == s.body.length ? s.body : java.util.Arrays.copyOf(s.body, s.bodyFilled);
    s.body = null;
    connection.request(new DohExchange.Request(r.getMethod(), r.getHttpURI().getPathQuery(),
        r.getHttpFields().get(HttpHeader.CONTENT_TYPE), body, s.bodyLength), response -> respond(s, response));
  }

  private void respond(Http2Stream s, DohExchange.Response response) {
    if (!failed) {
      sender.respond(s, response);
    }
  }

  private void reset(int stream, int error) {
    connection.send(rstStream(stream, error));
  }

  /** A connection error: GOAWAY with its code, counted, then the connection closes. */
  private void fail(int error, String why) {
    if (failed) {
      return;
    }
    failed = true;
    streams.clear();
    connection.send(goaway(lastStream, error, why));
    connection.stop(ServerMetrics.HTTP_PROTOCOL_ERROR);
  }

  @Override
  public boolean accepting() {
    return !failed && !goingAway;
  }

  @Override
  public boolean busy() {
    if (failed) {
      return false;
    }
    for (Http2Stream s : streams.values()) {
      if (s.remoteClosed) {
        return true; // asked whole, not answered to its end (a stream still uploading is not busy: idle ends it)
      }
    }
    return false;
  }

  @Override
  public boolean stalled() {
    for (Http2Stream s : streams.values()) {
      if (s.pending != null) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void closing() {
    if (!failed) {
      connection.send(goaway(lastStream, NO_ERROR, "idle"));
    }
  }
}
