package io.shoal.admin;

import akka.NotUsed;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.DispatcherSelector;
import akka.http.javadsl.Http;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.StatusCodes;
import akka.http.javadsl.server.AllDirectives;
import akka.http.javadsl.server.PathMatchers;
import akka.http.javadsl.server.Route;
import akka.stream.Materializer;
import akka.stream.javadsl.Source;
import akka.stream.javadsl.StreamConverters;
import akka.util.ByteString;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.shoal.config.AdminSettings;
import io.shoal.reload.ConfigReload;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.Name;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * The admin HTTP endpoint, meant for localhost: {@code POST /cache/flush?name=NAME[&type=TYPE]}
 * removes a name from the caches (of every node in cluster mode); {@code GET
 * /cache/dump[?suffix=NAME]} streams this node's answers as text ({@link AnswerDump}), and {@code
 * POST /cache/load} fills the caches from such a text, {@code POST /reload} reloads the
 * configuration ({@link ConfigReload}). Only requests that carry the
 * node's {@link AdminToken} are served, and none with an Origin header: a web page a local user
 * opens must not be able to flush the cache.
 */
public final class AdminEndpoint extends AllDirectives {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Logger log = LoggerFactory.getLogger(AdminEndpoint.class);
  private static final String USAGE = "POST /cache/flush?name=NAME[&type=TYPE], GET /cache/dump[?suffix=NAME],"
      + " POST /cache/load, POST /reload\n";
  /** How long a load waits for the next bytes of its body before it gives up. */
  private static final Duration LOAD_READ_TIMEOUT = Duration.ofMinutes(1);

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
  private final CacheTransfer transfer;
  private final Supplier<ConfigReload.Outcome> reload;
  private final AdminToken token;
  /** Where dumps and loads run: they block on the caches and the connection, never on the query path. */
  private final Executor blocking;

  private AdminEndpoint(
      Flusher flusher, CacheTransfer transfer, Supplier<ConfigReload.Outcome> reload, AdminToken token,
      Executor blocking) {
    this.reload = reload;
    this.flusher = flusher;
    this.transfer = transfer;
    this.token = token;
    this.blocking = blocking;
  }

