package io.shoal.transport.https;

import io.shoal.metrics.ServerMetrics;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Locale;

/**
 * HTTP/1.1 (RFC 9112) as DoH needs it: keep-alive, requests pipelined and answered in order, GET,
 * and POST with a Content-Length or chunked body (read to its end up to {@link
 * DohExchange#DRAIN_LIMIT} so a too-large one gets its 413; longer, the connection closes after the
 * 413). A request that cannot be read (no request line, a head over {@link #MAX_HEAD} bytes, a
 * transfer coding other than chunked, both a Content-Length and a Transfer-Encoding, a malformed
 * chunk) gets its status and the connection closes.
 */
final class Http1Session implements HttpSession {
  /** A request's head (request line and header fields) is at most this long. */
  static final int MAX_HEAD = 16 * 1024;
  /** Requests read ahead of the one being answered. */
  private static final int PIPELINE = 16;
  private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  /** A request taken, in order, and its response once it has one. */
  private static final class Slot {
    final boolean close;
    DohExchange.Response response;

    Slot(boolean close) {
      this.close = close;
    }
  }

  private final DohConnection connection;
  private final ArrayDeque<Slot> slots = new ArrayDeque<>();
  /** The request whose body is being read; null while a head is awaited. */
  private String method;
  private String target;
  private String contentType;
  private boolean closeAfter;
  private byte[] body;
  private int bodyFilled;
  private long bodyLength;
  private long bodyLeft;
  /** Where a chunked body is (RFC 9112 section 7.1); null for a Content-Length body. */
  private Chunk chunk;
  private int trailerBytes;
  private boolean done;

  private enum Chunk { SIZE, DATA, DATA_END, TRAILER }

  Http1Session(DohConnection connection) {
    this.connection = connection;
  }

  @Override
  public void read(ByteBuffer in) {
    while (!done && slots.size() < PIPELINE && in.hasRemaining()) {
      if (method != null && chunk != null) {
        if (!readChunked(in)) {
          return;
        }
        continue;
      }
      if (method != null) {
        take(in);
        if (bodyLeft == 0) {
          dispatch();
        }
        continue;
      }
      int end = headEnd(in);
      if (end < 0) {
        if (in.remaining() > MAX_HEAD) {
          refuse(431, "the request head is over " + MAX_HEAD + " bytes");
        }
        return;
      }
      String head = new String(in.array(), in.arrayOffset() + in.position(), end - in.position(),
          StandardCharsets.ISO_8859_1);
      in.position(end + 4);
      head(head);
    }
  }

  /** Up to {@link #bodyLeft} bytes of the body, keeping the first {@link DohExchange#MAX_BODY}. */
  private void take(ByteBuffer in) {
    int n = (int) Math.min(in.remaining(), bodyLeft);
    if (bodyFilled + n > body.length && body.length < DohExchange.MAX_BODY) {
      body = Arrays.copyOf(body, (int) Math.min(DohExchange.MAX_BODY, Math.max(bodyFilled + n, 2L * body.length)));
    }
    int keep = Math.min(n, body.length - bodyFilled);
    in.get(body, bodyFilled, keep);
    bodyFilled += keep;
    in.position(in.position() + n - keep);
    bodyLeft -= n;
  }

  /**
   * Reads a chunked body as far as {@code in} goes: sizes, data, the CRLF after each, trailers.
   * False when a line is not complete yet (more input is needed).
   */
  private boolean readChunked(ByteBuffer in) {
    while (method != null && !done && in.hasRemaining()) {
      if (chunk == Chunk.DATA) {
        take(in);
        if (bodyLeft == 0) {
          chunk = Chunk.DATA_END;
        }
        continue;
      }
      int eol = lineEnd(in);
      if (eol < 0) {
        if (in.remaining() > MAX_HEAD) {
          refuse(431, "a chunk line is over " + MAX_HEAD + " bytes");
        }
        return false;
      }
      String line = new String(in.array(), in.arrayOffset() + in.position(), eol - in.position(),
          StandardCharsets.ISO_8859_1);
      in.position(eol + 2);
      switch (chunk) {
        case DATA_END -> {
          if (!line.isEmpty()) {
            refuse(400, "a chunk longer than its size");
            return true;
          }
          chunk = Chunk.SIZE;
        }
        case TRAILER -> {
          trailerBytes += line.length() + 2;
          if (trailerBytes > MAX_HEAD) {
            refuse(431, "the trailer is over " + MAX_HEAD + " bytes");
          } else if (line.isEmpty()) {
            chunk = null;
            dispatch();
          }
        }
        default -> {
          long size = chunkSize(line);
          if (size < 0) {
            refuse(400, "a bad chunk size");
          } else if (size == 0) {
            chunk = Chunk.TRAILER;
          } else if (bodyLength + size > DohExchange.DRAIN_LIMIT) {
            tooLarge();
          } else {
            bodyLength += size;
            bodyLeft = size;
            chunk = Chunk.DATA;
          }
        }
      }
    }
    return true;
  }

