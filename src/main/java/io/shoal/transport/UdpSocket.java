package io.shoal.transport;

import akka.Done;
import io.shoal.cache.CachedAnswer;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.ingress.ReplyPath;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import io.shoal.upstream.DatagramSender;
import io.shoal.wire.AnswerRenderer;
import io.shoal.wire.DnsQuery;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.LockSupport;
import kamon.metric.Counter;
import org.slf4j.LoggerFactory;

/**
 * One listening UDP socket and the thread that reads it. The read, the parse, the cache lookup
 * and the reply to a hit all run on that thread, one datagram after another (read and answered in
 * batches where Linux's batch calls can be had: {@link LinuxDatagrams}), so a hit never leaves
 * it; a miss goes to its worker, which sends the reply through this socket too ({@link
 * ReplyPath}). Replies pass the response rate limiter; one that cannot be sent is counted
 * (shoal_dropped_total{reason="udp_send_failed"}) and logged once per interval.
 */
final class UdpSocket implements ReplyPath, DatagramSender {
  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(UdpSocket.class), 10);

  private final int index;
  private final DatagramChannel channel;
  private final ByteBuffer receiveBuffer = ByteBuffer.allocateDirect(65535);
  /** The reading thread's replies (hits) go out from here: no wrapper and no JDK temporary buffer per reply. */
  private final ByteBuffer sendBuffer = ByteBuffer.allocateDirect(65535 + 64);
  /** Where the reading thread renders a hit before it goes into {@link #sendBuffer}. */
  private final byte[] render = new byte[65535 + 64];
  private final ServerMetrics metrics;
  private final ServerMetrics.Replies replies;
  private final Counter received;
  private volatile ResponseRateLimiter rateLimiter;
  private final CompletableFuture<Done> inbound = new CompletableFuture<>();
  private volatile Thread reader;
  /** The address the socket is bound to (a wildcard, loopback or one of the host's). */
  private final InetAddress bound;
  private volatile boolean reading = true;
  /** Datagrams read and replies sent per system call; 1: the JDK's channel, one of each per call. */
  private final int batch;
  /** The batch calls, when {@link #batch} is above 1; null otherwise. */
  private final LinuxDatagrams os;
  /** The channel's file descriptor, for the batch calls; -1 without them. */
  private final int fd;
  private final boolean ipv6;
  /** The reading thread's batches (made by it): what it read, and the replies it has not sent yet. */
  private DatagramBatch in;
  private DatagramBatch out;
  /** The answer codes of {@link #out}'s replies and whom they go to, counted or logged once sent. */
  private int[] outRcodes;
  private InetSocketAddress[] outClients;
  /** The message of {@link #in} the reading thread answers now, and its sender; -1 and null between. */
  private int current = -1;
  private InetSocketAddress currentClient;

  /** Replies from now on are limited by {@code next} (a reload's rate limit). */
  void rateLimit(ResponseRateLimiter next) {
    rateLimiter = next;
  }

  /**
   * The channel blocks, with no timeout: the reader makes one recvfrom per datagram, which waits
   * in the kernel when the socket is empty. A non-blocking socket read through a selector made
   * three system calls for a datagram that found the reader waiting (the empty recvfrom, the
   * epoll_wait, the recvfrom that reads it), and below saturation that is most datagrams; a
   * blocking socket with a timeout adds a poll and two fcntl calls per datagram. Other threads'
   * sends do not wait for the reader (the JDK locks reads and writes apart), and a UDP send
   * waits only when the socket's 4 MiB send buffer is full. The reader notices a stop at its next
   * datagram: {@link UdpTransport#stopReading} sends it one.
   *
   * <p>With {@code batch} above 1 and the batch calls at hand, the reader waits in recvmmsg
   * instead, on the same blocking descriptor, and sends its own replies with sendmmsg; the
   * channel still carries other threads' sends. Where the descriptor cannot be had, it reads one
   * datagram per call as above.
   */
  UdpSocket(int index, DatagramChannel channel, int batch, ServerMetrics metrics, ResponseRateLimiter rateLimiter)
      throws IOException {
    this.index = index;
    this.rateLimiter = rateLimiter;
    this.channel = channel;
    this.metrics = metrics;
    this.replies = metrics.replies("udp");
    this.received = metrics.udpSocketReceived(index);
    InetSocketAddress local = (InetSocketAddress) channel.getLocalAddress();
    this.bound = local == null ? null : local.getAddress();
    this.ipv6 = bound instanceof Inet6Address;
    channel.configureBlocking(true);
    LinuxDatagrams batchCalls = batch > 1 ? LinuxDatagrams.get() : null;
    int descriptor = -1;
    if (batchCalls != null) {
      try {
        descriptor = batchCalls.fd(channel);
      } catch (ReflectiveOperationException | RuntimeException e) {
        batchCalls = null;
      }
    }
    this.os = batchCalls;
    this.fd = descriptor;
    this.batch = batchCalls == null ? 1 : batch;
  }

  /** Datagrams read per system call: 1 through the JDK's channel. */
  int batch() {
    return batch;
  }

  /**
   * Starts the socket's reader: a thread of its own (a daemon, so a node that never stops its
   * listeners cannot keep the process alive). A plain loop rather than an Akka Streams flow: the
   * flow cost a pull, a push and an interpreter pass per datagram, for nothing a socket needs.
   */
  void serve(Ingress ingress) {
    Thread t = new Thread(() -> read(ingress), "shoal-udp-reader-" + index);
    t.setDaemon(true);
    reader = t;
    t.start();
  }

  private void read(Ingress ingress) {
    try {
      if (os != null && batchesMade()) {
        readBatches(ingress);
        return;
      }
      while (reading) {
        InetSocketAddress client = receive();
        // After a stop, an empty datagram is the wake-up; the datagram that came instead is
        // answered. Before it, an empty one is dropped as any too short for a query is.
        if (client != null && (reading || receiveBuffer.position() > 0)) {
          byte[] packet = new byte[receiveBuffer.flip().remaining()];
          receiveBuffer.get(packet);
          answer(ingress, packet, client);
        }
      }
    } finally {
      inbound.complete(Done.getInstance());
    }
  }

  /**
   * The reader with the batch calls: one recvmmsg waits for a datagram and takes up to {@link
   * #batch} that are there; they are answered in order, and the replies the reading thread makes
   * (hits, and errors it answers itself) go out together in one sendmmsg before it reads again.
   */
  private void readBatches(Ingress ingress) {
    while (reading) {
      int n = os.receive(fd, in.address(0), batch);
      if (n <= 0) {
        if (n < 0) {
          failedReceive(os.errno());
        }
        continue;
      }
      received.increment(n);
      for (int i = 0; i < n; i++) {
        int length = in.length(i);
        if (!reading && length == 0) {
          continue; // a stop's wake-up
        }
        InetSocketAddress client = in.sender(i);
        if (client == null) {
          continue;
        }
        byte[] packet = new byte[length];
        in.copy(i, packet, length);
        current = i;
        currentClient = client;
        answer(ingress, packet, client);
      }
      current = -1;
      currentClient = null;
      flush();
      in.readyToReceive(n);
    }
  }

  /**
   * Makes the reading thread's batches: a slot per datagram as large as any datagram, and reply
   * slots of 4 KiB (a longer reply is sent on its own). False, logged, where the direct memory
   * for them cannot be had: the socket is then read one datagram per call, not left unread.
   */
  private boolean batchesMade() {
    try {
      in = new DatagramBatch(os, batch, 65536);
      out = new DatagramBatch(os, batch, 4096);
      outRcodes = new int[batch];
      outClients = new InetSocketAddress[batch];
      return true;
    } catch (OutOfMemoryError | RuntimeException e) {
      in = null;
      out = null;
      LoggerFactory.getLogger(UdpSocket.class).warn(
          "UDP socket {}: no memory for batches of {} datagrams, reading one per system call: {}", index, batch,
          e.toString());
      return false;
    }
  }

  /** A recvmmsg that failed with {@code errno}: interrupted or timed out is no failure. */
  private void failedReceive(int errno) {
    if (errno == LinuxDatagrams.EINTR || errno == LinuxDatagrams.EAGAIN || !reading) {
      return;
    }
    failures.warn("UDP receive (recvmmsg) failed: errno " + errno);
    LockSupport.parkNanos(1_000_000L); // a failure that repeats must not spin the reader
  }

  /** Sends the replies {@link #out} holds, each counted as answered or as failed. */
  private void flush() {
    int filled = out.size();
    int start = 0;
    int interrupted = 0;
    while (start < filled) {
      int sent = os.send(fd, out.address(start), filled - start);
      if (sent > 0) {
        for (int i = start; i < start + sent; i++) {
          replies.answered(outRcodes[i]);
        }
        start += sent;
        continue;
      }
      // The first of the rest failed (the kernel reports only that one): count it and send the rest.
      int errno = os.errno();
      if (errno == LinuxDatagrams.EINTR && interrupted++ < 3) {
        continue;
      }
      metrics.dropped(ServerMetrics.UDP_SEND_FAILED);
      failures.warn("UDP send to " + outClients[start] + " (sendmmsg) failed: errno " + errno);
      start++;
    }
    Arrays.fill(outClients, 0, filled, null);
    out.clear();
  }

  /**
   * One query, on the reading thread. Whatever goes wrong with it is counted and logged here: an
   * exception out of the loop would end it, and the socket would stop being read.
   */
  private void answer(Ingress ingress, byte[] packet, InetSocketAddress client) {
    try {
      ingress.offer(packet, client, Protocol.UDP, this);
    } catch (RuntimeException e) {
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      failures.warn("query from " + client + " failed", e);
    }
  }

  /**
   * The sender of the next datagram, now in {@code receiveBuffer}, once one came; null when the
   * socket was closed meanwhile or the read failed.
   */
  private InetSocketAddress receive() {
    try {
      receiveBuffer.clear();
      InetSocketAddress client = (InetSocketAddress) channel.receive(receiveBuffer);
      if (client != null) {
        received.increment();
        return client;
      }
    } catch (ClosedChannelException e) {
      // closed, also while this thread waited in it (AsynchronousCloseException)
      reading = false;
    } catch (IOException | RuntimeException e) {
      // Anything else is logged, and the socket read on: the loop must not end while the node serves.
      if (!channel.isOpen()) {
        reading = false;
      } else {
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
    if (Thread.currentThread() == reader) {
      reply(wire, wire.length, client);
    } else {
      transmit(ByteBuffer.wrap(wire), wire, wire.length, client);
    }
  }

  /**
   * A reply the reading thread makes, in the first {@code length} bytes of {@code wire}: into the
   * batch that goes out after this read's datagrams are answered, when the batch calls are in use
   * and it fits a slot; sent at once otherwise.
   */
  private void reply(byte[] wire, int length, InetSocketAddress client) {
    if (current >= 0 && length <= out.slot()) {
      if (out.full()) {
        flush();
      }
      int i = out.size();
      if (out.add(wire, length, client, client == currentClient ? in : null, current, ipv6)) {
        outRcodes[i] = AnswerRenderer.rcode(wire, length);
        outClients[i] = client;
        return;
      }
    }
    transmit(sendBuffer.clear().put(wire, 0, length).flip(), wire, length, client);
  }

  /**
   * A hit on the reading thread is rendered straight into {@link #render} and sent from {@link
   * #sendBuffer}: no array for the reply, no copy into a temporary buffer. Elsewhere (and for a
   * slip) as {@link #send}.
   */
  @Override
  public void sendHit(CachedAnswer hit, DnsQuery query, long nowMillis, int sizeLimit, InetSocketAddress client) {
    if (Thread.currentThread() != reader || hit.renderSize() > render.length) {
      ReplyPath.super.sendHit(hit, query, nowMillis, sizeLimit, client);
      return;
    }
    ResponseRateLimiter.Verdict verdict = rateLimiter.verdict(client.getAddress());
    if (verdict == ResponseRateLimiter.Verdict.DROP) {
      return;
    }
    int length = hit.renderInto(query, nowMillis, sizeLimit, render);
    if (verdict == ResponseRateLimiter.Verdict.SLIP) {
      byte[] slip = ResponseRateLimiter.truncated(Arrays.copyOf(render, length));
      reply(slip, slip.length, client);
    } else {
      reply(render, length, client);
    }
  }

  /**
   * Sends one of this node's queries (an owner lookup) from this socket, so that the reply comes
   * back to the listeners. Not once the readers stop (the node is stopping: the reply would find
   * no reader), nor when this socket listens on loopback and {@code to} is elsewhere (it cannot
   * reach it), nor across address families. Not a reply: no rate limit, not counted.
   */
  @Override
  public boolean sendDatagram(byte[] packet, InetSocketAddress to) {
    InetAddress target = to.getAddress();
    if (!reading || target == null || bound == null
        || (bound instanceof Inet6Address) != (target instanceof Inet6Address)
        || (bound.isLoopbackAddress() && !target.isLoopbackAddress())) {
      return false;
    }
    try {
      ByteBuffer out = Thread.currentThread() == reader ? sendBuffer.clear().put(packet).flip() : ByteBuffer.wrap(packet);
      return channel.send(out, to) > 0;
    } catch (IOException | RuntimeException e) {
      failures.warn("UDP send of an owner lookup to " + to, e);
      return false;
    }
  }

  /** Sends {@code out}, which holds the reply in the first {@code length} bytes of {@code wire}, and counts it. */
  private void transmit(ByteBuffer out, byte[] wire, int length, InetSocketAddress client) {
    try {
      if (channel.send(out, client) == 0) {
        throw new IOException("no room in the socket's send buffer");
      }
      replies.answered(AnswerRenderer.rcode(wire, length));
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

  /**
   * Marks the reader stopped; completes once it has (at once if it never started). A reader
   * waiting in the kernel notices at its next datagram: {@link UdpTransport#stopReading} sends
   * empty ones, which a stopped reader does not take for queries.
   */
  CompletionStage<Done> stopReading() {
    reading = false;
    if (reader == null) {
      inbound.complete(Done.getInstance());
    }
    return inbound;
  }

  void close() {
    reading = false;
    Thread r = reader;
    if (os != null && r != null && r.isAlive() && r != Thread.currentThread()) {
      // The reading thread may wait in recvmmsg on the descriptor, which closing the channel would
      // neither wake nor stop from reading whatever socket gets the number next: end its reads
      // first, and close once it is out.
      os.shutdownReading(fd);
      try {
        r.join(2_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // the socket is released with the process anyway
    }
  }
}
