package io.shoal.transport;

import akka.Done;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.ingress.ReplyPath;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.LockSupport;
import kamon.metric.Counter;
import kamon.metric.Timer;
import org.slf4j.LoggerFactory;

/**
 * One listening UDP socket and the thread that reads it. The read, the parse, the cache lookup
 * and the reply to a hit all run on that thread, one datagram after another (read and answered in
 * batches where Linux's batch calls can be had: {@link LinuxDatagrams}), so a hit never leaves
 * it; a miss goes to its worker, which sends the reply through this socket too ({@link
 * ReplyPath}). Replies pass the response rate limiter; one that cannot be sent is counted
 * (shoal_dropped_total{reason="udp_send_failed"}) and logged once per interval.
 *
 * <p>This class is the reading side: the thread, its reads, and the socket's stop and close; the
 * replies and the state both sides share are in {@link UdpReplies}, which it extends, so the hit
 * path crosses no object between the two.
 */
final class UdpSocket extends UdpReplies {
  private final ByteBuffer receiveBuffer = ByteBuffer.allocateDirect(65535);
  private final CompletableFuture<Done> inbound = new CompletableFuture<>();
  /** How long queries and responses waited in the socket's receive queue; null where arrivals are not stamped. */
  private Timer queriesQueued;
  private Timer responsesQueued;

  /** Whether the batched reader asks the kernel for arrival stamps and times each datagram's wait. */
  private final boolean queueTime;
  /** How long the batched reader waits after a read that did not fill its batch; 0: not at all. */
  private final long batchWaitNanos;
  /** The datagrams of the batch being answered, as read, and their senders (null: not a query to answer). */
  private byte[][] packets;
  private InetSocketAddress[] senders;
  /**
   * What the batches' cache warming read ({@link Ingress#warm}), kept only so that the reads are
   * not optimised away.
   */
  private int warmed;
  /** Reads that returned datagrams: shoal_udp_reads_total{socket}. */
  private final Counter reads;

  /** See {@link UdpReplies#UdpReplies}; {@code queueTime} and {@code batchWait}: see {@link UdpTransport#bind}. */
  UdpSocket(int index, DatagramChannel channel, int batch, boolean queueTime, Duration batchWait,
      ServerMetrics metrics, ResponseRateLimiter rateLimiter) throws IOException {
    super(index, channel, batch, metrics, rateLimiter);
    this.queueTime = queueTime;
    this.batchWaitNanos = batchWait.toNanos();
    this.reads = metrics.udpSocketReads(index);
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
   *
   * <p>A read that did not fill the batch emptied the socket's queue; with {@code
   * listen.udp_batch_wait} the reader then sleeps that long before its next read, so what arrives
   * meanwhile is read, answered and replied to in one batch rather than in a recvmmsg, a sendmmsg
   * and a wake-up each (below saturation a reader that wakes for every datagram spends most of its
   * CPU on those: docs/cluster-internals.md, "Fuller batches"). A datagram is held at most the
   * wait: the next read returns at once with whatever came, and one that finds the queue empty
   * blocks until a datagram arrives, so a lone query after a quiet spell is read as soon as it
   * comes. recvmmsg's own timeout cannot give that bound: the kernel checks it only after a
   * datagram arrives.
   *
   * <p>A batch of more than one datagram is copied out whole first, and the caches read ahead
   * for all of its queries ({@link Ingress#warm}) before the first is answered: with a large
   * cache each look-up waits on several reads from memory, and read one batch-wide pass ahead
   * those waits overlap (docs/query-path.md, "Warming the cache for a batch").
   */
  private void readBatches(Ingress ingress) {
    if (batchWaitNanos > 0) {
      os.timerSlack(1_000);
    }
    while (reading) {
      int n = os.receive(fd, in.address(0), batch);
      if (n <= 0) {
        if (n < 0) {
          failedReceive(os.errno());
        }
        continue;
      }
      received.increment(n);
      reads.increment();
      long readAt = queriesQueued == null ? 0 : epochNanos();
      for (int i = 0; i < n; i++) {
        int length = in.length(i);
        if (!reading && length == 0) {
          continue; // a stop's wake-up
        }
        if (readAt != 0) {
          queued(i, readAt);
        }
        senders[i] = in.sender(i);
        if (senders[i] != null) {
          packets[i] = new byte[length];
          in.copy(i, packets[i], length);
        }
      }
      if (n > 1) {
        warm(ingress, n);
      }
      for (int i = 0; i < n; i++) {
        if (packets[i] != null) {
          current = i;
          currentClient = senders[i];
          answer(ingress, packets[i], senders[i]);
        }
      }
      Arrays.fill(packets, 0, n, null);
      Arrays.fill(senders, 0, n, null);
      current = -1;
      currentClient = null;
      flush();
      in.readyToReceive(n);
      if (batchWaitNanos > 0 && n < batch && reading) {
        LockSupport.parkNanos(batchWaitNanos);
      }
    }
  }

  /**
   * Before the batch's {@code n} datagrams are answered, the caches are read ahead for them all
   * ({@link Ingress#warm}). A failure there is logged and the batch answered all the same.
   */
  private void warm(Ingress ingress, int n) {
    try {
      warmed += ingress.warm(packets, n);
    } catch (RuntimeException e) {
      failures.warn("warming the caches for a batch failed", e);
    }
  }

  /**
   * Records how long message {@code i} of {@link #in} waited between its arrival and the read at
   * {@code readAt} (both on the wall clock): as a response (QR set) or as a query.
   */
  private void queued(int i, long readAt) {
    long arrived = in.arrivedAtNanos(i);
    if (arrived > 0 && in.length(i) > 2) {
      boolean response = (in.byteAt(i, 2) & 0x80) != 0;
      (response ? responsesQueued : queriesQueued).record(Math.max(0, readAt - arrived));
    }
  }

  private static long epochNanos() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /**
   * Makes the reading thread's batches: a slot per datagram as large as any datagram, and reply
   * slots of 4 KiB (a longer reply is sent on its own). False, logged, where the direct memory
   * for them cannot be had: the socket is then read one datagram per call, not left unread.
   */
  private boolean batchesMade() {
    try {
      // With listen.udp_queue_time the kernel stamps each datagram's arrival, so the time it waited
      // for the reader shows (shoal_udp_queue_seconds): under a CPU quota that is where a throttled
      // node's datagrams wait. Off by default: a diagnostic, kept off the hit path unless asked for.
      boolean stamped = queueTime && os.stampArrivals(fd);
      in = new DatagramBatch(os, batch, 65536, stamped);
      if (stamped) {
        queriesQueued = metrics.udpQueueTime("query");
        responsesQueued = metrics.udpQueueTime("response");
      }
      out = new DatagramBatch(os, batch, 4096);
      packets = new byte[batch][];
      senders = new InetSocketAddress[batch];
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
        reads.increment();
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
