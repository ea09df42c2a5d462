package io.shoal.admin;

import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.DispatcherSelector;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.shoal.config.AdminSettings;
import io.shoal.reload.ConfigReload;
import java.io.BufferedWriter;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Reader;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 *
 * <p>Served by the JDK's own HTTP server (the one Kamon's /metrics endpoint runs on too), each
 * request on Akka's blocking dispatcher: a node that is not in a cluster loads no Akka HTTP or
 * Akka Streams classes for a few admin routes (docs/operating.md, "Memory").
 */
public final class AdminEndpoint {
  private static final Logger log = LoggerFactory.getLogger(AdminEndpoint.class);
  private static final String USAGE = "POST /cache/flush?name=NAME[&type=TYPE], GET /cache/dump[?suffix=NAME],"
      + " POST /cache/load, POST /reload\n";
  private static final String TEXT = "text/plain; charset=UTF-8";
  private static final String JSON_TYPE = "application/json";
  /** How long a load waits for the next bytes of its body before it closes the connection. */
  static final Duration LOAD_READ_TIMEOUT = Duration.ofMinutes(1);
  /** How long a flush waits for the caches (and, in a cluster, the flush record) before it answers 503. */
  private static final Duration FLUSH_TIMEOUT = Duration.ofSeconds(20);

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
  private final ActorSystem<?> system;
  private final Duration loadReadTimeout;

  private AdminEndpoint(Flusher flusher, CacheTransfer transfer, Supplier<ConfigReload.Outcome> reload,
      AdminToken token, ActorSystem<?> system, Duration loadReadTimeout) {
    this.reload = reload;
    this.flusher = flusher;
    this.transfer = transfer;
    this.token = token;
    this.system = system;
    this.loadReadTimeout = loadReadTimeout;
  }

  /**
   * Binds, then writes {@code token} to the token file named for the bound port (until the file
   * is written no request can carry the token, so the endpoint is never open without it); returns
   * the bound address. The endpoint closes when {@code system} terminates.
   */
  public static InetSocketAddress start(
      ActorSystem<?> system, AdminSettings settings, Flusher flusher, CacheTransfer transfer,
      Supplier<ConfigReload.Outcome> reload, AdminToken token) throws IOException {
    return start(system, settings, flusher, transfer, reload, token, LOAD_READ_TIMEOUT);
  }

