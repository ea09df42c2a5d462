package io.shoal.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code shoal cache load}: fill a running node's caches from what {@code shoal cache dump} wrote. */
@Command(
    name = "load",
    header = "Fill a running node's caches from a dump.",
    mixinStandardHelpOptions = true,
    description = {
      "Fill a running node's caches from what 'shoal cache dump' wrote (FILE, or",
      "standard input): each answer into the cache of its name's profile, under that",
      "profile's TTL rules, its TTLs aged by the time since the dump. Answers expired",
      "since then are left out. A load fills only a cache's free room: it never evicts",
      "a live answer, and a name the cache holds live keeps its answer. Answers whose",
      "records do not belong to their name (off its CNAME/DNAME chain) are refused.",
      "Prints a JSON summary: read, filled, expired, not_kept (this node's rules keep",
      "them not at all), already_cached, no_room, not_stored, unreadable, refused,",
      "records_dropped, and the first 10 problems with their line (exit status 1 when",
      "any answer was unreadable or refused)."
    })
final class CacheLoadCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Parameters(paramLabel = "FILE", arity = "0..1", description = "The dump; default: standard input")
  Path file;

  @Mixin
  AdminOptions adminOptions;

  @Override
  public Integer call() throws InterruptedException {
    AdminClient client = adminOptions.client(spec);
    if (client == null) {
      return 1;
    }
    HttpResponse<String> response;
    try (InputStream dump = file == null ? System.in : Files.newInputStream(file)) {
      response = client.load(dump);
    } catch (IOException e) {
      if (file != null && !Files.isReadable(file)) {
        spec.commandLine().getErr().println("shoal: cannot read " + file + ": " + e.getMessage());
        return 1;
      }
      return adminOptions.unreachable(spec, e);
    }
    if (response.statusCode() != 200) {
      return AdminOptions.failed(spec, response.statusCode(), response.body());
    }
    PrintWriter out = spec.commandLine().getOut();
    out.print(response.body());
    out.flush();
    try {
      JsonNode summary = new ObjectMapper().readTree(response.body());
      return summary.path("unreadable").asLong(1) == 0 && summary.path("refused").asLong(1) == 0 ? 0 : 1;
    } catch (IOException e) {
      return 1;
    }
  }
}
