import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * The chart of bench/floor/floor.sh: CPU microseconds per answered query of each member in each
 * round, with each member's median against Unbound's in the subtitle. Run with the shoal jar
 * (which carries JFreeChart) on the class path: java -cp shoal.jar FloorChart.java CSV PNG
 */
public final class FloorChart {
  private static final Map<String, Color> COLORS = Map.of(
      "unbound", new Color(0x7f, 0x8c, 0x8d), "shoal", new Color(0x2f, 0x6f, 0xb3), "floor", new Color(0xe6, 0x7e, 0x22));

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: FloorChart FLOOR_CSV PNG");
      System.exit(2);
    }
    System.setProperty("java.awt.headless", "true");
    List<String> lines = Files.readAllLines(Path.of(args[0]));
    List<String> header = List.of(lines.get(0).split(","));
    int round = header.indexOf("round"), member = header.indexOf("member");
    int cpu = header.indexOf("cpu_us_per_query"), ratio = header.indexOf("cpu_vs_unbound");
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    Map<String, List<Double>> ratios = new LinkedHashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",");
      data.addValue(Double.parseDouble(f[cpu]), f[member], "round " + f[round]);
      ratios.computeIfAbsent(f[member], k -> new ArrayList<>()).add(Double.parseDouble(f[ratio]));
    }
    JFreeChart chart = ChartFactory.createBarChart("CPU per warm hit: Unbound, shoal and the JVM's floor",
        null, "CPU µs per answered query (user + system)", data, PlotOrientation.VERTICAL, true, false, false);
    StringBuilder medians = new StringBuilder("median CPU per query vs Unbound in the same round:");
    ratios.forEach((m, r) -> medians.append(String.format(" %s %.2fx", m, median(r))));
    chart.addSubtitle(new TextTitle(medians.toString()));
    CategoryPlot plot = chart.getCategoryPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    BarRenderer bars = (BarRenderer) plot.getRenderer();
    bars.setShadowVisible(false);
    for (int i = 0; i < data.getRowCount(); i++) {
      bars.setSeriesPaint(i, COLORS.getOrDefault((String) data.getRowKey(i), Color.DARK_GRAY));
    }
    ChartUtils.saveChartAsPNG(Path.of(args[1]).toFile(), chart, 900, 500);
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
