import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The chart of bench/cluster_rollout: knotd's queries per second over the window (above) and the
 * early refetches among them (below), one line per variant, with the warm variant's restarts marked. Run by the script with the shoal jar (which
 * carries JFreeChart) on the class path: java -cp shoal.jar ClusterRolloutChart.java CSV PNG SUBTITLE
 */
public final class ClusterRolloutChart {
  private static final Map<String, Color> COLORS = Map.of(
      "steady", new Color(0x7f, 0x8c, 0x8d), "cold", new Color(0xc0, 0x39, 0x2b), "warm", new Color(0x2f, 0x6f, 0xb3));

  public static void main(String[] args) throws IOException {
    if (args.length != 3) {
      System.err.println("usage: ClusterRolloutChart ROLLOUT_CSV PNG SUBTITLE");
      System.exit(2);
    }
    System.setProperty("java.awt.headless", "true");
    Map<String, XYSeries> series = new LinkedHashMap<>();
    Map<String, XYSeries> early = new LinkedHashMap<>();
    XYPlot plot = new XYPlot();
    XYPlot earlyPlot = new XYPlot();
    List<String> lines = Files.readAllLines(Path.of(args[0]));
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",", 5);
      if (f.length < 5) {
        continue;
      }
      double second = Double.parseDouble(f[1]);
      series.computeIfAbsent(f[0], XYSeries::new).add(second, Double.parseDouble(f[2]));
      early.computeIfAbsent(f[0], XYSeries::new).add(second, Double.parseDouble(f[3]));
      if (f[0].equals("warm") && !f[4].isBlank()) {
        for (String event : f[4].split("; ")) {
          if (event.startsWith("sigterm") || event.startsWith("ready")) {
            boolean stop = event.startsWith("sigterm");
            plot.addDomainMarker(marker(second, event, stop));
            earlyPlot.addDomainMarker(marker(second, null, stop));
          }
        }
      }
    }
    CombinedDomainXYPlot combined =
        new CombinedDomainXYPlot(new NumberAxis("seconds since the first SIGTERM (end of each one-second interval)"));
    combined.add(lines(plot, series, "upstream queries per second (knotd)"), 3);
    combined.add(lines(earlyPlot, early, "of them early refetches"), 2);
    JFreeChart chart = new JFreeChart("Rolling restart of a 3-node cluster: upstream queries per second",
        new Font(Font.SANS_SERIF, Font.BOLD, 18), combined, false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.addSubtitle(new TextTitle(args[2], new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    LegendTitle legend = new LegendTitle(plot);
    legend.setPosition(RectangleEdge.BOTTOM);
    chart.addLegend(legend);
    ChartUtils.saveChartAsPNG(Path.of(args[1]).toFile(), chart, 1100, 800);
  }

  /** A line per variant on {@code plot}, its axis named {@code label}. */
  private static XYPlot lines(XYPlot plot, Map<String, XYSeries> series, String label) {
    XYSeriesCollection data = new XYSeriesCollection();
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
    int i = 0;
    for (XYSeries s : series.values()) {
      data.addSeries(s);
      renderer.setSeriesPaint(i, COLORS.getOrDefault((String) s.getKey(), Color.BLACK));
      renderer.setSeriesStroke(i, new BasicStroke(2.0f));
      i++;
    }
    plot.setDataset(data);
    plot.setRenderer(renderer);
    NumberAxis queries = new NumberAxis(label);
    queries.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
    plot.setRangeAxis(queries);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    return plot;
  }

  /**
   * A restart's line at the end of {@code second}'s interval; labelled with {@code event} unless
   * null: a SIGTERM right of its line at the top, a ready left of it lower down, so they stay
   * apart when the next SIGTERM follows a ready closely.
   */
  private static ValueMarker marker(double second, String event, boolean stop) {
    ValueMarker marker = new ValueMarker(second - 1, new Color(0x2f, 0x6f, 0xb3, 0x80), new BasicStroke(1.0f));
    if (event != null) {
      marker.setLabel(event);
      marker.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
      marker.setLabelAnchor(stop ? RectangleAnchor.TOP_RIGHT : RectangleAnchor.LEFT);
      marker.setLabelTextAnchor(stop ? TextAnchor.TOP_LEFT : TextAnchor.CENTER_RIGHT);
    }
    return marker;
  }
}
