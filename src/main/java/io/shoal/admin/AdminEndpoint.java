package io.shoal.admin;

import akka.actor.typed.ActorSystem;
import akka.http.javadsl.Http;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.StatusCodes;
import akka.http.javadsl.server.AllDirectives;
import akka.http.javadsl.server.PathMatchers;
import akka.http.javadsl.server.Route;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.shoal.config.AdminSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.xbill.DNS.Name;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * The admin HTTP endpoint, meant for localhost: {@code POST /cache/flush?name=NAME[&type=TYPE]}
 * removes a name from the caches (of every node in cluster mode). Only requests that carry the
 * node's {@link AdminToken} are served, and none with an Origin header: a web page a local user
 * opens must not be able to flush the cache.
 */
public final class AdminEndpoint extends AllDirectives {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What a flush did on this node. */
  /**
   * What a flush did: answers removed here, whether the node is in a cluster, and there whether
   * every node has the flush recorded (null outside a cluster).
   */
  public record Flushed(int removedHere, boolean cluster, Boolean recordedOnEveryNode) {}

  /** What a flush does on this node: flush locally, or publish to the whole cluster. */
  public interface Flusher {
    CompletionStage<Flushed> flush(String name, int qtype);
  }

  private final Flusher flusher;
  private final AdminToken token;

  private AdminEndpoint(Flusher flusher, AdminToken token) {
    this.flusher = flusher;
    this.token = token;
  }

  /**
   * Binds, then writes a fresh token to the token file named for the bound port. Until the file is
   * written no request can carry the token, so the endpoint is never open without it.
   */
  public static CompletionStage<ServerBinding> start(ActorSystem<?> system, AdminSettings settings, Flusher flusher) {
    AdminToken token = AdminToken.fresh();
    return Http.get(system).newServerAt(settings.host(), settings.port())
        .bind(new AdminEndpoint(flusher, token).routes())
        .thenCompose(binding -> {
          Path file = settings.tokenFileFor(binding.localAddress().getPort());
          try {
            token.writeTo(file);
            return CompletableFuture.completedFuture(binding);
          } catch (IOException e) {
            binding.unbind();
            return CompletableFuture.failedFuture(
                new IOException("shoal.admin.token_file: cannot write " + file + ": " + e.getMessage(), e));
          }
        });
  }

  private Route routes() {
    return optionalHeaderValueByName("Origin", origin -> origin.isPresent()
        ? complete(StatusCodes.FORBIDDEN, "shoal admin: requests from web pages (with an Origin header) are refused\n")
        : optionalHeaderValueByName(AdminToken.HEADER, presented -> token.matches(presented.orElse(null))
            ? commands()
            : complete(StatusCodes.UNAUTHORIZED, "shoal admin: send the token from shoal.admin.token_file in the "
                + AdminToken.HEADER + " header (shoal cache flush does)\n")));
  }

  private Route commands() {
    return concat(
        path(PathMatchers.segment("cache").slash("flush"), () ->
            concat(
                post(() -> parameter("name", name -> parameterOptional("type", type -> flush(name, type.orElse(""))))),
                complete(StatusCodes.METHOD_NOT_ALLOWED, "use POST /cache/flush?name=NAME[&type=TYPE]\n"))),
        complete(StatusCodes.NOT_FOUND, "shoal admin: POST /cache/flush?name=NAME[&type=TYPE]\n"));
  }

  private Route flush(String name, String type) {
    String canonical;
    try {
      canonical = Name.fromString(name.endsWith(".") ? name : name + ".").toString().toLowerCase(Locale.ROOT);
    } catch (TextParseException e) {
      return complete(StatusCodes.BAD_REQUEST, "not a domain name: " + name + "\n");
    }
    int qtype = 0;
    if (!type.isEmpty()) {
      qtype = Type.value(type.toUpperCase(Locale.ROOT));
      if (qtype < 0) {
        return complete(StatusCodes.BAD_REQUEST, "unknown record type: " + type + "\n");
      }
    }
    int asked = qtype;
    return onSuccess(flusher.flush(canonical, qtype), flushed -> {
      ObjectNode body = JSON.createObjectNode()
          .put("name", canonical)
          .put("type", asked)
          .put("removed_here", flushed.removedHere())
          .put("cluster", flushed.cluster());
      if (flushed.recordedOnEveryNode() != null) {
        body.put("recorded_on_every_node", flushed.recordedOnEveryNode());
      }
      return complete(StatusCodes.OK, HttpEntities.create(ContentTypes.APPLICATION_JSON, body + "\n"));
    });
  }
}
