package io.shoal.transport.https;

import static io.shoal.transport.https.Http2Frames.*;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Map;

/**
 * What an HTTP/2 DoH connection sends its client: each response as HEADERS and DATA, in one buffer
 * (one TLS record) when the client's windows let the whole body out, else DATA frames as its
 * WINDOW_UPDATEs (or a larger SETTINGS_INITIAL_WINDOW_SIZE) open them, within its
 * SETTINGS_MAX_FRAME_SIZE (RFC 9113 sections 5.2 and 6.9).
 */
final class Http2Sender {
  private final DohConnection connection;
  /** The session's open streams: a stream whose response went out whole leaves them. */
  private final Map<Integer, Http2Stream> streams;
  private long connectionSendWindow = DEFAULT_WINDOW;
  private long initialSendWindow = DEFAULT_WINDOW;
  private int peerMaxFrame = DEFAULT_FRAME;

  Http2Sender(DohConnection connection, Map<Integer, Http2Stream> streams) {
    this.connection = connection;
    this.streams = streams;
  }

  /** The window a new stream starts with: the client's SETTINGS_INITIAL_WINDOW_SIZE. */
  long initialWindow() {
    return initialSendWindow;
  }

  /** The client's new SETTINGS_INITIAL_WINDOW_SIZE, applied to open streams too; false when one overflows. */
  boolean initialWindow(long value) {
    long delta = value - initialSendWindow;
    initialSendWindow = value;
    for (Http2Stream s : streams.values()) {
      s.sendWindow += delta;
      if (s.sendWindow > MAX_WINDOW) {
        return false;
      }
    }
    return true;
  }

  void maxFrame(int value) {
    peerMaxFrame = value;
  }

  /** The client opened the connection's window by {@code increment}; false when it overflows. */
  boolean connectionWindow(int increment) {
    connectionSendWindow += increment;
    return connectionSendWindow <= MAX_WINDOW;
  }

  /** The response of {@code s}: HEADERS, then DATA as far as the windows let it, in one buffer when it all fits. */
  void respond(Http2Stream s, DohExchange.Response response) {
    if (streams.get(s.id) != s) {
      return; // reset by the client: nobody waits for it
    }
    byte[] headerBlock = responseHeaders(response);
    byte[] body = response.body();
    int sendable = (int) Math.min(body.length, Math.min(peerMaxFrame, Math.min(connectionSendWindow, s.sendWindow)));
    boolean whole = sendable == body.length;
    ByteBuffer b = ByteBuffer.allocate(2 * HEADER + headerBlock.length + (whole ? body.length : 0));
    header(b, headerBlock.length, HEADERS, END_HEADERS | (body.length == 0 ? END_STREAM : 0), s.id);
    b.put(headerBlock);
    if (whole && body.length > 0) {
      header(b, body.length, DATA, END_STREAM, s.id);
      b.put(body);
      connectionSendWindow -= body.length;
      s.sendWindow -= body.length;
    }
    connection.send(b.flip());
    if (whole) {
      streams.remove(s.id);
    } else {
      s.pending = ByteBuffer.wrap(body);
      pump(s);
    }
  }

  /** Sends what of {@code s}'s response body the windows allow now. */
  void pump(Http2Stream s) {
    ByteBuffer pending = s.pending;
    while (pending != null && pending.hasRemaining() && connectionSendWindow > 0 && s.sendWindow > 0) {
      int n = (int) Math.min(pending.remaining(), Math.min(peerMaxFrame, Math.min(connectionSendWindow, s.sendWindow)));
      boolean last = n == pending.remaining();
      ByteBuffer b = ByteBuffer.allocate(HEADER + n);
      header(b, n, DATA, last ? END_STREAM : 0, s.id);
      b.put(pending.slice(pending.position(), n));
      pending.position(pending.position() + n);
      connectionSendWindow -= n;
      s.sendWindow -= n;
      connection.send(b.flip());
    }
    if (pending != null && !pending.hasRemaining()) {
      streams.remove(s.id);
    }
  }

  void pumpAll() {
    for (Http2Stream s : new ArrayList<>(streams.values())) {
      if (s.pending != null) {
        pump(s);
      }
    }
  }
}
