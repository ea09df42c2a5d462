package io.shoal.transport;

import io.shoal.cache.CachedAnswer;
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
import java.nio.channels.DatagramChannel;
import java.util.Arrays;
import kamon.metric.Counter;
import org.slf4j.LoggerFactory;

/**
 * The replying side of one listening UDP socket, and the state its reading side ({@link
 * UdpSocket}, which extends this) shares with it: the channel, the batch calls and their batches.
 * A reply made on the reading thread goes into the batch that is sent after the read's datagrams
 * are answered, or out of a buffer of the socket's own; one made elsewhere is sent at once.
 * Replies pass the response rate limiter; one that cannot be sent is counted
 * (shoal_dropped_total{reason="udp_send_failed"}) and logged once per interval. The socket also
 * sends this node's own owner lookups ({@link DatagramSender}).
 */
abstract class UdpReplies implements ReplyPath, DatagramSender {
  static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(UdpSocket.class), 10);

  final int index;
  final DatagramChannel channel;
  /** The reading thread's replies (hits) go out from here: no wrapper and no JDK temporary buffer per reply. */
  private final ByteBuffer sendBuffer = ByteBuffer.allocateDirect(65535 + 64);
  /** Where the reading thread renders a hit before it goes into {@link #sendBuffer}. */
  private final byte[] render = new byte[65535 + 64];
  final ServerMetrics metrics;
  final ServerMetrics.Replies replies;
  final Counter received;
  private volatile ResponseRateLimiter rateLimiter;
  volatile Thread reader;
  /** The address the socket is bound to (a wildcard, loopback or one of the host's). */
  final InetAddress bound;
  volatile boolean reading = true;
  /** Datagrams read and replies sent per system call; 1: the JDK's channel, one of each per call. */
  final int batch;
  /** The batch calls, when {@link #batch} is above 1; null otherwise. */
  final LinuxDatagrams os;
  /** The channel's file descriptor, for the batch calls; -1 without them. */
  final int fd;
  final boolean ipv6;
  /** The reading thread's batches (made by it): what it read, and the replies it has not sent yet. */
  DatagramBatch in;
  DatagramBatch out;
  /** In {@link #outRcodes}: the message is this node's owner lookup, not a reply (not counted). */
  static final int LOOKUP = -1;
  /** The answer codes of {@link #out}'s replies and whom they go to, counted or logged once sent. */
  int[] outRcodes;
  InetSocketAddress[] outClients;
  /** The message of {@link #in} the reading thread answers now, and its sender; -1 and null between. */
  int current = -1;
  InetSocketAddress currentClient;

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
  UdpReplies(int index, DatagramChannel channel, int batch, ServerMetrics metrics, ResponseRateLimiter rateLimiter)
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

  /** Sends the replies {@link #out} holds, each counted as answered or as failed. */
  final void flush() {
    int filled = out.size();
    int start = 0;
    int interrupted = 0;
    while (start < filled) {
      int sent = os.send(fd, out.address(start), filled - start);
      if (sent > 0) {
        for (int i = start; i < start + sent; i++) {
          if (outRcodes[i] != LOOKUP) {
            replies.answered(outRcodes[i]);
          }
        }
        start += sent;
        continue;
      }
      // The first of the rest failed (the kernel reports only that one): count it and send the rest.
      int errno = os.errno();
      if (errno == LinuxDatagrams.EINTR && interrupted++ < 3) {
        continue;
      }
      // A lookup that could not be sent is no reply lost: it times out (owner_timeout) and its
      // worker asks the upstreams. It is logged all the same.
      if (outRcodes[start] != LOOKUP) {
        metrics.dropped(ServerMetrics.UDP_SEND_FAILED);
      }
      failures.warn("UDP send to " + outClients[start] + " (sendmmsg) failed: errno " + errno);
      start++;
    }
    Arrays.fill(outClients, 0, filled, null);
    out.clear();
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
    if (Thread.currentThread() == reader && current >= 0 && packet.length <= out.slot()) {
      // Asked while the reader answers a batch: the lookup leaves in the batch's sendmmsg with the
      // replies, not in a sendto of its own (a system call per lookup, which on a node held to a
      // CPU quota below saturation is a share of the quota the queries could use).
      if (out.full()) {
        flush();
      }
      int i = out.size();
      if (out.add(packet, packet.length, to, null, current, ipv6)) {
        outRcodes[i] = LOOKUP;
        outClients[i] = to;
        return true;
      }
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
}
