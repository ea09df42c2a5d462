package io.shoal.transport.https;

import akka.Done;
import akka.actor.typed.ActorSystem;
import akka.http.javadsl.ConnectionContext;
import akka.http.javadsl.Http;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.ServerBuilder;
import akka.http.javadsl.model.AttributeKeys;
import akka.http.javadsl.model.ContentType;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpMethods;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.MediaTypes;
import akka.http.javadsl.model.RemoteAddress;
import akka.http.javadsl.model.StatusCode;
import akka.http.javadsl.model.StatusCodes;
import akka.http.javadsl.model.headers.CacheControl;
import akka.http.javadsl.model.headers.CacheDirectives;
import akka.http.scaladsl.model.EntityStreamSizeException;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.tls.CountedHandshakeEngine;
import io.shoal.transport.tls.ServerCertificate;
import io.shoal.wire.AnswerRenderer;
import io.shoal.wire.Padding;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import akka.util.ByteString;
import akka.util.ByteStringBuilder;
import java.net.InetAddress;
import java.time.Duration;
import java.net.InetSocketAddress;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * DNS over HTTPS (RFC 8484) on akka-http, HTTP/1.1 and HTTP/2: {@code GET /dns-query?dns=} with the
 * query in base64url and {@code POST /dns-query} with an {@code application/dns-message} body go
 * through the same front door as every transport; the reply says how long it may be cached.
 */
public final class DohTransport {
  static final String PATH = "/dns-query";
  static final String MEDIA = "application/dns-message";
  /** The largest DNS message: a longer body cannot be one. */
  static final int MAX_BODY = 65535;
  /** A body longer than this is not read to its end: the stream or connection is reset instead. */
  static final long DRAIN_LIMIT = 1 << 20;
  /** How long a POST body may take to arrive. */
  private static final Duration BODY_TIME = Duration.ofSeconds(10);
  private static final ContentType.Binary DNS_MESSAGE =
      ContentTypes.create(MediaTypes.applicationBinary("dns-message", false));

  private final ServerBinding binding;

  private DohTransport(ServerBinding binding) {
    this.binding = binding;
  }

  /**
   * Binds {@code address}, over TLS with {@code certificate}'s current context for each new
   * connection, or over plain HTTP when {@code certificate} is null.
   */
  public static CompletionStage<DohTransport> bind(
      ActorSystem<?> system, InetSocketAddress address, ServerCertificate certificate, Ingress ingress,
      ServerMetrics metrics) {
    Handler handler = new Handler(system, ingress, metrics);
    ServerBuilder server = Http.get(system).newServerAt(address.getHostString(), address.getPort())
        .adaptSettings(s -> s.withRemoteAddressAttribute(true)
            .withPreviewServerSettings(s.getPreviewServerSettings().withEnableHttp2(true)));
    if (certificate != null) {
      // akka-http takes one engine supplier for every connection: each engine counts its own failed handshake
      server = server.enableHttps(ConnectionContext.httpsServer(() -> new CountedHandshakeEngine(
          certificate.serverEngine(null), () -> metrics.dropped(ServerMetrics.TLS_HANDSHAKE))));
    }
    return server.bind(handler::handle).thenApply(DohTransport::new);
  }

  public InetSocketAddress localAddress() {
    return binding.localAddress();
  }

  /** Stops accepting connections; requests in flight are answered. */
  public CompletionStage<Done> unbind() {
    return binding.unbind().thenApply(x -> Done.getInstance());
  }

  /** A POST body as it arrives: its first MAX_BODY bytes and how many came in all. */
  private static final class Body {
    final ByteStringBuilder bytes = new ByteStringBuilder();
    long total;

    Body add(ByteString chunk) {
      if (total + chunk.size() <= MAX_BODY) {
        bytes.append(chunk);
      }
      total += chunk.size();
      return this;
    }
  }

  /** One request in, one response out. */
  private static final class Handler {
    private final ActorSystem<?> system;
    private final Ingress ingress;
    private final ServerMetrics metrics;

    Handler(ActorSystem<?> system, Ingress ingress, ServerMetrics metrics) {
      this.system = system;
      this.ingress = ingress;
      this.metrics = metrics;
    }

