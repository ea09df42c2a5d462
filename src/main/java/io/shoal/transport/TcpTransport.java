package io.shoal.transport;

import akka.Done;
import akka.actor.typed.ActorSystem;
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DNS over TCP (RFC 7766), or over TLS (RFC 7858), on one selector thread of its own: it accepts,
 * frames, looks queries up and writes their replies itself, so a query on a new connection costs
 * what a UDP query costs plus the handshakes, with no actor or stream materialised per connection.
 * Misses complete on the ingress workers' threads and come back through a task queue. The limits
 * keep a hostile client from holding a slot: a cap on open connections, where a newcomer over the
 * cap takes the place of the oldest connection that has not asked a query yet, else of the one
 * idle the longest (as Unbound and Knot do under TCP pressure); over TLS a deadline for the
 * handshake; a deadline for the first query and from one whole query to the next (not per byte,
 * so a client that trickles bytes is closed too); a cap on queries per connection; a message
 * shorter than a DNS header closes the connection.
 */
public final class TcpTransport {
  private static final Logger log = LoggerFactory.getLogger(TcpTransport.class);
  /** How often deadlines are checked and a paused accept is resumed. */
  private static final long SCAN_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** After a failed accept (out of descriptors) the listener waits this long before the next. */
  private static final long ACCEPT_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** Connections accepted per wake-up, so a connect flood cannot starve open connections. */
  private static final int ACCEPTS_PER_WAKEUP = 64;

  private final ServerSocketChannel server;
  private final InetSocketAddress localAddress;
  private final Selector selector;
  private final SelectionKey acceptKey;
  private final Thread thread;
  private final TcpSettings limits;
  private final Protocol protocol;
  /** Makes each TLS connection's engine; null for DNS over TCP and DoH over plain HTTP. */
  private final Supplier<SSLEngine> engines;
  /** Makes the connection for each accepted socket. */
  private final ListenerConnection.Opener opener;
  private final int cap;
  private final long handshakeNanos;
  private final long idleNanos;
  private final long firstQueryNanos;
  private final Ingress ingress;
  private final ServerMetrics metrics;
  private final FailureLog acceptFailures = new FailureLog(log, 10);
  /** Work handed to the selector thread by other threads (replies to misses, unbind). */
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  /** Touched by the selector thread only. */
  private final ConnectionSlots connections;
  private final CompletableFuture<Done> unbound = new CompletableFuture<>();
  private volatile boolean running = true;
  private long acceptPausedUntil;
  /** A connection accepted while the listener was full and none could give way yet; null: none. */
  private SocketChannel waiting;
  private boolean acceptPaused;

  private TcpTransport(ServerSocketChannel server, Selector selector, TcpSettings limits, Protocol protocol,
      Supplier<SSLEngine> engines, ListenerConnection.Opener opener, int cap, Ingress ingress, ServerMetrics metrics)
      throws IOException {
    this.server = server;
    this.localAddress = (InetSocketAddress) server.getLocalAddress();
    this.selector = selector;
    this.acceptKey = server.register(selector, SelectionKey.OP_ACCEPT);
    this.limits = limits;
    this.protocol = protocol;
    this.engines = engines;
    this.opener = opener;
    this.cap = cap;
    this.connections = new ConnectionSlots(cap, metrics);
    this.handshakeNanos = limits.handshakeTimeout().toNanos();
    this.idleNanos = limits.idleTimeout().toNanos();
    this.firstQueryNanos = Math.min(idleNanos, limits.firstQueryTimeout().toNanos());
    this.ingress = ingress;
    this.metrics = metrics;
    this.thread = new Thread(this::run, "shoal-" + protocol.label());
    thread.setDaemon(true);
  }

  /** Binds DNS over TCP on {@code address}; the stage fails with the bind error (e.g. address in use). */
  public static CompletionStage<TcpTransport> bind(
      ActorSystem<?> system, InetSocketAddress address, TcpSettings limits, Ingress ingress, ServerMetrics metrics) {
    return bind(system, address, limits, Protocol.TCP, null, TcpConnection::new, ingress, metrics);
  }

  /**
   * Binds DNS over TLS on {@code address}, each connection with an engine from {@code engines}
   * (made when its first bytes arrive); the stage fails with the bind error.
   */
  public static CompletionStage<TcpTransport> bindTls(ActorSystem<?> system, InetSocketAddress address,
      TcpSettings limits, Supplier<SSLEngine> engines, Ingress ingress, ServerMetrics metrics) {
    return bind(system, address, limits, Protocol.DOT, engines, TcpConnection::new, ingress, metrics);
  }

