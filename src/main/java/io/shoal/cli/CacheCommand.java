package io.shoal.cli;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code shoal cache ...}: operate on answer caches. */
@Command(
    name = "cache",
    mixinStandardHelpOptions = true,
    description = "Operate on answer caches.",
    subcommands = {CacheCommand.Flush.class})
public final class CacheCommand implements Runnable {
  @picocli.CommandLine.Spec
  picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new picocli.CommandLine.ParameterException(spec.commandLine(), "a subcommand is required");
  }

  /** {@code shoal cache flush NAME}: remove a name from a running node's caches (every node's in a cluster). */
  @Command(
      name = "flush",
      mixinStandardHelpOptions = true,
      description = {
        "Remove NAME from the caches of a running shoal, through its admin endpoint",
        "(shoal.admin, 127.0.0.1:8559 by default). In cluster mode every node drops it,",
        "local copies included."
      })
  static final class Flush implements Callable<Integer> {
    @Parameters(paramLabel = "NAME", description = "Domain name to remove, e.g. www.example.com")
    String name;

    @Option(names = {"-t", "--type"}, paramLabel = "TYPE", description = "Only this record type (A, AAAA, MX...); default: all types")
    String type;

    @Option(names = "--admin", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:8559",
        description = "The node's admin endpoint (default: ${DEFAULT-VALUE})")
    String admin;

    @Override
    public Integer call() throws Exception {
      String query = "name=" + URLEncoder.encode(name, StandardCharsets.UTF_8)
          + (type == null ? "" : "&type=" + URLEncoder.encode(type, StandardCharsets.UTF_8));
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + admin + "/cache/flush?" + query))
          .timeout(Duration.ofSeconds(10))
          .POST(HttpRequest.BodyPublishers.noBody())
          .build();
      HttpResponse<String> response;
      try {
        response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
            .send(request, HttpResponse.BodyHandlers.ofString());
      } catch (java.io.IOException e) {
        System.err.println("shoal: cannot reach the admin endpoint at " + admin + ": " + e.getMessage()
            + " (is shoal running with shoal.admin.enabled = on?)");
        return 1;
      }
      if (response.statusCode() == 400) {
        System.err.print("shoal: " + response.body());
        return 2;
      }
      if (response.statusCode() != 200) {
        System.err.print("shoal: admin endpoint answered " + response.statusCode() + ": " + response.body());
        return 1;
      }
      System.out.print(response.body());
      return 0;
    }
  }
}