  /**
   * Binds, then writes a fresh token to the token file named for the bound port. Until the file is
   * written no request can carry the token, so the endpoint is never open without it.
   */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system, AdminSettings settings, Flusher flusher, CacheTransfer transfer,
      Supplier<ConfigReload.Outcome> reload) {
    return start(system, settings, flusher, transfer, reload, AdminToken.fresh());
  }

  /**
   * {@link #start(ActorSystem, AdminSettings, Flusher, CacheTransfer, Supplier)} with a token the
   * node made (and, for a fixed port, wrote) before it bound its DNS sockets.
   */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system, AdminSettings settings, Flusher flusher, CacheTransfer transfer,
      Supplier<ConfigReload.Outcome> reload, AdminToken token) {
    Executor blocking = system.dispatchers().lookup(DispatcherSelector.blocking());
    return Http.get(system).newServerAt(settings.host(), settings.port())
        .bind(new AdminEndpoint(flusher, transfer, reload, token, blocking).routes())
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
                + AdminToken.HEADER + " header (shoal cache flush, dump and load do)\n")));
  }

  private Route commands() {
    return concat(
        path(PathMatchers.segment("cache").slash("flush"), () ->
            concat(
                post(() -> parameter("name", name -> parameterOptional("type", type -> flush(name, type.orElse(""))))),
                complete(StatusCodes.METHOD_NOT_ALLOWED, "use POST /cache/flush?name=NAME[&type=TYPE]\n"))),
        path(PathMatchers.segment("cache").slash("dump"), () ->
            concat(
                get(() -> parameterOptional("suffix", suffix -> dump(suffix.orElse(null)))),
                complete(StatusCodes.METHOD_NOT_ALLOWED, "use GET /cache/dump[?suffix=NAME]\n"))),
        path(PathMatchers.segment("cache").slash("load"), () ->
            concat(
                // A dump of a large cache is larger than akka-http's default body limit; the token guards this route.
                post(() -> withoutSizeLimit(() -> extractMaterializer(mat -> extractDataBytes(body -> load(body, mat))))),
                complete(StatusCodes.METHOD_NOT_ALLOWED, "use POST /cache/load with a dump as the body\n"))),
        path("reload", () ->
            concat(
                post(this::reload),
                complete(StatusCodes.METHOD_NOT_ALLOWED, "use POST /reload\n"))),
        complete(StatusCodes.NOT_FOUND, "shoal admin: " + USAGE));
  }

  private Route dump(String suffix) {
    if (suffix != null) {
      try {
        Name.fromString(suffix.endsWith(".") ? suffix : suffix + ".");
      } catch (TextParseException e) {
        return complete(StatusCodes.BAD_REQUEST, "not a domain name: " + suffix + "\n");
      }
    }
    // The dump writes into the response as the client reads it: a slow client holds one blocking
    // thread, never the caches or a snapshot of them (see AnswerCache.entries).
    Source<ByteString, NotUsed> text = StreamConverters.asOutputStream().mapMaterializedValue(out -> {
      blocking.execute(() -> {
        try (Writer w = new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), 1 << 16)) {
          transfer.dump(suffix, w);
        } catch (IOException | RuntimeException e) {
          // The text then lacks its end line, which is how the reader learns it was cut short.
          log.warn("cache dump ended early: {}", e.toString());
        }
      });
      return NotUsed.getInstance();
    });
    return complete(HttpResponse.create().withEntity(HttpEntities.createChunked(ContentTypes.TEXT_PLAIN_UTF8, text)));
  }

  private Route load(Source<ByteString, Object> body, Materializer mat) {
    InputStream in = body.runWith(StreamConverters.asInputStream(LOAD_READ_TIMEOUT), mat);
    CompletableFuture<HttpResponse> done = CompletableFuture.supplyAsync(() -> {
      try (Reader r = new InputStreamReader(in, StandardCharsets.UTF_8)) {
        CacheTransfer.Loaded loaded = transfer.load(r);
        return HttpResponse.create().withStatus(StatusCodes.OK)
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, loadSummary(loaded) + "\n"));
      } catch (AnswerDump.FormatException e) {
        return HttpResponse.create().withStatus(StatusCodes.BAD_REQUEST).withEntity(e.getMessage() + "\n");
      } catch (CompletionException e) {
        // A cache did not take a batch in time (an LMDB shard that stays down): what went before is loaded.
        log.warn("cache load ended early: {}", String.valueOf(e.getCause()));
        return HttpResponse.create().withStatus(StatusCodes.SERVICE_UNAVAILABLE)
            .withEntity("cache load ended early, the answers before were loaded: " + e.getCause() + "\n");
      } catch (IOException e) {
        throw new CompletionException(e);
      }
    }, blocking);
    return completeWithFuture(done);
  }

  /**
   * The reply to a load: its counts, how it treats a full cache, and the first problems (a
   * fixed few, so a dump of a million bad answers gets a reply of a few kilobytes).
   */
  static ObjectNode loadSummary(CacheTransfer.Loaded loaded) {
    ObjectNode json = JSON.createObjectNode()
        .put("read", loaded.read())
        .put("filled", loaded.filled())
        .put("expired", loaded.expired())
        .put("not_kept", loaded.notKept())
        .put("already_cached", loaded.alreadyCached())
        .put("no_room", loaded.noRoom())
        .put("not_stored", loaded.notStored())
        .put("unreadable", loaded.unreadable())
        .put("refused", loaded.refused())
        .put("records_dropped", loaded.recordsDropped())
        .put("when_full", "loads only into free room; never evicts a live answer");
    var problems = json.putArray("problems");
    for (AnswerDump.Problem p : loaded.firstProblems()) {
      problems.addObject().put("line", p.line()).put("name", p.name()).put("kind", p.kind()).put("error", p.why());
    }
    json.put("problems_not_shown", loaded.unreadable() + loaded.refused() - loaded.firstProblems().size());
    return json;
  }

  /**
   * Reloads the configuration (reading files, maybe a million-name blocklist: off the HTTP
   * threads): 200 with {"applied": true, "message": ...}, or 409 with applied false and why.
   */
  private Route reload() {
    CompletableFuture<HttpResponse> done = CompletableFuture.supplyAsync(() -> {
      ConfigReload.Outcome outcome = reload.get();
      ObjectNode json = JSON.createObjectNode().put("applied", outcome.applied()).put("message", outcome.message());
      return HttpResponse.create().withStatus(outcome.applied() ? StatusCodes.OK : StatusCodes.CONFLICT)
          .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, json + "\n"));
    }, blocking);
    return completeWithFuture(done);
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
