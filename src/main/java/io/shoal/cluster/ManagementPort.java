package io.shoal.cluster;

import akka.actor.typed.ActorSystem;
import akka.http.javadsl.Http;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.StatusCodes;
import akka.japi.function.Function;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's management port ({@code shoal.cluster.management}), bound in the actor system that
 * answers DNS, so it lives as long as the node does. {@code /ready} and {@code /alive} are
 * answered here from {@link NodeStatus}; every other path (Cluster Bootstrap's contact point,
 * {@code /cluster/members}) is handed to Akka Management in the membership system of the moment.
 * When membership starts over (downed, or a failed join) the probes go on answering what is true
 * of the DNS side; only the membership's own routes answer 503 until the next one is up.
 */
public final class ManagementPort {
  private static final Logger log = LoggerFactory.getLogger(ManagementPort.class);
  /** Akka Management's own health-check replies, kept so nothing that reads them sees a change. */
  private static final String HEALTHY = "OK";

  private final ActorSystem<?> system;
  private final NodeStatus status;
  private final Supplier<Function<HttpRequest, CompletionStage<HttpResponse>>> membership;

  private ManagementPort(
      ActorSystem<?> system, NodeStatus status,
      Supplier<Function<HttpRequest, CompletionStage<HttpResponse>>> membership) {
    this.system = system;
    this.status = status;
    this.membership = membership;
  }

  /**
   * Binds {@code host:port} in {@code system}.
   *
   * @param membership Akka Management's routes in the current membership system, or null while
   *     there is none
   */
  public static CompletionStage<ServerBinding> bind(
      ActorSystem<?> system, String host, int port, NodeStatus status,
      Supplier<Function<HttpRequest, CompletionStage<HttpResponse>>> membership) {
    ManagementPort handler = new ManagementPort(system, status, membership);
    return Http.get(system).newServerAt(host, port).bind(handler::handle);
  }

  private CompletionStage<HttpResponse> handle(HttpRequest request) {
    String path = request.getUri().path();
    if (path.equals("/ready")) {
      request.discardEntityBytes(system);
      // Warnings go below the status line, so the probe's answer and its first line stay as they were.
      String warnings = status.warnings().stream().map(w -> "\nwarning: " + w).collect(Collectors.joining());
      return answer(status.ready()
          ? HttpResponse.create().withStatus(StatusCodes.OK).withEntity(HEALTHY + warnings)
          : HttpResponse.create().withStatus(StatusCodes.INTERNAL_SERVER_ERROR)
              .withEntity("Not Healthy: " + status.notReadyBecause() + warnings));
    }
    if (path.equals("/alive")) {
      // Answered by the system that answers DNS: if this replies, the node is running.
      request.discardEntityBytes(system);
      return answer(HttpResponse.create().withStatus(StatusCodes.OK).withEntity(HEALTHY));
    }
    Function<HttpRequest, CompletionStage<HttpResponse>> routes = membership.get();
    if (routes == null) {
      request.discardEntityBytes(system);
      return answer(restarting());
    }
    try {
      // The membership system may stop under a request (downed): its answer is then this one.
      return routes.apply(request).exceptionally(e -> restarting());
    } catch (Exception e) {
      log.debug("management request {} not served by the membership: {}", path, e.toString());
      return answer(restarting());
    }
  }

  private static HttpResponse restarting() {
    return HttpResponse.create().withStatus(StatusCodes.SERVICE_UNAVAILABLE)
        .withEntity("cluster membership is starting over; this node answers DNS on its own meanwhile\n");
  }

  private static CompletionStage<HttpResponse> answer(HttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }
}
