package io.shoal.transport;

import akka.Done;
import akka.actor.typed.ActorSystem;
import akka.stream.ActorAttributes;
import akka.stream.javadsl.Keep;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.ingress.ReplyPath;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import io.shoal.wire.AnswerRenderer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import kamon.metric.Counter;
import org.slf4j.LoggerFactory;

/**
 * One listening UDP socket and the Akka Streams flow that reads it. The read, the parse, the
 * cache lookup and the reply to a hit are fused into that one flow, so a hit never leaves the
 * thread that read it; a miss goes to its worker, which sends the reply through this socket too
 * ({@link ReplyPath}). Replies pass the response rate limiter; one that cannot be sent is counted
 * (shoal_dropped_total{reason="udp_send_failed"}) and logged once per interval.
 */
final class UdpSocket implements ReplyPath {
  /** The dispatcher the readers run on: a thread per socket (see UdpTransport.readerDispatcher). */
  static final String READER_DISPATCHER = "shoal-udp-readers";
  private static final int RECEIVE_POLL_MS = 200;
  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(UdpSocket.class), 10);

  private final DatagramChannel channel;
  private final Selector readable;
  private final ByteBuffer receiveBuffer = ByteBuffer.allocateDirect(65535);
  private final ServerMetrics metrics;
  private final Counter received;
  private volatile ResponseRateLimiter rateLimiter;
  private volatile CompletionStage<Done> inbound = CompletableFuture.completedFuture(Done.getInstance());
  private volatile boolean reading = true;

  /**
   * The channel is non-blocking: a reader under load takes datagram after datagram with one
   * recvfrom each and waits in the selector only when the socket is empty (a blocking socket with
   * a timeout costs a poll and two fcntl calls per datagram), and a worker's send never blocks.
   */
  /** Replies from now on are limited by {@code next} (a reload's rate limit). */
  void rateLimit(ResponseRateLimiter next) {
    rateLimiter = next;
  }

  UdpSocket(int index, DatagramChannel channel, ServerMetrics metrics, ResponseRateLimiter rateLimiter)
      throws IOException {
    this.rateLimiter = rateLimiter;
    this.channel = channel;
    this.metrics = metrics;
    this.received = metrics.udpSocketReceived(index);
    channel.configureBlocking(false);
    this.readable = Selector.open();
    channel.register(readable, SelectionKey.OP_READ);
  }

  private record Datagram(byte[] bytes, InetSocketAddress client) {}

  void serve(ActorSystem<?> system, Ingress ingress) {
    // One fused island on the reader dispatcher: read, parse, lookup and a hit's reply run on
    // the thread that read the datagram; only misses leave it (to their worker).
    inbound = Source.fromGraph(new DatagramSource<>(this::receive))
        .toMat(Sink.foreach(d -> answer(ingress, d)), Keep.right())
        .withAttributes(ActorAttributes.dispatcher(READER_DISPATCHER))
        .run(system);
  }

  /**
   * One query, on the reading thread. Whatever goes wrong with it is counted and logged here: an
   * exception out of the flow would end the flow, and the socket would stop being read.
   */
  private void answer(Ingress ingress, Datagram d) {
    try {
      ingress.offer(d.bytes(), d.client(), Protocol.UDP, this);
    } catch (RuntimeException e) {
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      failures.warn("query from " + d.client() + " failed", e);
    }
  }

  /** The next datagram, blocking until one comes; null once reading has stopped. */
  private Datagram receive() {
    while (reading) {
      try {
        receiveBuffer.clear();
        InetSocketAddress client = (InetSocketAddress) channel.receive(receiveBuffer);
        if (client != null) {
          received.increment();
          byte[] packet = new byte[receiveBuffer.flip().remaining()];
          receiveBuffer.get(packet);
          return new Datagram(packet, client);
        }
        // Empty: wait, but wake up within RECEIVE_POLL_MS so a shutdown is noticed.
        readable.select(RECEIVE_POLL_MS);
        readable.selectedKeys().clear();
      } catch (IOException e) {
        if (!channel.isOpen()) {
          return null;
        }
        failures.warn("UDP receive", e);
      }
    }
    return null;
  }

  @Override
  public void send(byte[] reply, InetSocketAddress client) {
    // Over the client prefix's rate: dropped (null) or sent truncated, counted by the limiter.
    byte[] wire = rateLimiter.limit(reply, client.getAddress());
    if (wire == null) {
      return;
    }
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
    try {
      return (InetSocketAddress) channel.getLocalAddress();
    } catch (IOException e) {
      return null;
    }
  }

  CompletionStage<Done> stopReading() {
    reading = false;
    return inbound;
  }

  void close() {
    reading = false;
    try {
      channel.close();
      readable.close();
    } catch (IOException ignored) {
      // the socket is released with the process anyway
    }
  }
}