  /**
   * Binds a listener of {@code protocol} whose connections {@code opener} makes (DoH), behind TLS
   * with an engine from {@code engines} each, or in clear when it is null; the stage fails with
   * the bind error.
   */
  public static CompletionStage<TcpTransport> bind(ActorSystem<?> system, InetSocketAddress address,
      TcpSettings limits, Protocol protocol, Supplier<SSLEngine> engines, ListenerConnection.Opener opener,
      Ingress ingress, ServerMetrics metrics) {
    long fileLimit = OpenFiles.limit();
    int cap = limits.connectionCap(fileLimit, Runtime.getRuntime().maxMemory());
    ServerSocketChannel server = null;
    try {
      // Bound to an IPv4 address the listener is IPv4 only; the JVM's default socket is dual-stack
      // and would take IPv6 clients on 0.0.0.0.
      server = address.getAddress() instanceof Inet4Address
          ? ServerSocketChannel.open(StandardProtocolFamily.INET) : ServerSocketChannel.open();
      server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      server.bind(address, limits.backlog());
      server.configureBlocking(false);
      TcpTransport tcp = new TcpTransport(server, Selector.open(), limits, protocol, engines, opener, cap, ingress, metrics);
      log.info("{}: at most {} connections open ({}; open-file limit {}, heap {} MB),{} a first query must arrive "
              + "within {} ms, each query within {} ms, {} queries per connection, backlog {}",
          protocol.name(), cap, limits.maxConnections() == TcpSettings.AUTO ? "auto" : "configured", fileLimit,
          Runtime.getRuntime().maxMemory() >> 20,
          engines == null ? "" : " a TLS handshake must finish within " + limits.handshakeTimeout().toMillis() + " ms,",
          limits.firstQueryTimeout().toMillis(),
          limits.idleTimeout().toMillis(), limits.maxQueries() == 0 ? "unlimited" : limits.maxQueries(),
          limits.backlog());
      tcp.thread.start();
      system.getWhenTerminated().thenRun(tcp::stop);
      return CompletableFuture.completedFuture(tcp);
    } catch (IOException e) {
      if (server != null) {
        try {
          server.close();
        } catch (IOException ignored) {
          // the bind error is the one to report
        }
      }
      return CompletableFuture.failedFuture(e);
    }
  }

  public InetSocketAddress localAddress() {
    return localAddress;
  }

  /** Stops accepting connections; open ones finish their queries. */
  public CompletionStage<Done> unbind() {
    execute(() -> {
      acceptKey.cancel();
      try {
        server.close();
      } catch (IOException e) {
        log.debug("closing the TCP listener", e);
      }
      unbound.complete(Done.getInstance());
    });
    return unbound;
  }

  /**
   * A reply for a stream (TCP, DoT, DoH) as it goes out: one cut to its header and question with
   * TC=1 because the whole answer is over 65535 bytes becomes SERVFAIL. TC=1 tells a client to ask
   * again over TCP (RFC 7766 section 5), which a client already on a stream cannot do, and a
   * truncated reply with no records reads as NOERROR with nothing in it, a wrong answer; the
   * honest reply is that the server cannot give this one (as for any answer it cannot send).
   */
  public static byte[] untruncated(byte[] wire) {
    if (wire.length >= 4 && (wire[2] & 0x02) != 0) {
      wire[2] &= ~0x02;
      wire[3] = (byte) ((wire[3] & 0xF0) | 2);
    }
    return wire;
  }

  /** Connections open now. */
  public int open() {
    return connections.size();
  }

  int maxQueries() {
    return limits.maxQueries() == 0 ? Integer.MAX_VALUE : limits.maxQueries();
  }

  public Ingress ingress() {
    return ingress;
  }

  public Protocol protocol() {
    return protocol;
  }

  public Supplier<SSLEngine> engines() {
    return engines;
  }

  public ServerMetrics metrics() {
    return metrics;
  }

  boolean onSelectorThread() {
    return Thread.currentThread() == thread;
  }

  /** Runs {@code task} on the selector thread. */
  public void execute(Runnable task) {
    tasks.add(task);
    selector.wakeup();
  }

  /** The connection closed: its slot is free. */
  public void closed(ListenerConnection connection) {
    if (connections.remove(connection)) {
      metrics.streamConnections(protocol.label(), connections.size());
    }
  }

  private void stop() {
    running = false;
    selector.wakeup();
  }

