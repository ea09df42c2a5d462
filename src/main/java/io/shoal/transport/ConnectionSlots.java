package io.shoal.transport;

import io.shoal.metrics.ServerMetrics;
import java.util.AbstractSet;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The open connections of a {@link TcpTransport} against its cap, touched by its selector thread
 * only, and who gives way to a newcomer at the cap: the oldest connection that has not asked a
 * query yet (a client that never asked is the cheapest to lose and the likeliest holder), once it
 * has been open {@link #EVICTABLE_AFTER_NANOS}; else the one idle the longest (no query in flight,
 * nothing to write), as Unbound and Knot do under TCP pressure.
 */
final class ConnectionSlots extends AbstractSet<ListenerConnection> {
  /**
   * How long a connection that has not asked a query is safe from newcomers at the cap: long
   * enough for a TLS handshake and a first query over a slow path, short enough that holders
   * turn over while honest newcomers wait at most about this long (Unbound shortens its TCP
   * timeout to 200 ms under the same pressure). Clients reconnecting in a loop turn a slot over
   * at most this often, so the listener's CPU stays with the clients that ask.
   */
  static final long EVICTABLE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** What a newcomer at the cap finds: a slot made for it, a slot later, or none. */
  enum Room { MADE, LATER, NONE }

  private final int cap;
  private final ServerMetrics metrics;
  private final Set<ListenerConnection> open = new HashSet<>();
  /**
   * Connections in the order they were accepted, until they ask a query: where eviction looks
   * first, oldest first, without a look at every open connection. Entries that asked or closed
   * leave as eviction meets them, or in a sweep when the queue grows past twice the cap.
   */
  private final ArrayDeque<ListenerConnection> unasked = new ArrayDeque<>();

  ConnectionSlots(int cap, ServerMetrics metrics) {
    this.cap = cap;
    this.metrics = metrics;
  }

  @Override
  public boolean add(ListenerConnection connection) {
    unasked.add(connection);
    if (unasked.size() > 2 * cap + 64) {
      unasked.removeIf(c -> c.asked() || c.closed());
    }
    return open.add(connection);
  }

  @Override
  public boolean remove(Object connection) {
    return open.remove(connection);
  }

  @Override
  public Iterator<ListenerConnection> iterator() {
    return open.iterator();
  }

  @Override
  public int size() {
    return open.size();
  }

  /**
   * Makes room for a newcomer at the cap by closing the connection that gives way (counted as
   * {@code tcp_idle_evicted}): MADE; LATER when the oldest that has not asked is younger than
   * {@link #EVICTABLE_AFTER_NANOS}; NONE when every connection has a query in flight. The first
   * choice takes no scan, so a flood of silent connections costs each newcomer a queue look.
   */
  Room makeRoom(long now) {
    for (ListenerConnection head; (head = unasked.peek()) != null; unasked.poll()) {
      if (!head.asked() && head.idle()) {
        if (now - head.accepted() < EVICTABLE_AFTER_NANOS) {
          return Room.LATER;
        }
        unasked.poll();
        evict(head);
        return Room.MADE;
      }
    }
    ListenerConnection oldest = null;
    for (ListenerConnection c : open) {
      if (c.idle() && (oldest == null || c.lastActive() - oldest.lastActive() < 0)) {
        oldest = c;
      }
    }
    if (oldest == null) {
      return Room.NONE;
    }
    evict(oldest);
    return Room.MADE;
  }

  private void evict(ListenerConnection connection) {
    metrics.dropped(ServerMetrics.TCP_IDLE_EVICTED);
    connection.close();
  }
}
