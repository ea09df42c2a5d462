package io.shoal.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code shoal reload}: have a running node read its configuration again, as SIGHUP does. */
@Command(
    name = "reload",
    header = "Re-read a running node's configuration without a restart.",
    mixinStandardHelpOptions = true,
    description = {
      "The running node reads its --config file again and applies upstreams, profiles,",
      "access_control, rate_limit, miss_budget, chaos, serve_stale, prefetch, local,",
      "policy, dnssec and log live, and looks at its TLS certificate files. The cache,",
      "the sockets and the cluster stay; queries in flight are answered. A config that",
      "does not validate, or that changes any other key (listen, caches, cluster ...), is",
      "refused whole: the node keeps the one it runs and this command prints why.",
      "SIGHUP does the same.",
      "",
      "Through the node's admin endpoint (shoal.admin, 127.0.0.1:8559 by default)."
    },
    footer = {"", "Exit status: 0 reloaded, 2 refused (the reason is printed), 1 the node could not be reached."})
final class ReloadCommand implements Callable<Integer> {

  @Spec
  CommandSpec spec;

  @Mixin
  AdminOptions adminOptions;

  @Override
  public Integer call() throws InterruptedException {
    AdminClient client = adminOptions.client(spec);
    if (client == null) {
      return 1;
    }
    HttpResponse<String> response;
    try {
      response = client.reload();
    } catch (IOException e) {
      spec.commandLine().getErr().println("shoal: cannot reach the admin endpoint at " + adminOptions.endpoint() + ": "
          + e.getMessage() + " (is shoal running with shoal.admin.enabled = on? SIGHUP reloads it too)");
      return 1;
    }
    int status = response.statusCode();
    if (status != 200 && status != 409) {
      return AdminOptions.failed(spec, status, response.body());
    }
    String message;
    try {
      // Made here, not with the class: picocli makes every command for `serve` too, and Jackson is 300 classes.
      JsonNode body = new ObjectMapper().readTree(response.body());
      message = body.path("message").asText();
    } catch (IOException e) {
      return AdminOptions.failed(spec, status, response.body());
    }
    PrintWriter out = status == 200 ? spec.commandLine().getOut() : spec.commandLine().getErr();
    out.println(status == 200 ? message : "shoal: " + message);
    out.flush();
    return status == 200 ? 0 : 2;
  }
}
