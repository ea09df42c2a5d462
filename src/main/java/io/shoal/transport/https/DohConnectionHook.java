package io.shoal.transport.https;

import akka.NotUsed;
import akka.actor.ActorSystem;
import akka.http.impl.engine.http2.TelemetrySpi;
import akka.http.scaladsl.model.HttpRequest;
import akka.http.scaladsl.model.HttpResponse;
import akka.stream.Materializer;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import akka.stream.scaladsl.BidiFlow;
import akka.stream.scaladsl.Tcp;
import akka.util.ByteString;
import io.shoal.transport.StreamConnection;
import io.shoal.transport.StreamConnections;

/**
 * Puts each socket a DoH listener accepts under the listener's {@link StreamConnections} before
 * akka-http runs TLS and HTTP on it: akka-http 10.2 counts an HTTP/2-capable server's
 * connections against max-connections from accept to close but has no deadline before its
 * protocol switch (a client that never finishes, or never starts, its TLS handshake holds its
 * slot forever), and no idle timeout on HTTP/1.1 connections behind that switch. akka-http offers
 * its connection hook only as this telemetry interface ({@code akka.http.http2-telemetry-class},
 * marked stable for such interceptors); the request and response hooks are left as they are.
 */
public final class DohConnectionHook implements TelemetrySpi {
  private final ActorSystem system;
  private final Materializer materializer;

  public DohConnectionHook(ActorSystem system) {
    this.system = system;
    this.materializer = Materializer.matFromSystem(system);
  }

  @Override
  public BidiFlow<HttpRequest, HttpRequest, HttpResponse, HttpResponse, NotUsed> client() {
    return akka.stream.javadsl.BidiFlow.<HttpRequest, HttpResponse>identity().asScala();
  }

  @Override
  public BidiFlow<HttpResponse, HttpResponse, HttpRequest, HttpRequest, NotUsed> serverConnection() {
    return akka.stream.javadsl.BidiFlow.<HttpResponse, HttpRequest>identity().asScala();
  }

  @Override
  public akka.stream.scaladsl.Flow<Tcp.IncomingConnection, Tcp.IncomingConnection, NotUsed> serverBinding() {
    return Flow.<Tcp.IncomingConnection>create().map(this::guarded).asScala();
  }

  private Tcp.IncomingConnection guarded(Tcp.IncomingConnection incoming) {
    DohSockets.Listener listener = DohSockets.ID.get(system).listener(incoming.localAddress().getPort());
    if (listener == null) {
      return incoming;
    }
    Flow<ByteString, ByteString, NotUsed> socket = incoming.flow().asJava();
    StreamConnection connection = listener.connections().open(incoming.remoteAddress(), listener.tls());
    if (connection == null) {
      // Over the cap with none idle: the socket is closed now, and akka-http's stack meets a
      // connection that has ended.
      Source.<ByteString>empty().via(socket).runWith(Sink.cancelled(), materializer);
      return incoming.copy(incoming.localAddress(), incoming.remoteAddress(),
          Flow.fromSinkAndSource(Sink.<ByteString>cancelled(), Source.<ByteString>empty()).asScala());
    }
    if (listener.tls()) {
      TlsRecords records = new TlsRecords();
      socket = socket.map(bytes -> {
        if (records.applicationData(bytes)) {
          connection.handshook();
        }
        return bytes;
      })
          // For the connection's engine: whose handshake it runs, so a failure is counted through the connection.
          .prepend(Source.single(ConnectionLabel.of(incoming.remoteAddress())));
    }
    return incoming.copy(incoming.localAddress(), incoming.remoteAddress(),
        listener.connections().guardSocket(connection, socket).asScala());
  }
}
