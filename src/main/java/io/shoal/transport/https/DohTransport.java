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
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.OpenFiles;
import io.shoal.transport.StreamConnection;
import io.shoal.transport.StreamConnections;
import io.shoal.transport.tls.CountedHandshakeEngine;
import io.shoal.transport.tls.ServerCertificate;
import io.shoal.wire.AnswerRenderer;
import io.shoal.wire.Padding;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WellFormed;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

  private static final Logger log = LoggerFactory.getLogger(DohTransport.class);

  private final ServerBinding binding;
  private final DohSockets sockets;

  private DohTransport(ServerBinding binding, DohSockets sockets) {
    this.binding = binding;
    this.sockets = sockets;
  }

  /**
   * Binds {@code address}, over TLS with {@code certificate}'s current context for each new
   * connection, or over plain HTTP when {@code certificate} is null. Its connections follow
   * {@code limits} as TCP's and DoT's do (a cap of their own, the handshake, first-request and
   * idle deadlines), through {@link DohConnectionHook}, which the actor system must have as
   * {@code akka.http.http2-telemetry-class}.
   */
  public static CompletionStage<DohTransport> bind(
      ActorSystem<?> system, InetSocketAddress address, ServerCertificate certificate, TcpSettings limits,
      Ingress ingress, ServerMetrics metrics) {
    int cap = limits.connectionCap(OpenFiles.limit(), Runtime.getRuntime().maxMemory());
    StreamConnections connections = StreamConnections.forRequests(system, Protocol.DOH, limits, cap, metrics);
    DohSockets sockets = DohSockets.ID.get(system.classicSystem());
    boolean tls = certificate != null;
    if (address.getPort() != 0) {
      sockets.register(address.getPort(), connections, tls);
    }
    log.info("DoH: at most {} connections open, a handshake must finish within {} ms, a first request arrive "
        + "within {} ms, idle connections close after {} ms", cap, limits.handshakeTimeout().toMillis(),
        limits.firstQueryTimeout().toMillis(), limits.idleTimeout().toMillis());
    Handler handler = new Handler(system, ingress, metrics, connections);
    ServerBuilder server = Http.get(system).newServerAt(address.getHostString(), address.getPort())
        // The cap is shoal's (over it a socket is closed at once); akka-http's own must not stop
        // accepting first.
        .adaptSettings(s -> s.withRemoteAddressAttribute(true)
            .withMaxConnections(Math.max(s.getMaxConnections(), 2 * cap))
            .withPreviewServerSettings(s.getPreviewServerSettings().withEnableHttp2(true)));
    if (tls) {
      // akka-http takes one engine supplier for every connection: each engine learns its connection
      // from the label DohConnectionHook puts in front of the client's bytes, and counts a failed
      // handshake through it (not when a deadline already closed the connection, and counted it).
      server = server.enableHttps(ConnectionContext.httpsServer(() -> CountedHandshakeEngine.labelled(
          certificate.serverEngine(null), src -> handshakeFailure(ConnectionLabel.read(src), connections, metrics),
          () -> metrics.dropped(ServerMetrics.TLS_RENEGOTIATION))));
    }
    return server.bind(handler::handle).thenApply(binding -> {
      sockets.register(binding.localAddress().getPort(), connections, tls);
      return new DohTransport(binding, sockets);
    });
  }

  /**
   * What a failed handshake of {@code client}'s connection runs: its connection counts it, unless
   * already closed for a counted reason. A socket the hook did not see is counted directly.
   */
  private static Runnable handshakeFailure(InetSocketAddress client, StreamConnections connections,
      ServerMetrics metrics) {
    StreamConnection connection = connections.connection(client);
    return connection != null
        ? () -> connection.ending(ServerMetrics.TLS_HANDSHAKE)
        : () -> metrics.dropped(ServerMetrics.TLS_HANDSHAKE);
  }

  public InetSocketAddress localAddress() {
    return binding.localAddress();
  }

  /** Stops accepting connections; requests in flight are answered. */
  public CompletionStage<Done> unbind() {
    return binding.unbind().thenApply(x -> {
      sockets.unregister(binding.localAddress().getPort());
      return Done.getInstance();
    });
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
    private final StreamConnections connections;

    Handler(ActorSystem<?> system, Ingress ingress, ServerMetrics metrics, StreamConnections connections) {
      this.system = system;
      this.ingress = ingress;
      this.metrics = metrics;
      this.connections = connections;
    }

    /** One request, seen by its connection's deadlines: in flight, the connection is not idle. */
    CompletionStage<HttpResponse> handle(HttpRequest request) {
      StreamConnection connection = connections.connection(client(request));
      if (connection == null) {
        return serve(request);
      }
      connection.asked();
      return serve(request).whenComplete((response, failure) -> connection.answered());
    }

    private CompletionStage<HttpResponse> serve(HttpRequest request) {
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
      // RFC 8484 section 4.2.1: what is not a DNS message is an HTTP error; a DNS message shoal
      // does not serve (another opcode, no question) is answered in DNS, as over UDP.
      if (!WellFormed.message(packet)) {
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
        byte[] wire = StreamConnections.untruncated(reply.get());
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
