package io.shoal.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import kamon.Kamon;

/** Reads the Prometheus endpoint of shoal nodes running in this JVM the way a scraper does. */
public final class Metrics {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final String endpoint;

  public Metrics(String endpoint) {
    this.endpoint = endpoint;
  }

  /** Every sample line, keyed by series exactly as exported (name plus labels in order). */
  public Map<String, Double> scrape() {
    try {
      HttpResponse<String> r = HTTP.send(
          HttpRequest.newBuilder(URI.create("http://" + endpoint + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.ofString());
      Map<String, Double> out = new HashMap<>();
      for (String line : r.body().split("\n")) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        int sp = line.lastIndexOf(' ');
        out.put(line.substring(0, sp), Double.parseDouble(line.substring(sp + 1)));
      }
      return out;
    } catch (IOException e) {
      throw new IllegalStateException("cannot scrape " + endpoint, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * The value of the series whose name is {@code name} and whose labels include every
   * {@code label="value"} pair given (Kamon orders labels its own way), or 0 when absent.
   */
  public double value(String name, String... labels) {
    return value(scrape(), name, labels);
  }

  public static double value(Map<String, Double> scrape, String name, String... labels) {
    double sum = 0;
    for (Map.Entry<String, Double> e : scrape.entrySet()) {
      String series = e.getKey();
      String n = series.contains("{") ? series.substring(0, series.indexOf('{')) : series;
      if (!n.equals(name)) {
        continue;
      }
      boolean all = true;
      for (String l : labels) {
        all &= series.contains(l);
      }
      if (all) {
        sum += e.getValue();
      }
    }
    return sum;
  }

  /** Counted by {@link #settled}; a scrape shows each increment only once Kamon has ticked. */
  private static final AtomicLong MARKS = new AtomicLong();
  private static final String MARKER = "test_settle_marks_total";

  /**
   * A scrape taken after the endpoint has caught up with everything already done in this JVM
   * (Kamon is process-wide, so this works for any node the test started in it): a marker counter
   * is incremented and the scrape polled until it shows it, twice. The second tick began after
   * the first was published, so its snapshot holds every increment made before this call.
   */
  public Map<String, Double> settled() throws Exception {
    Map<String, Double> last = null;
    for (int tick = 0; tick < 2; tick++) {
      long mark = MARKS.incrementAndGet();
      Kamon.counter("test.settle.marks").withoutTags().increment();
      last = Await.value(Duration.ofSeconds(15), this::scrape, m -> value(m, MARKER) >= mark);
      if (value(last, MARKER) < mark) {
        throw new AssertionError("the metrics endpoint " + endpoint + " published no tick within 15 s");
      }
    }
    return last;
  }

  /** Polls (Kamon publishes once per tick) until {@code ok} holds for the value, at most 10 s. */
  public double await(Predicate<Double> ok, String name, String... labels) throws Exception {
    return Await.value(Duration.ofSeconds(10), () -> value(name, labels), ok);
  }

  /**
   * Polls until {@code ok} holds for the one series printed exactly as {@code series} (a name and
   * its labels as the endpoint prints them; 0 when absent), at most 10 s. Unlike {@link #await},
   * series of other nodes in this JVM that share the name (cluster nodes carry a node label) are
   * not added in.
   */
  public double awaitSeries(Predicate<Double> ok, String series) throws Exception {
    return Await.value(Duration.ofSeconds(10), () -> scrape().getOrDefault(series, 0.0), ok);
  }
}
