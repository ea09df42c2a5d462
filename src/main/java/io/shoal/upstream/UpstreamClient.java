package io.shoal.upstream;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import io.shoal.config.UpstreamGroupSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.Rcode;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Forwards questions to one upstream group: a fresh random 16-bit ID and source port per query,
 * the next server on a timeout or error, TCP when the answer comes back truncated. It remembers
 * which server answered last and starts there, so one dead server costs one timeout, not one per
 * query.
 */
public final class UpstreamClient extends AbstractBehavior<UpstreamClient.Command> {

  /** Messages to the client. */
  public interface Command {}

  /** Resolve {@code query}'s question upstream and tell {@code replyTo} the outcome. */
  public record Forward(DnsQuery query, ActorRef<Outcome> replyTo) implements Command {}

  /** What came of a {@link Forward}. */
  public sealed interface Outcome permits Answered, Failed {}

  /** The upstream's answer, already matched to the question. */
  public record Answered(byte[] wire, String server) implements Outcome {}

  /** No server gave a usable answer. */
  public record Failed(String reason) implements Outcome {}

  private record AttemptDone(
      Forward request, int attempt, int server, boolean tcp, long startNanos, byte[] wire, Throwable failure)
      implements Command {}

  private final UpstreamGroupSettings group;
  private final List<InetSocketAddress> servers;
  private final UdpExchange udp;
  private final TcpExchange tcp;
  private final ServerMetrics metrics;
  private final SecureRandom random = new SecureRandom();
  private int preferred;

  public static Behavior<Command> create(
      UpstreamGroupSettings group, UdpExchange udp, TcpExchange tcp, ServerMetrics metrics) {
    return Behaviors.setup(ctx -> new UpstreamClient(ctx, group, udp, tcp, metrics));
  }

  private UpstreamClient(
      ActorContext<Command> context, UpstreamGroupSettings group, UdpExchange udp, TcpExchange tcp,
      ServerMetrics metrics) {
    super(context);
    this.group = group;
    this.servers = group.servers();
    this.udp = udp;
    this.tcp = tcp;
    this.metrics = metrics;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Forward.class, this::onForward)
        .onMessage(AttemptDone.class, this::onAttemptDone)
        .build();
  }

  private Behavior<Command> onForward(Forward request) {
    attempt(request, 0, preferred, false);
    return this;
  }

  private void attempt(Forward request, int attempt, int server, boolean overTcp) {
    InetSocketAddress address = servers.get(server);
    int id = random.nextInt(65536);
    byte[] query = request.query().upstreamQuery(id);
    long start = System.nanoTime();
    CompletableFuture<byte[]> exchange = overTcp
        ? tcp.exchange(address, query, id, request.query().key(), group.timeout())
        : udp.exchange(address, query, id, request.query().key(), group.timeout());
    getContext().pipeToSelf(exchange,
        (wire, failure) -> new AttemptDone(request, attempt, server, overTcp, start, wire, failure));
  }

  private Behavior<Command> onAttemptDone(AttemptDone done) {
    String server = label(servers.get(done.server()));
    long nanos = System.nanoTime() - done.startNanos();
    boolean moreServers = done.attempt() + 1 < servers.size();
    int nextServer = (done.server() + 1) % servers.size();
    if (done.failure() != null) {
      Throwable cause = done.failure() instanceof java.util.concurrent.CompletionException
          ? done.failure().getCause() : done.failure();
      String outcome = cause instanceof UpstreamException ue ? ue.outcome() : "error";
      metrics.upstream(server, outcome, nanos);
      if (moreServers) {
        attempt(done.request(), done.attempt() + 1, nextServer, false);
      } else {
        done.request().replyTo().tell(new Failed(cause.getMessage()));
      }
      return this;
    }
    byte[] wire = done.wire();
    if (!done.tcp() && (wire[2] & 0x02) != 0) {
      metrics.upstream(server, "truncated", nanos);
      attempt(done.request(), done.attempt(), done.server(), true);
      return this;
    }
    int rcode = wire[3] & 0x0F;
    if ((rcode == Rcode.SERVFAIL || rcode == Rcode.REFUSED) && moreServers) {
      metrics.upstream(server, Rcode.name(rcode).toLowerCase(java.util.Locale.ROOT), nanos);
      attempt(done.request(), done.attempt() + 1, nextServer, false);
      return this;
    }
    metrics.upstream(server, "ok", nanos);
    preferred = done.server();
    done.request().replyTo().tell(new Answered(wire, server));
    return this;
  }

  private static String label(InetSocketAddress a) {
    String host = a.getAddress().getHostAddress();
    return host.indexOf(':') >= 0 ? "[" + host + "]:" + a.getPort() : host + ":" + a.getPort();
  }
}
