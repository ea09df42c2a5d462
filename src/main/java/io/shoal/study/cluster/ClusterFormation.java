package io.shoal.study.cluster;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.shoal.study.host.LogTail;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.MetricsScrape;
import io.shoal.study.server.ShoalUnderTest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Waits until a clustered member has formed: every node's Akka Management answers {@code /ready}
 * with 200 (member Up, caches open) and lists all the member's nodes as Up, none unreachable, in
 * {@code /cluster/members}. Measuring a half-formed cluster would measure its formation.
 */
public final class ClusterFormation {
  /** Three JVMs starting at once on a small, busy host took about 20 s; this leaves room. */
  static final Duration LIMIT = Duration.ofSeconds(180);
  private static final Duration POLL = Duration.ofMillis(500);
  private static final ObjectMapper JSON = new ObjectMapper();

  private ClusterFormation() {}

  /**
   * One node's view of the cluster, from an answer of {@code GET /cluster/members}.
   *
   * @param up members with status Up
   * @param members members listed, whatever their status
   * @param unreachable members some node has marked unreachable
   */
  record View(int up, int members, int unreachable) {

    /** The view in an answer; null if the answer cannot be read. */
    static View parse(String json) {
      JsonNode root = tree(json);
      JsonNode members = root.path("members");
      JsonNode unreachable = root.path("unreachable");
      if (!members.isArray() || !unreachable.isArray()) {
        return null;
      }
      int up = 0;
      for (JsonNode m : members) {
        if ("Up".equals(m.path("status").asText())) {
          up++;
        }
      }
      return new View(up, members.size(), unreachable.size());
    }

    /** Exactly {@code n} members, all Up and reachable. */
    boolean settledAt(int n) {
      return up == n && members == n && unreachable == 0;
    }
  }

  private static JsonNode tree(String json) {
    try {
      return JSON.readTree(json);
    } catch (JsonProcessingException e) {
      return JSON.missingNode();
    }
  }

  /** The node's answer to {@code GET /cluster/members} now; null if its management endpoint does not answer. */
  static String members(ShoalUnderTest n) {
    try {
      return n.fetch(URI.create("http://127.0.0.1:" + n.managementPort() + "/cluster/members"), true).body();
    } catch (StudyException e) {
      return null;
    }
  }

  /** The node's view now; null if its management endpoint does not answer or the answer is unreadable. */
  static View view(ShoalUnderTest n) {
    String json = members(n);
    return json == null ? null : View.parse(json);
  }

  /**
   * Polls every node until each is ready and sees {@code nodes.size()} members Up, at most
   * {@code limit}; fails at once if a node exits meanwhile.
   */
  static void await(String member, List<ShoalUnderTest> nodes, StartedProcesses processes, Duration limit)
      throws StudyException {
    int expected = nodes.size();
    processes.note("# in-process: poll HTTP GET /ready and /cluster/members on each node's management port until "
        + "every node answers 200 and lists " + expected + " members Up, and its shoal_cluster_owners reads "
        + expected + ", at most " + limit.toSeconds() + " s");
    long started = System.nanoTime();
    long deadline = started + limit.toNanos();
    long rounds = limit.toMillis() / POLL.toMillis() + 1;
    Map<String, String> state = new LinkedHashMap<>();
    for (long round = 0; round < rounds && System.nanoTime() < deadline; round++) {
      boolean formed = true;
      for (ShoalUnderTest n : nodes) {
        if (!n.alive()) {
          throw new StudyException(n.label() + " exited while the cluster formed" + LogTail.of(n.log()));
        }
        String s = state(n, expected);
        state.put(n.label(), s);
        formed &= s.equals("formed");
      }
      if (formed) {
        processes.note("# formed: " + member + ", " + expected + " members Up on every node after "
            + Duration.ofNanos(System.nanoTime() - started).toSeconds() + " s");
        return;
      }
      pause();
    }
    throw new StudyException(member + ": the cluster did not form within " + limit.toSeconds() + " s; last seen: "
        + state);
  }

