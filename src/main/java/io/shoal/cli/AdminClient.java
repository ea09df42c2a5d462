package io.shoal.cli;

import io.shoal.admin.AdminToken;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** The admin HTTP endpoint of a running node, as the command line reaches it. */
final class AdminClient {
  private final String endpoint;
  private final String token;

  /**
   * @param endpoint HOST:PORT of the node's admin endpoint
   * @param token the admin token the node wrote at start
   */
  AdminClient(String endpoint, String token) {
    this.endpoint = endpoint;
    this.token = token;
  }

  /**
   * Asks the node for its answers (under {@code suffix} only, when not null): the status, and the
   * body as a stream, since a dump may be larger than is worth holding in memory.
   */
  HttpResponse<InputStream> dump(String suffix) throws IOException, InterruptedException {
    String query = suffix == null ? "" : "?suffix=" + URLEncoder.encode(suffix, StandardCharsets.UTF_8);
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + endpoint + "/cache/dump" + query))
        .timeout(Duration.ofSeconds(10))
        .header(AdminToken.HEADER, token)
        .GET()
        .build();
    return http().send(request, HttpResponse.BodyHandlers.ofInputStream());
  }

  /** Sends a dump for the node to fill its caches from: its status and its JSON summary. */
  HttpResponse<String> load(InputStream dump) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + endpoint + "/cache/load"))
        // A large dump takes a while to fill into an LMDB cache.
        .timeout(Duration.ofMinutes(10))
        .header(AdminToken.HEADER, token)
        .header("Content-Type", "text/plain; charset=utf-8")
        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> dump))
        .build();
    return http().send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static HttpClient http() {
    return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  /** Asks the node to flush {@code name} ({@code type} only, when not null): its status and body as they came. */
  HttpResponse<String> flush(String name, String type) throws IOException, InterruptedException {
    String query = "name=" + URLEncoder.encode(name, StandardCharsets.UTF_8)
        + (type == null ? "" : "&type=" + URLEncoder.encode(type, StandardCharsets.UTF_8));
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + endpoint + "/cache/flush?" + query))
        .timeout(Duration.ofSeconds(10))
        .header(AdminToken.HEADER, token)
        .POST(HttpRequest.BodyPublishers.noBody())
        .build();
    return http().send(request, HttpResponse.BodyHandlers.ofString());
  }

  /** Asks the node to reload its configuration: 200 when applied, 409 when refused; the body is JSON with the message. */
  HttpResponse<String> reload() throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + endpoint + "/reload"))
        // A reload may read a blocklist of a million names.
        .timeout(Duration.ofMinutes(2))
        .header(AdminToken.HEADER, token)
        .POST(HttpRequest.BodyPublishers.noBody())
        .build();
    return http().send(request, HttpResponse.BodyHandlers.ofString());
  }
}
