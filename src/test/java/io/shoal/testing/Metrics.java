package io.shoal.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;

/** Reads shoal's Prometheus endpoint the way a scraper does. */
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

  /**
   * A scrape taken after the endpoint has caught up with everything already done: Kamon
   * publishes once per tick (1 s), so wait until two scrapes a tick apart agree.
   */
  public Map<String, Double> settled() throws InterruptedException {
    Map<String, Double> last = scrape();
    for (int i = 0; i < 20; i++) {
      Thread.sleep(1100);
      Map<String, Double> now = scrape();
      if (now.equals(last)) {
        return now;
      }
      last = now;
    }
    return last;
  }

  /** Polls (Kamon publishes once per tick) until {@code ok} holds for the value, at most 10 s. */
  public double await(Predicate<Double> ok, String name, String... labels) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    double v = value(name, labels);
    while (!ok.test(v) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      v = value(name, labels);
    }
    return v;
  }
}