  private static String state(ShoalUnderTest n, int expected) {
    try {
      HttpResponse<String> ready = n.fetch(URI.create("http://127.0.0.1:" + n.managementPort() + "/ready"), false);
      if (ready.statusCode() != 200) {
        return "/ready answers HTTP " + ready.statusCode();
      }
    } catch (StudyException e) {
      return "management not answering (" + e.getMessage() + ")";
    }
    View v = view(n);
    if (v == null) {
      return "/cluster/members unreadable";
    }
    if (!v.settledAt(expected)) {
      return v.up + " of " + expected + " members Up, " + v.members + " listed, " + v.unreachable + " unreachable";
    }
    // Up is not yet routed: until a node knows where the others take owner lookups, it resolves
    // their keys itself, and a warm-up then would fill its own cache with them.
    double owners = ownerRing(n);
    return owners == expected ? "formed" : "owner lookups route to " + (int) owners + " of " + expected + " members";
  }

  /** The node's {@code shoal_cluster_owners}; 0 while it cannot be read. */
  private static double ownerRing(ShoalUnderTest n) {
    try {
      return MetricsScrape.parse(n.scrape()).sum("shoal_cluster_owners").orElse(0);
    } catch (StudyException | RuntimeException e) {
      return 0;
    }
  }

  /**
   * When a killed node was marked unreachable and when it was gone from the member list, in
   * seconds after the kill, as a survivor saw it (to the poll interval); null if not seen in time.
   */
  public record Departure(Double unreachableAfterSeconds, Double removedAfterSeconds) {}

  /**
   * Polls a survivor's {@code /cluster/members} from the kill on, until the killed node is gone
   * (exactly {@code survivors} members, all Up and reachable) or {@code limit} after the kill. When
   * the survivors are a {@code minority}, the Split Brain Resolver downs them instead: "gone" is then
   * the moment the survivor, having marked the others unreachable, no longer lists them so (its
   * membership stopped, or started over and holds no one yet).
   */
  public static Departure watchDeparture(ShoalUnderTest survivor, int survivors, boolean minority, long killNanos,
      Duration limit, StartedProcesses processes, Path dir) throws StudyException, IOException {
    processes.note("# in-process: poll HTTP GET /cluster/members on " + survivor.label() + " every "
        + POLL.toMillis() + " ms until " + (minority ? "it is downed" : "the killed node is gone") + ", at most "
        + limit.toSeconds() + " s after the kill");
    long deadline = killNanos + limit.toNanos();
    long rounds = limit.toMillis() / POLL.toMillis() + 1;
    Double unreachableAfter = null;
    for (long round = 0; round < rounds && System.nanoTime() < deadline; round++) {
      String json = members(survivor);
      View v = json == null ? null : View.parse(json);
      double since = (System.nanoTime() - killNanos) / 1e9;
      if (minority && unreachableAfter != null && (v == null || v.unreachable() == 0)) {
        Files.writeString(dir.resolve("cluster-members-after.json"), json == null ? "" : json, StandardCharsets.UTF_8);
        processes.note(String.format(java.util.Locale.ROOT, "# downed: %s no longer lists the killed nodes as "
            + "unreachable %.1f s after the kill", survivor.label(), since));
        return new Departure(unreachableAfter, since);
      }
      if (v != null) {
        if (unreachableAfter == null && v.unreachable() > 0) {
          unreachableAfter = since;
          Files.writeString(dir.resolve("cluster-members-unreachable.json"), json, StandardCharsets.UTF_8);
        }
        if (!minority && v.settledAt(survivors)) {
          Files.writeString(dir.resolve("cluster-members-after.json"), json, StandardCharsets.UTF_8);
          processes.note(String.format(java.util.Locale.ROOT, "# removed: the killed node left %s's member list "
              + "%.1f s after the kill", survivor.label(), since));
          return new Departure(unreachableAfter, since);
        }
      }
      pause();
    }
    return new Departure(unreachableAfter, null);
  }

  private static void pause() throws StudyException {
    try {
      Thread.sleep(POLL.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted while the cluster formed", e);
    }
  }
}