  /** A chunk-size line's size (hexadecimal, extensions after ';' ignored), or -1. */
  private static long chunkSize(String line) {
    int semi = line.indexOf(';');
    String hex = (semi < 0 ? line : line.substring(0, semi)).trim();
    if (hex.isEmpty() || hex.length() > 8) {
      return -1;
    }
    try {
      return Long.parseLong(hex, 16);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The index of the CRLF that ends the line at {@code in}'s position, or -1. */
  private static int lineEnd(ByteBuffer in) {
    for (int i = in.position(), last = in.limit() - 2; i <= last && i - in.position() <= MAX_HEAD; i++) {
      if (in.get(i) == '\r' && in.get(i + 1) == '\n') {
        return i;
      }
    }
    return -1;
  }

  /** The index of the CRLFCRLF that ends the head in {@code in}, or -1. */
  private static int headEnd(ByteBuffer in) {
    for (int i = in.position(), last = in.limit() - 4; i <= last && i - in.position() <= MAX_HEAD; i++) {
      if (in.get(i) == '\r' && in.get(i + 1) == '\n' && in.get(i + 2) == '\r' && in.get(i + 3) == '\n') {
        return i;
      }
    }
    return -1;
  }

  private void head(String head) {
    String[] lines = head.split("\r\n");
    String[] requestLine = lines[0].split(" ");
    if (requestLine.length != 3 || !requestLine[2].startsWith("HTTP/1.")) {
      refuse(400, "not an HTTP/1.1 request line");
      return;
    }
    boolean http10 = requestLine[2].equals("HTTP/1.0");
    boolean close = http10;
    String type = null;
    long length = 0;
    boolean hasLength = false;
    boolean isChunked = false;
    boolean expectContinue = false;
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon <= 0) {
        refuse(400, "a header line without a name");
        return;
      }
      String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = lines[i].substring(colon + 1).trim();
      switch (name) {
        case "content-type" -> type = value;
        case "content-length" -> {
          try {
            long l = Long.parseLong(value);
            if (l < 0 || (length != 0 && l != length)) {
              throw new NumberFormatException(value);
            }
            length = l;
            hasLength = true;
          } catch (NumberFormatException e) {
            refuse(400, "a bad Content-Length");
            return;
          }
        }
        case "transfer-encoding" -> {
          if (http10) {
            refuse(400, "a transfer coding in an HTTP/1.0 request");
            return;
          }
          if (!value.equalsIgnoreCase("chunked")) {
            refuse(501, "only the chunked transfer coding is understood");
            return;
          }
          isChunked = true;
        }
        case "connection" -> {
          String v = value.toLowerCase(Locale.ROOT);
          close = v.contains("close") || (http10 && !v.contains("keep-alive"));
        }
        case "expect" -> expectContinue = value.equalsIgnoreCase("100-continue");
        default -> { }
      }
    }
    if (isChunked && hasLength) {
      // RFC 9112 section 6.3: a request with both may be an attempt at request smuggling
      refuse(400, "both a Content-Length and a Transfer-Encoding");
      return;
    }
    if (length > DohExchange.DRAIN_LIMIT) {
      tooLarge();
      return;
    }
    method = requestLine[0];
    target = requestLine[1];
    contentType = type;
    closeAfter = close;
    bodyLength = length;
    bodyLeft = length;
    body = new byte[isChunked ? 512 : (int) Math.min(length, DohExchange.MAX_BODY)];
    bodyFilled = 0;
    chunk = isChunked ? Chunk.SIZE : null;
    trailerBytes = 0;
    if (expectContinue && (length > 0 || isChunked) && slots.isEmpty()) {
      connection.send(ByteBuffer.wrap(CONTINUE));
    }
    if (length == 0 && !isChunked) {
      dispatch();
    }
  }

  /** A body over {@link DohExchange#DRAIN_LIMIT}: 413, and the connection closes after it. */
  private void tooLarge() {
    slots.add(new Slot(true));
    respond(slots.peekLast(), DohExchange.Response.error(413,
        "a DNS message is at most " + DohExchange.MAX_BODY + " bytes"));
    done = true;
    method = null;
    connection.stop(null);
  }

  private void dispatch() {
    Slot slot = new Slot(closeAfter);
    slots.add(slot);
    byte[] got = bodyFilled == body.length ? body : Arrays.copyOf(body, bodyFilled);
    DohExchange.Request request = new DohExchange.Request(method, target, contentType, got, bodyLength);
    method = null;
    body = null;
    if (slot.close) {
      done = true;
      connection.stop(null);
    }
    connection.request(request, response -> respond(slot, response));
  }

  /** A request that cannot be read: its status, then the connection closes. */
  private void refuse(int status, String why) {
    Slot slot = new Slot(true);
    slots.add(slot);
    done = true;
    connection.stop(ServerMetrics.HTTP_PROTOCOL_ERROR);
    respond(slot, DohExchange.Response.error(status, why));
  }

  /** Writes the responses that are ready, in the order their requests came. */
  private void respond(Slot slot, DohExchange.Response response) {
    slot.response = response;
    while (!slots.isEmpty() && slots.peek().response != null) {
      Slot head = slots.poll();
      connection.send(encode(head.response, head.close));
    }
  }

  private static ByteBuffer encode(DohExchange.Response r, boolean close) {
    StringBuilder h = new StringBuilder(160).append("HTTP/1.1 ").append(r.status()).append(' ')
        .append(reason(r.status())).append("\r\nContent-Type: ").append(r.contentType())
        .append("\r\nContent-Length: ").append(r.body().length);
    if (r.maxAge() >= 0) {
      h.append("\r\nCache-Control: max-age=").append(r.maxAge());
    }
    if (close) {
      h.append("\r\nConnection: close");
    }
    byte[] head = h.append("\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    return ByteBuffer.allocate(head.length + r.body().length).put(head).put(r.body()).flip();
  }

  static String reason(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 413 -> "Payload Too Large";
      case 415 -> "Unsupported Media Type";
      case 431 -> "Request Header Fields Too Large";
      case 501 -> "Not Implemented";
      default -> "Internal Server Error";
    };
  }

  @Override
  public boolean accepting() {
    return !done && slots.size() < PIPELINE;
  }

  @Override
  public boolean busy() {
    return !slots.isEmpty();
  }

  @Override
  public boolean stalled() {
    return false;
  }

  @Override
  public void closing() {
    // HTTP/1.1 has nothing to say before its FIN
  }
}
