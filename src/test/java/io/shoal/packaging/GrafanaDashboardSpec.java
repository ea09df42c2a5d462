package io.shoal.packaging;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * packaging/grafana/shoal-dashboard.json asks Prometheus only for series a shoal node exports: a
 * renamed metric shows up here, not as an empty panel on an operator's screen.
 */
public class GrafanaDashboardSpec extends JUnitSuite {
  private static final Path DASHBOARD = Path.of("packaging/grafana/shoal-dashboard.json");
  private static final Pattern METRIC = Pattern.compile("\\bshoal_[a-z_]+");

  /**
   * Series a node exports only in some setups or once something happened (a single node has no
   * owners to ask, no members to count; no miss is over a budget until a flood), each with the
   * Kamon instrument that exports it, so at least its source is checked.
   */
  private static final Map<String, String> NOT_ALWAYS_EXPORTED = Map.ofEntries(
      Map.entry("shoal_cluster_remote_lookups_total", "shoal.cluster.remote.lookups"),
      Map.entry("shoal_cluster_remote_lookup_seconds_bucket", "shoal.cluster.remote.lookup"),
      Map.entry("shoal_cluster_members", "shoal.cluster.members"),
      Map.entry("shoal_cluster_owners", "shoal.cluster.owners"),
      Map.entry("shoal_miss_budget_exceeded_total", "shoal.miss.budget.exceeded"),
      // Only with an upstream group in mode = recursive or stub (RecursionSpec scrapes them there).
      Map.entry("shoal_recursion_queries_total", "shoal.recursion.queries"),
      Map.entry("shoal_recursion_rtt_seconds_bucket", "shoal.recursion.rtt"),
      Map.entry("shoal_recursion_entries", "shoal.recursion.entries"),
      Map.entry("shoal_recursion_limit_hits_total", "shoal.recursion.limit.hits"),
      Map.entry("shoal_recursion_lame_servers_total", "shoal.recursion.lame.servers"),
      // Only once a zone went past a DNSSEC limit.
      Map.entry("shoal_dnssec_limit_hits_total", "shoal.dnssec.limit.hits"));

  private static JsonNode dashboard() throws Exception {
    return new ObjectMapper().readTree(Files.readString(DASHBOARD));
  }

  /** Every query the dashboard sends: panel targets (rows' nested panels too) and variable queries. */
  private static List<String> queries(JsonNode dash) {
    List<String> out = new ArrayList<>();
    List<JsonNode> panels = new ArrayList<>();
    dash.path("panels").forEach(p -> {
      panels.add(p);
      p.path("panels").forEach(panels::add);
    });
    for (JsonNode p : panels) {
      p.path("targets").forEach(t -> out.add(t.path("expr").asText()));
    }
    dash.path("templating").path("list").forEach(v -> {
      if (v.path("query").isObject()) {
        out.add(v.path("query").path("query").asText());
      } else if (v.path("type").asText().equals("query")) {
        out.add(v.path("query").asText());
      }
    });
    return out;
  }

  private static Set<String> metricNames(List<String> queries) {
    Set<String> names = new TreeSet<>();
    for (String q : queries) {
      Matcher m = METRIC.matcher(q);
      while (m.find()) {
        names.add(m.group());
      }
    }
    return names;
  }

  @Test
  public void everyPanelHasAQueryAndCoversWhatOperatorsWatch() throws Exception {
    JsonNode dash = dashboard();
    List<JsonNode> graphs = new ArrayList<>();
    dash.path("panels").forEach(p -> {
      if (!p.path("type").asText().equals("row")) {
        graphs.add(p);
      }
    });
    for (JsonNode p : graphs) {
      assertTrue(p.path("title").asText() + " has a query", p.path("targets").size() > 0);
      p.path("targets").forEach(t -> assertFalse(p.path("title").asText(), t.path("expr").asText().isBlank()));
    }
    Set<String> used = metricNames(queries(dash));
    for (String needed : List.of("shoal_queries_total", "shoal_cache_hits_total", "shoal_cache_misses_total",
        "shoal_upstream_seconds_bucket", "shoal_upstream_up", "shoal_dropped_total",
        "shoal_cluster_remote_lookups_total", "shoal_config_last_reload_successful",
        "shoal_miss_budget_exceeded_total", "shoal_recursion_queries_total", "shoal_recursion_rtt_seconds_bucket",
        "shoal_recursion_entries", "shoal_recursion_limit_hits_total", "shoal_dnssec_limit_hits_total",
        "shoal_recursion_lame_servers_total")) {
      assertTrue("the dashboard shows " + needed + ": " + used, used.contains(needed));
    }
  }

  @Test
  public void everyMetricTheDashboardUsesIsExportedByANode() throws Exception {
    Set<String> used = metricNames(queries(dashboard()));
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.addA("www.example.test.");
      try (TestNode node = TestNode.start(auth.hostPort(), "")) {
        // A miss (upstream exchange, fill), a hit, and an NXDOMAIN: the series a node in use exports.
        assertEquals(Rcode.NOERROR, DnsClient.udp(node.udp(), DnsClient.query(7101, "www.example.test.", Type.A, null)).getRcode());
        assertEquals(Rcode.NOERROR, DnsClient.udp(node.udp(), DnsClient.query(7102, "www.example.test.", Type.A, null)).getRcode());
        assertEquals(Rcode.NXDOMAIN, DnsClient.udp(node.udp(), DnsClient.query(7103, "nx.example.test.", Type.A, null)).getRcode());
        Set<String> exported = node.metrics().settled().keySet().stream()
            .map(series -> series.contains("{") ? series.substring(0, series.indexOf('{')) : series)
            .collect(Collectors.toCollection(TreeSet::new));
        List<String> missing = new ArrayList<>();
        String sources;
        try (Stream<Path> files = Files.walk(Path.of("src/main/java/io/shoal/metrics"))) {
          sources = files.filter(Files::isRegularFile).map(f -> {
            try {
              return Files.readString(f);
            } catch (java.io.IOException e) {
              throw new IllegalStateException(e);
            }
          }).collect(Collectors.joining("\n"));
        }
        for (String name : used) {
          if (NOT_ALWAYS_EXPORTED.containsKey(name)) {
            assertTrue(name + " comes from Kamon instrument " + NOT_ALWAYS_EXPORTED.get(name),
                sources.contains("\"" + NOT_ALWAYS_EXPORTED.get(name) + "\""));
          } else if (!exported.contains(name)) {
            missing.add(name);
          }
        }
        assertTrue("the dashboard asks for series no node exports: " + missing + "; exported: " + exported,
            missing.isEmpty());
      }
    }
  }
}
