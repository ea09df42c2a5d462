package io.shoal.transport.https;

import akka.actor.AbstractExtensionId;
import akka.actor.ExtendedActorSystem;
import akka.actor.Extension;
import io.shoal.transport.StreamConnections;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The DoH listeners of one actor system by port, where {@link DohConnectionHook} finds the
 * connections a newly accepted socket belongs to; a port not here (another akka-http server of
 * the system, such as cluster management) is left alone.
 */
public final class DohSockets implements Extension {
  /** The system's one instance. */
  public static final Id ID = new Id();

  /** Makes the one instance of a system. */
  public static final class Id extends AbstractExtensionId<DohSockets> {
    @Override
    public DohSockets createExtension(ExtendedActorSystem system) {
      return new DohSockets();
    }
  }

  private final ConcurrentMap<Integer, Listener> byPort = new ConcurrentHashMap<>();

  /** One DoH listener: its connections, and whether they start with a TLS handshake. */
  record Listener(StreamConnections connections, boolean tls) {}

  void register(int port, StreamConnections connections, boolean tls) {
    byPort.put(port, new Listener(connections, tls));
  }

  void unregister(int port) {
    byPort.remove(port);
  }

  Listener listener(int port) {
    return byPort.get(port);
  }
}