  /** {@link #start(ActorSystem, AdminSettings, Flusher, CacheTransfer, Supplier, AdminToken)} with a load's read timeout. */
  static InetSocketAddress start(
      ActorSystem<?> system, AdminSettings settings, Flusher flusher, CacheTransfer transfer,
      Supplier<ConfigReload.Outcome> reload, AdminToken token, Duration loadReadTimeout) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(settings.host(), settings.port()), 0);
    AdminEndpoint endpoint = new AdminEndpoint(flusher, transfer, reload, token, system, loadReadTimeout);
    server.createContext("/", endpoint::handle);
    // Dumps, loads and reloads block on the caches, the files and the connection: never the query path's threads.
    Executor blocking = system.dispatchers().lookup(DispatcherSelector.blocking());
    server.setExecutor(blocking);
    server.start();
    system.getWhenTerminated().thenRun(() -> server.stop(0));
    int port = server.getAddress().getPort();
    Path file = settings.tokenFileFor(port);
    try {
      token.writeTo(file);
    } catch (IOException e) {
      server.stop(0);
      throw new IOException("shoal.admin.token_file: cannot write " + file + ": " + e.getMessage());
    }
    return server.getAddress();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try {
      if (exchange.getRequestHeaders().containsKey("Origin")) {
        text(exchange, 403, "shoal admin: requests from web pages (with an Origin header) are refused\n");
      } else if (!token.matches(exchange.getRequestHeaders().getFirst(AdminToken.HEADER))) {
        text(exchange, 401, "shoal admin: send the token from shoal.admin.token_file in the "
            + AdminToken.HEADER + " header (shoal cache flush, dump and load do)\n");
      } else {
        command(exchange);
      }
    } catch (IOException e) {
      // The client went away, or its load stalled: the connection closes below.
      log.debug("admin request {} {}: {}", exchange.getRequestMethod(), exchange.getRequestURI(), e.toString());
    } catch (RuntimeException e) {
      log.warn("admin request {} {} failed: {}", exchange.getRequestMethod(), exchange.getRequestURI(), e.toString());
      if (exchange.getResponseCode() < 0) {
        text(exchange, 500, "shoal admin: the request failed: " + e + "\n");
      }
    } finally {
      exchange.close();
    }
  }

  private void command(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    Map<String, String> query;
    try {
      query = query(exchange.getRequestURI().getRawQuery());
    } catch (IllegalArgumentException e) {
      text(exchange, 400, "shoal admin: the query string is not URL-encoded: " + e.getMessage() + "\n");
      return;
    }
    switch (exchange.getRequestURI().getPath()) {
      case "/cache/flush" -> {
        // A flush without a name is not a flush: the same answer as another method gets.
        if (method.equals("POST") && query.containsKey("name")) {
          flush(exchange, query.get("name"), query.getOrDefault("type", ""));
        } else {
          text(exchange, 405, "use POST /cache/flush?name=NAME[&type=TYPE]\n");
        }
      }
      case "/cache/dump" -> {
        if (method.equals("GET")) {
          dump(exchange, query.get("suffix"));
        } else {
          text(exchange, 405, "use GET /cache/dump[?suffix=NAME]\n");
        }
      }
      case "/cache/load" -> {
        if (method.equals("POST")) {
          load(exchange);
        } else {
          text(exchange, 405, "use POST /cache/load with a dump as the body\n");
        }
      }
      case "/reload" -> {
        if (method.equals("POST")) {
          reload(exchange);
        } else {
          text(exchange, 405, "use POST /reload\n");
        }
      }
      default -> text(exchange, 404, "shoal admin: " + USAGE);
    }
  }

  /** The query string's parameters, URL-decoded; the first of each name counts. */
  static Map<String, String> query(String raw) {
    Map<String, String> params = new HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return params;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      params.putIfAbsent(name, value);
    }
    return params;
  }

  private static void text(HttpExchange exchange, int status, String body) throws IOException {
    reply(exchange, status, TEXT, body);
  }

  private static void reply(HttpExchange exchange, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private void dump(HttpExchange exchange, String suffix) throws IOException {
    if (suffix != null) {
      try {
        Name.fromString(suffix.endsWith(".") ? suffix : suffix + ".");
      } catch (TextParseException e) {
        text(exchange, 400, "not a domain name: " + suffix + "\n");
        return;
      }
    }
    exchange.getResponseHeaders().set("Content-Type", TEXT);
    // Chunked: the dump writes into the response as the client reads it; a slow client holds
    // this one blocking thread, never the caches or a snapshot of them (see AnswerCache.entries).
    exchange.sendResponseHeaders(200, 0);
    try (Writer w = new BufferedWriter(new OutputStreamWriter(exchange.getResponseBody(), StandardCharsets.UTF_8), 1 << 16)) {
      transfer.dump(suffix, w);
    } catch (IOException | RuntimeException e) {
      // The text then lacks its end line, which is how the reader learns it was cut short.
      log.warn("cache dump ended early: {}", e.toString());
    }
  }

  private void load(HttpExchange exchange) throws IOException {
    // The body is read as the load goes, whatever its size; a client that sends nothing for
    // loadReadTimeout has its connection closed, which ends the read and frees the thread.
    ReadClock body = new ReadClock(exchange.getRequestBody());
    long timeoutNanos = loadReadTimeout.toNanos();
    Duration check = loadReadTimeout.dividedBy(4);
    Cancellable watch = system.scheduler().scheduleWithFixedDelay(check, check, () -> {
      if (body.waitingNanos() > timeoutNanos) {
        log.warn("cache load: no bytes from the client for {} s; closing its connection", loadReadTimeout.toSeconds());
        exchange.close();
      }
    }, system.executionContext());
    try (Reader r = new InputStreamReader(body, StandardCharsets.UTF_8)) {
      CacheTransfer.Loaded loaded = transfer.load(r);
      reply(exchange, 200, JSON_TYPE, loadSummary(loaded) + "\n");
    } catch (AnswerDump.FormatException e) {
      text(exchange, 400, e.getMessage() + "\n");
    } catch (CompletionException e) {
      // A cache did not take a batch in time (an LMDB shard that stays down): what went before is loaded.
      log.warn("cache load ended early: {}", String.valueOf(e.getCause()));
      text(exchange, 503, "cache load ended early, the answers before were loaded: " + e.getCause() + "\n");
    } finally {
      watch.cancel();
    }
  }

  /** Jackson, loaded with the first request that answers JSON rather than with the node. */
  private static final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();
  }

  /** The request body, and how long the read in progress (if any) has waited for bytes. */
  private static final class ReadClock extends FilterInputStream {
    /** System.nanoTime() when the read in progress began; 0 between reads. */
    private volatile long readSince;

    ReadClock(InputStream in) {
      super(in);
    }

    long waitingNanos() {
      long since = readSince;
      return since == 0 ? 0 : System.nanoTime() - since;
    }

    @Override
    public int read() throws IOException {
      readSince = System.nanoTime();
      try {
        return super.read();
      } finally {
        readSince = 0;
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      readSince = System.nanoTime();
      try {
        return super.read(b, off, len);
      } finally {
        readSince = 0;
      }
    }
  }

  /**
   * The reply to a load: its counts, how it treats a full cache, and the first problems (a
   * fixed few, so a dump of a million bad answers gets a reply of a few kilobytes).
   */
  static ObjectNode loadSummary(CacheTransfer.Loaded loaded) {
    ObjectNode json = Json.MAPPER.createObjectNode()
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
   * Reloads the configuration (reading files, maybe a million-name blocklist): 200 with
   * {"applied": true, "message": ...}, or 409 with applied false and why.
   */
  private void reload(HttpExchange exchange) throws IOException {
    ConfigReload.Outcome outcome = reload.get();
    ObjectNode json = Json.MAPPER.createObjectNode().put("applied", outcome.applied()).put("message", outcome.message());
    reply(exchange, outcome.applied() ? 200 : 409, JSON_TYPE, json + "\n");
  }

  private void flush(HttpExchange exchange, String name, String type) throws IOException {
    String canonical;
    try {
      canonical = Name.fromString(name.endsWith(".") ? name : name + ".").toString().toLowerCase(Locale.ROOT);
    } catch (TextParseException e) {
      text(exchange, 400, "not a domain name: " + name + "\n");
      return;
    }
    int qtype = 0;
    if (!type.isEmpty()) {
      qtype = Type.value(type.toUpperCase(Locale.ROOT));
      if (qtype < 0) {
        text(exchange, 400, "unknown record type: " + type + "\n");
        return;
      }
    }
    Flushed flushed;
    try {
      flushed = flusher.flush(canonical, qtype).toCompletableFuture().get(FLUSH_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      text(exchange, 503, "the flush did not finish within " + FLUSH_TIMEOUT.toSeconds() + " s\n");
      return;
    } catch (ExecutionException e) {
      log.warn("cache flush of {} failed: {}", canonical, String.valueOf(e.getCause()));
      text(exchange, 500, "the flush failed: " + e.getCause() + "\n");
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    ObjectNode body = Json.MAPPER.createObjectNode()
        .put("name", canonical)
        .put("type", qtype)
        .put("removed_here", flushed.removedHere())
        .put("cluster", flushed.cluster());
    if (flushed.recordedOnEveryNode() != null) {
      body.put("recorded_on_every_node", flushed.recordedOnEveryNode());
    }
    reply(exchange, 200, JSON_TYPE, body + "\n");
  }
}
