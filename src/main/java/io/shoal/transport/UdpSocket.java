package io.shoal.transport;

import akka.Done;
import akka.actor.typed.ActorSystem;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.ReplyPath;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.AnswerRenderer;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import kamon.metric.Counter;
import org.slf4j.LoggerFactory;

/**
 * One listening UDP socket and the Akka Streams flow that reads it. The read, the parse, the
 * cache lookup and the reply to a hit are fused into that one flow, so a hit never leaves the
 * thread that read it; a miss goes to its worker, which sends the reply through this socket too
 * ({@link ReplyPath}). A reply that cannot be sent is counted
 * (shoal_dropped_total{reason="udp_send_failed"}) and logged once per interval.
 */
final class UdpSocket implements ReplyPath {
  private static final int RECEIVE_POLL_MS = 200;
  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(UdpSocket.class), 10);

  private final int index;
  private final DatagramChannel channel;
  private final DatagramSocket socket;
  private final byte[] receiveBuffer = new byte[65535];
  private final DatagramPacket packet = new DatagramPacket(receiveBuffer, receiveBuffer.length);
  private ServerMetrics metrics;
  private Counter received;
  private CompletionStage<Done> inbound = CompletableFuture.completedFuture(Done.getInstance());
  private volatile boolean reading = true;

  UdpSocket(int index, DatagramChannel channel) throws IOException {
    this.index = index;
    this.channel = channel;
    this.socket = channel.socket();
    this.socket.setSoTimeout(RECEIVE_POLL_MS);
  }

  private record Datagram(byte[] bytes, InetSocketAddress client) {}

  void serve(ActorSystem<?> system, Ingress ingress, ServerMetrics metrics) {
    this.metrics = metrics;
    this.received = metrics.udpSocketReceived(index);
    // unfoldResource runs on the blocking-IO dispatcher; the stages after it are fused with it.
    inbound = Source.unfoldResource(() -> socket, this::receive, s -> { })
        .runWith(Sink.foreach(d -> ingress.offer(d.bytes(), d.client(), this)), system);
  }

  private Optional<Datagram> receive(DatagramSocket s) {
    while (reading) {
      try {
        packet.setLength(receiveBuffer.length);
        s.receive(packet);
        received.increment();
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

  @Override
  public void send(byte[] wire, InetSocketAddress client) {
    try {
      if (channel.send(ByteBuffer.wrap(wire), client) == 0) {
        throw new IOException("no room in the socket's send buffer");
      }
      metrics.answered("udp", AnswerRenderer.rcode(wire));
    } catch (IOException | RuntimeException e) {
      metrics.dropped(ServerMetrics.UDP_SEND_FAILED);
      failures.warn("UDP send to " + client, e);
    }
  }

  InetSocketAddress localAddress() {
    return (InetSocketAddress) socket.getLocalSocketAddress();
  }

  CompletionStage<Done> stopReading() {
    reading = false;
    return inbound;
  }

  void close() {
    reading = false;
    try {
      channel.close();
    } catch (IOException ignored) {
      // the socket is released with the process anyway
    }
  }
}
