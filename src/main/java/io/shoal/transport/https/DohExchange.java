package io.shoal.transport.https;

import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.TcpTransport;
import io.shoal.wire.AnswerRenderer;
import io.shoal.wire.Padding;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WellFormed;
import io.shoal.wire.WireException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * RFC 8484 whatever the HTTP version: {@code GET /dns-query?dns=} with the query in base64url and
 * {@code POST /dns-query} with an {@code application/dns-message} body go through the same front
 * door as every transport; the reply says how long it may be cached. What is not a DNS request is
 * an HTTP error; a DNS message shoal does not serve (another opcode, no question) is answered in
 * DNS, as over UDP.
 */
final class DohExchange {
  static final String PATH = "/dns-query";
  static final String MEDIA = "application/dns-message";
  /** The largest DNS message: a longer body cannot be one. */
  static final int MAX_BODY = 65535;
  /** A longer body is not read to its end: the stream is reset, or the HTTP/1.1 connection closed. */
  static final long DRAIN_LIMIT = 1 << 20;
  private static final String TEXT = "text/plain; charset=UTF-8";

  /** One request as the HTTP layer read it: its body's first MAX_BODY bytes and how many came. */
  record Request(String method, String target, String contentType, byte[] body, long bodyLength) {}

  /** One response: a status, a body of a type, and a max-age (-1: no Cache-Control). */
  record Response(int status, String contentType, byte[] body, long maxAge) {
    static Response error(int status, String why) {
      return new Response(status, TEXT, ("shoal DoH: " + why + "\n").getBytes(StandardCharsets.UTF_8), -1);
    }
  }

  private final Ingress ingress;
  private final ServerMetrics metrics;

  DohExchange(Ingress ingress, ServerMetrics metrics) {
    this.ingress = ingress;
    this.metrics = metrics;
  }

  /** The response to {@code request} from {@code client}: complete at once for a hit or an error. */
  CompletableFuture<Response> serve(Request request, InetSocketAddress client) {
    String target = request.target();
    if (target.startsWith("http://") || target.startsWith("https://")) {
      // absolute form (RFC 9112 section 3.2.2): the path starts after the authority
      int slash = target.indexOf('/', target.indexOf("//") + 2);
      target = slash < 0 ? "/" : target.substring(slash);
    }
    int question = target.indexOf('?');
    String path = question < 0 ? target : target.substring(0, question);
    if (!path.equals(PATH)) {
      return done(Response.error(404, "DNS queries go to " + PATH));
    }
    if (!ingress.admitsConnection(client.getAddress())) {
      return done(Response.error(403, "not served"));
    }
    switch (request.method()) {
      case "GET":
        String dns = question < 0 ? null : parameter(target.substring(question + 1), "dns");
        if (dns == null) {
          return done(Response.error(400, "missing the dns parameter"));
        }
        byte[] packet;
        try {
          packet = Base64.getUrlDecoder().decode(dns);
        } catch (IllegalArgumentException e) {
          return done(Response.error(400, "dns is not base64url: " + e.getMessage()));
        }
        return answer(packet, client);
      case "POST":
        if (!MEDIA.equals(mediaType(request.contentType()))) {
          return done(Response.error(415, "send " + MEDIA));
        }
        if (request.bodyLength() > MAX_BODY) {
          return done(Response.error(413, "a DNS message is at most " + MAX_BODY + " bytes"));
        }
        return answer(request.body(), client);
      default:
        return done(Response.error(405, "use GET or POST"));
    }
  }

  private CompletableFuture<Response> answer(byte[] packet, InetSocketAddress client) {
    if (!WellFormed.message(packet)) {
      metrics.dropped(ServerMetrics.MALFORMED);
      return done(Response.error(400, "not a DNS message"));
    }
    return ingress.ask(packet, client, Protocol.DOH).toCompletableFuture().thenApply(reply -> {
      var padded = Padding.forQuery(packet, reply);
      if (padded.isEmpty()) {
        // Dropped by the front door (malformed, a response, or denied): it is counted there.
        return Response.error(400, "not a DNS query");
      }
      byte[] wire = TcpTransport.untruncated(padded.get());
      metrics.answered(Protocol.DOH.label(), AnswerRenderer.rcode(wire));
      return new Response(200, MEDIA, wire, maxAge(wire));
    });
  }

  /** RFC 8484 section 5.1: no longer than the smallest TTL of the reply's records. */
  private static long maxAge(byte[] wire) {
    try {
      return ScannedAnswer.scan(wire).minTtl();
    } catch (WireException e) {
      return 0;
    }
  }

  /** The value of {@code name} in a query string, percent-decoded; null when it is not there. */
  static String parameter(String query, String name) {
    int at = 0;
    while (at <= query.length()) {
      int end = query.indexOf('&', at);
      if (end < 0) {
        end = query.length();
      }
      if (query.startsWith(name, at) && at + name.length() < end && query.charAt(at + name.length()) == '=') {
        return percentDecoded(query.substring(at + name.length() + 1, end));
      }
      at = end + 1;
    }
    return null;
  }

  /** Base64url needs no escapes, but a client may still escape its padding ("%3D"). */
  private static String percentDecoded(String value) {
    if (value.indexOf('%') < 0) {
      return value;
    }
    StringBuilder b = new StringBuilder(value.length());
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '%' && i + 2 < value.length()) {
        int hi = Character.digit(value.charAt(i + 1), 16);
        int lo = Character.digit(value.charAt(i + 2), 16);
        if (hi >= 0 && lo >= 0) {
          b.append((char) (hi << 4 | lo));
          i += 2;
          continue;
        }
      }
      b.append(c);
    }
    return b.toString();
  }

  /** The media type of a Content-Type value, without parameters, in lower case; "" when none. */
  private static String mediaType(String contentType) {
    if (contentType == null) {
      return "";
    }
    int semicolon = contentType.indexOf(';');
    return (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).trim().toLowerCase(Locale.ROOT);
  }

  private static CompletableFuture<Response> done(Response response) {
    return CompletableFuture.completedFuture(response);
  }
}
