package io.shoal.admin;

import akka.actor.typed.ActorSystem;
import akka.http.javadsl.Http;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.StatusCodes;
import akka.http.javadsl.server.AllDirectives;
import akka.http.javadsl.server.Route;
import io.shoal.config.AdminSettings;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import org.xbill.DNS.Name;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * The admin HTTP endpoint, meant for localhost: {@code POST /cache/flush?name=NAME[&type=TYPE]}
 * removes a name from the caches (of every node in cluster mode).
 */
public final class AdminEndpoint extends AllDirectives {

  /** What a flush does on this node: flush locally, or publish to the whole cluster. */
  public interface Flusher {
    /** Completes with a one-line JSON description of what was done. */
    CompletionStage<String> flush(String name, int qtype);
  }

  private final Flusher flusher;

  private AdminEndpoint(Flusher flusher) {
    this.flusher = flusher;
  }

  public static CompletionStage<ServerBinding> start(ActorSystem<?> system, AdminSettings settings, Flusher flusher) {
    return Http.get(system).newServerAt(settings.host(), settings.port()).bind(new AdminEndpoint(flusher).routes());
  }

  private Route routes() {
    return concat(
        path(akka.http.javadsl.server.PathMatchers.segment("cache").slash("flush"), () ->
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
    return onSuccess(flusher.flush(canonical, qtype), json ->
        complete(StatusCodes.OK, HttpEntities.create(ContentTypes.APPLICATION_JSON, json + "\n")));
  }
}
