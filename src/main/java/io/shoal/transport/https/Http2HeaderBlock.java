package io.shoal.transport.https;

import static io.shoal.transport.https.Http2Frames.ENHANCE_YOUR_CALM;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.hpack.HpackDecoder;
import org.eclipse.jetty.http2.hpack.HpackException;

/**
 * The header block of one request as HEADERS and CONTINUATION frames bring it, at most
 * {@link #MAX_HEADER_LIST} bytes in at most {@link #MAX_CONTINUATIONS} CONTINUATION frames, decoded
 * whole by Jetty's HPACK decoder, which keeps the connection's dynamic table (RFC 7541).
 */
final class Http2HeaderBlock {
  /** The encoded block and the decoded header list of a request are at most this long. */
  static final int MAX_HEADER_LIST = 16 * 1024;
  /** CONTINUATION frames of one block at most: empty ones cost the server work and carry nothing. */
  static final int MAX_CONTINUATIONS = 16;

  /** An HTTP/2 connection error (RFC 9113 section 5.4.1): its code and what the client did. */
  static final class ConnectionError extends Exception {
    final int code;

    ConnectionError(int code, String message) {
      super(message, null, false, false);
      this.code = code;
    }
  }

  private final HpackDecoder decoder = new HpackDecoder(MAX_HEADER_LIST, System::nanoTime);
  private ByteBuffer block;
  /** The stream whose block continues in CONTINUATION frames; 0: none. */
  private int continuing;
  private int continuations;

  /** The stream whose block awaits CONTINUATION frames, or 0. */
  int continuing() {
    return continuing;
  }

  /** A HEADERS frame's fragment: true when the block is whole (END_HEADERS). */
  boolean begin(int stream, boolean endHeaders, ByteBuffer fragment) throws ConnectionError {
    block = ByteBuffer.allocate(Math.min(MAX_HEADER_LIST, Math.max(fragment.remaining(), 256)));
    continuations = 0;
    append(fragment);
    continuing = endHeaders ? 0 : stream;
    return endHeaders;
  }

  /** A CONTINUATION frame's fragment of the block under way: true when the block is whole. */
  boolean add(boolean endHeaders, ByteBuffer fragment) throws ConnectionError {
    if (++continuations > MAX_CONTINUATIONS) {
      throw new ConnectionError(ENHANCE_YOUR_CALM, "more than " + MAX_CONTINUATIONS + " CONTINUATION frames");
    }
    append(fragment);
    if (endHeaders) {
      continuing = 0;
    }
    return endHeaders;
  }

  private void append(ByteBuffer fragment) throws ConnectionError {
    if (block.position() + fragment.remaining() > MAX_HEADER_LIST) {
      throw new ConnectionError(ENHANCE_YOUR_CALM, "a header block over " + MAX_HEADER_LIST + " bytes");
    }
    if (block.remaining() < fragment.remaining()) {
      ByteBuffer bigger = ByteBuffer.allocate(Math.min(MAX_HEADER_LIST,
          Math.max(block.capacity() * 2, block.position() + fragment.remaining())));
      block = bigger.put(block.flip());
    }
    block.put(fragment);
  }

  /**
   * The whole block decoded (the decoder's table kept in step even for a stream that will be
   * refused); null when the block is well encoded but not a valid request (a stream error).
   */
  MetaData decode() throws ConnectionError {
    try {
      return decoder.decode(block.flip());
    } catch (HpackException.StreamException e) {
      return null;
    } catch (HpackException.SessionException e) {
      throw new ConnectionError(Http2Frames.COMPRESSION_ERROR, "the header block cannot be decoded");
    } finally {
      block = null;
    }
  }
}
