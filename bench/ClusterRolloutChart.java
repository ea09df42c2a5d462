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
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The chart of bench/cluster_rollout: knotd's queries per second over the window, one line per
 * variant, with the warm variant's restarts marked. Run by the script with the shoal jar (which
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
    XYPlot plot = new XYPlot();
    List<String> lines = Files.readAllLines(Path.of(args[0]));
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",", 4);
      if (f.length < 3) {
        continue;
      }
      double second = Double.parseDouble(f[1]);
      series.computeIfAbsent(f[0], XYSeries::new).add(second, Double.parseDouble(f[2]));
      if (f[0].equals("warm") && f.length == 4 && !f[3].isBlank()) {
        for (String event : f[3].split("; ")) {
          if (event.startsWith("sigterm") || event.startsWith("ready")) {
            ValueMarker marker = new ValueMarker(second - 1, new Color(0x2f, 0x6f, 0xb3, 0x80), new BasicStroke(1.0f));
            boolean stop = event.startsWith("sigterm");
            marker.setLabel(event);
            marker.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
            // a node's SIGTERM labelled right of its line at the top, its ready left of it lower down:
            // they stay apart when the next SIGTERM follows a ready closely
            marker.setLabelAnchor(stop ? RectangleAnchor.TOP_RIGHT : RectangleAnchor.LEFT);
            marker.setLabelTextAnchor(stop ? TextAnchor.TOP_LEFT : TextAnchor.CENTER_RIGHT);
            plot.addDomainMarker(marker);
          }
        }
      }
    }
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
    plot.setDomainAxis(new NumberAxis("seconds since the first SIGTERM (end of each one-second interval)"));
    NumberAxis queries = new NumberAxis("upstream queries per second (knotd)");
    queries.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
    plot.setRangeAxis(queries);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    JFreeChart chart = new JFreeChart("Rolling restart of a 3-node cluster: upstream queries per second",
        new Font(Font.SANS_SERIF, Font.BOLD, 18), plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    chart.addSubtitle(new TextTitle(args[2], new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    ChartUtils.saveChartAsPNG(Path.of(args[1]).toFile(), chart, 1100, 600);
  }
}
