package io.shoal.transport;

import akka.Done;
import akka.NotUsed;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.japi.Pair;
import akka.stream.OverflowStrategy;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import akka.stream.typed.javadsl.ActorSource;
import io.shoal.logging.FailureLog;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Reply;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import io.shoal.wire.AnswerRenderer;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.slf4j.LoggerFactory;

/**
 * DNS over UDP as two Akka Streams: a source that reads datagrams from the bound socket (on the
 * stream's blocking-IO dispatcher) into the {@link Ingress}, and a reply source (an actor ref the
 * workers answer to) that runs into a sink writing datagrams back out.
 */
public final class UdpTransport {
  /** Completes the reply stream once every in-flight query has been answered. */
  private static final Reply END = new Reply(new byte[0], null);
  private static final int RECEIVE_POLL_MS = 200;
  private static final int REPLY_BUFFER = 16384;
  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(UdpTransport.class), 10);

  private final DatagramChannel channel;
  private final DatagramSocket socket;
  private final ActorRef<Reply> replies;
  private final CompletionStage<Done> inbound;
  private final CompletionStage<Done> outbound;
  private final ServerMetrics metrics;
  private final ResponseRateLimiter rateLimiter;
  private final byte[] receiveBuffer = new byte[65535];
  private volatile boolean reading = true;

  private UdpTransport(
      ActorSystem<?> system, DatagramChannel channel, Ingress ingress, ServerMetrics metrics,
      ResponseRateLimiter rateLimiter) throws IOException {
    this.channel = channel;
    this.rateLimiter = rateLimiter;
    this.socket = channel.socket();
    this.socket.setSoTimeout(RECEIVE_POLL_MS);
    this.metrics = metrics;
    Pair<ActorRef<Reply>, Source<Reply, NotUsed>> replySource = ActorSource.<Reply>actorRef(
            r -> r == END, r -> Optional.empty(), REPLY_BUFFER, OverflowStrategy.dropNew())
        .preMaterialize(system);
    this.replies = replySource.first();
    this.outbound = replySource.second().runWith(Sink.foreach(this::send), system);
    this.inbound = Source.unfoldResource(() -> socket, this::receive, s -> { })
        .runWith(Sink.foreach(d -> ingress.offer(d.bytes(), d.client(), replies)), system);
  }

  /** Binds {@code address} and starts serving; fails with the bind error (e.g. address in use). */
  public static UdpTransport bind(
      ActorSystem<?> system, InetSocketAddress address, Ingress ingress, ServerMetrics metrics,
      ResponseRateLimiter rateLimiter) throws IOException {
    // The JVM's default socket is dual-stack: bound to 0.0.0.0 it would answer on every IPv6
    // address too. An IPv4 address gets an IPv4 socket; "[::]" still serves both families.
    DatagramChannel ch = DatagramChannel.open(
        address.getAddress() instanceof Inet4Address ? StandardProtocolFamily.INET : StandardProtocolFamily.INET6);
    try {
      // A large receive buffer absorbs bursts; what still overflows is counted by the kernel.
      ch.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
      ch.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
      ch.bind(address);
      ch.configureBlocking(true);
      return new UdpTransport(system, ch, ingress, metrics, rateLimiter);
    } catch (IOException e) {
      ch.close();
      throw e;
    }
  }

  private record Datagram(byte[] bytes, InetSocketAddress client) {}

  private Optional<Datagram> receive(DatagramSocket s) {
    DatagramPacket packet = new DatagramPacket(receiveBuffer, receiveBuffer.length);
    while (reading) {
      try {
        s.receive(packet);
        return Optional.of(new Datagram(
            Arrays.copyOf(receiveBuffer, packet.getLength()), (InetSocketAddress) packet.getSocketAddress()));
      } catch (SocketTimeoutException e) {
        // poll again, so a shutdown is noticed within RECEIVE_POLL_MS
      } catch (IOException e) {
        if (!channel.isOpen()) {
          return Optional.empty();
        }
        failures.warn("UDP receive", e);
      }
    }
    return Optional.empty();
  }

  private void send(Reply reply) {
    byte[] wire = rateLimiter.limit(reply.wire(), reply.client().getAddress());
    if (wire == null) {
      return;
    }
    try {
      channel.send(ByteBuffer.wrap(wire), reply.client());
      metrics.answered("udp", AnswerRenderer.rcode(wire));
    } catch (IOException | RuntimeException e) {
      failures.warn("UDP send to " + reply.client(), e);
    }
  }

  /** The address actually bound (the port is known here when 0 was asked for). */
  public InetSocketAddress localAddress() {
    return (InetSocketAddress) socket.getLocalSocketAddress();
  }

  /** Stops reading new queries; completes when the read loop has ended. */
  public CompletionStage<Done> stopReading() {
    reading = false;
    return inbound;
  }

  /** Ends the reply stream after what is queued, then closes the socket. */
  public CompletionStage<Done> close() {
    replies.tell(END);
    return outbound.whenComplete((d, e) -> {
      try {
        channel.close();
      } catch (IOException ignored) {
        // the socket is released with the process anyway
      }
    });
  }
}