    CompletionStage<HttpResponse> handle(HttpRequest request) {
      if (!request.getUri().path().equals(PATH)) {
        return refuse(request, StatusCodes.NOT_FOUND, "DNS queries go to " + PATH);
      }
      InetSocketAddress client = client(request);
      // No address (never expected: the attribute is switched on) must not bypass access control.
      if (client == null || !ingress.admitsConnection(client.getAddress())) {
        return refuse(request, StatusCodes.FORBIDDEN, "not served");
      }
      if (request.method().equals(HttpMethods.GET)) {
        request.discardEntityBytes(system);
        Optional<String> dns = request.getUri().query().get("dns");
        if (dns.isEmpty()) {
          return done(error(StatusCodes.BAD_REQUEST, "missing the dns parameter"));
        }
        byte[] packet;
        try {
          packet = Base64.getUrlDecoder().decode(dns.get());
        } catch (IllegalArgumentException e) {
          return done(error(StatusCodes.BAD_REQUEST, "dns is not base64url: " + e.getMessage()));
        }
        return answer(packet, client);
      }
      if (request.method().equals(HttpMethods.POST)) {
        String type = request.entity().getContentType().mediaType().toString().toLowerCase(Locale.ROOT);
        if (!type.equals(MEDIA)) {
          return refuse(request, StatusCodes.UNSUPPORTED_MEDIA_TYPE, "send " + MEDIA);
        }
        // The body is read to its end (up to DRAIN_LIMIT) even past MAX_BODY: an HTTP/2 client whose
        // upload is cut off gets a stream reset instead of the 413 that tells it why.
        return request.entity().withSizeLimit(DRAIN_LIMIT).getDataBytes()
            .completionTimeout(BODY_TIME)
            .runFold(new Body(), Body::add, system)
            .thenCompose(body -> body.total > MAX_BODY
                ? done(error(StatusCodes.PAYLOAD_TOO_LARGE, "a DNS message is at most " + MAX_BODY + " bytes"))
                : answer(body.bytes.result().toArray(), client))
            .exceptionally(failure -> {
              Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                  ? failure.getCause() : failure;
              if (cause instanceof EntityStreamSizeException) {
                return error(StatusCodes.PAYLOAD_TOO_LARGE, "a DNS message is at most " + MAX_BODY + " bytes");
              }
              return error(StatusCodes.BAD_REQUEST, "cannot read the body: " + cause.getMessage());
            });
      }
      return refuse(request, StatusCodes.METHOD_NOT_ALLOWED, "use GET or POST");
    }

    private CompletionStage<HttpResponse> answer(byte[] packet, InetSocketAddress client) {
      if (packet.length < 12) {
        metrics.dropped(ServerMetrics.MALFORMED);
        return done(error(StatusCodes.BAD_REQUEST, "not a DNS message"));
      }
      CompletionStage<Optional<byte[]>> padded =
          ingress.ask(packet, client, Protocol.DOH).thenApply(reply -> Padding.forQuery(packet, reply));
      return padded.thenApply(reply -> {
        if (reply.isEmpty()) {
          // Dropped by the front door (malformed, a response, or denied): it is counted there.
          return error(StatusCodes.BAD_REQUEST, "not a DNS query");
        }
        byte[] wire = reply.get();
        metrics.answered(Protocol.DOH.label(), AnswerRenderer.rcode(wire));
        return HttpResponse.create()
            .withEntity(HttpEntities.create(DNS_MESSAGE, wire))
            .addHeader(CacheControl.create(CacheDirectives.MAX_AGE(maxAge(wire))));
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

    private static InetSocketAddress client(HttpRequest request) {
      Optional<RemoteAddress> remote = request.getAttribute(AttributeKeys.remoteAddress);
      InetAddress address = remote.flatMap(RemoteAddress::getAddress).orElse(null);
      return address == null ? null : new InetSocketAddress(address, remote.get().getPort());
    }

    private CompletionStage<HttpResponse> refuse(HttpRequest request, StatusCode status, String why) {
      request.discardEntityBytes(system);
      return done(error(status, why));
    }

    private static HttpResponse error(StatusCode status, String why) {
      return HttpResponse.create().withStatus(status).withEntity("shoal DoH: " + why + "\n");
    }

    private static CompletionStage<HttpResponse> done(HttpResponse response) {
      return CompletableFuture.completedFuture(response);
    }
  }
}