  private void run() {
    long nextScan = System.nanoTime() + SCAN_NANOS;
    while (running) {
      try {
        selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextScan - System.nanoTime())));
        for (Runnable task; (task = tasks.poll()) != null; ) {
          task.run();
        }
        Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
        while (keys.hasNext()) {
          SelectionKey key = keys.next();
          keys.remove();
          if (!key.isValid()) {
            continue;
          }
          if (key == acceptKey) {
            acceptAll();
          } else {
            ((ListenerConnection) key.attachment()).ready(key);
          }
        }
        long now = System.nanoTime();
        if (now - nextScan >= 0) {
          scan(now);
          nextScan = now + SCAN_NANOS;
        }
      } catch (Throwable t) {
        // One connection's surprise must not stop the listener for all of them.
        log.error("TCP listener: unexpected error, continuing", t);
      }
    }
    for (ListenerConnection c : new ArrayList<>(connections)) {
      c.close();
    }
    if (waiting != null) {
      closeQuietly(waiting);
    }
    try {
      selector.close();
      server.close();
    } catch (IOException e) {
      log.debug("closing the TCP listener", e);
    }
  }

  private void acceptAll() {
    long now = System.nanoTime();
    if (waiting != null && !placeWaiting(now)) {
      return;
    }
    for (int i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
      SocketChannel channel;
      try {
        channel = server.accept();
      } catch (IOException e) {
        // Out of descriptors: the pending connection stays in the backlog; retrying at once would
        // spin on the same error.
        acceptFailures.warn(protocol.label() + " accept failed", e);
        pauseAccepting(now);
        return;
      }
      if (channel == null) {
        return;
      }
      admit(channel, now);
      if (waiting != null) {
        return;
      }
    }
  }

  private void pauseAccepting(long now) {
    acceptKey.interestOps(0);
    acceptPaused = true;
    acceptPausedUntil = now + ACCEPT_PAUSE_NANOS;
  }

  private void admit(SocketChannel channel, long now) {
    try {
      InetSocketAddress client = (InetSocketAddress) channel.getRemoteAddress();
      if (!ingress.admitsConnection(client.getAddress())) {
        channel.close();
        return;
      }
      if (connections.size() >= cap) {
        ConnectionSlots.Room room = connections.makeRoom(now);
        if (room == ConnectionSlots.Room.LATER) {
          // Every connection that could give way is too young to (ConnectionSlots): this one waits,
          // unregistered, and the listener takes no more until the next look (what comes next
          // waits in the kernel's backlog, at no cost here).
          waiting = channel;
          pauseAccepting(now);
          return;
        }
        if (room == ConnectionSlots.Room.NONE) {
          metrics.dropped(ServerMetrics.TCP_CONNECTION_LIMIT);
          channel.close();
          return;
        }
      }
      open(channel, client, now);
    } catch (IOException e) {
      closeQuietly(channel);
    }
  }

  /** Places the connection accepted while the listener was full, if there is room now; true when placed or gone. */
  private boolean placeWaiting(long now) {
    SocketChannel channel = waiting;
    if (connections.size() >= cap) {
      ConnectionSlots.Room room = connections.makeRoom(now);
      if (room == ConnectionSlots.Room.LATER) {
        return false;
      }
      waiting = null;
      if (room == ConnectionSlots.Room.NONE) {
        metrics.dropped(ServerMetrics.TCP_CONNECTION_LIMIT);
        closeQuietly(channel);
        return true;
      }
    }
    waiting = null;
    try {
      open(channel, (InetSocketAddress) channel.getRemoteAddress(), now);
    } catch (IOException e) {
      closeQuietly(channel);
    }
    return true;
  }

  private void open(SocketChannel channel, InetSocketAddress client, long now) throws IOException {
    channel.configureBlocking(false);
    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    ListenerConnection connection = opener.open(this, channel, client, now);
    connection.register(selector);
    connections.add(connection);
    metrics.streamConnections(protocol.label(), connections.size());
  }

  private static void closeQuietly(SocketChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // the client left while it was being accepted
    }
  }

  private void scan(long now) {
    if (acceptPaused && now - acceptPausedUntil >= 0 && acceptKey.isValid()) {
      if (waiting != null && !placeWaiting(now)) {
        acceptPausedUntil = now + ACCEPT_PAUSE_NANOS;
      } else {
        acceptPaused = false;
        acceptKey.interestOps(SelectionKey.OP_ACCEPT);
      }
    }
    for (ListenerConnection c : new ArrayList<>(connections)) {
      c.checkDeadline(now, handshakeNanos, firstQueryNanos, idleNanos);
    }
  }
}
