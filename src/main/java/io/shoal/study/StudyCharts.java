package io.shoal.study;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.category.DefaultCategoryDataset;

/** Bar charts of a study's results, one PNG per measure, drawn from the CSV rows. */
public final class StudyCharts {
  /** The files {@link #write} creates, in order: QPS, hit rate, fill mean. */
  public static final List<String> FILES = List.of("achieved_qps.png", "hit_rate.png", "fill_mean.png");

  private static final int HEIGHT = 560;

  private StudyCharts() {}

  /** Writes the three charts into {@code dir}; {@code subtitle} says which run they show. */
  public static void write(Path dir, List<ResultRow> rows, String subtitle) throws IOException {
    // Charts are drawn off-screen; without this AWT looks for a display and fails on a server.
    System.setProperty("java.awt.headless", "true");
    bar(dir.resolve(FILES.get(0)), "Achieved throughput (higher is better)", "queries per second (dnsperf)",
        rows, r -> r.achievedQps(), "#,##0", subtitle);
    bar(dir.resolve(FILES.get(1)), "Cache hit rate (1 - upstream queries / completed queries)",
        "hit rate, % of completed queries", rows, ResultRow::hitRatePct, "0.0'%'", subtitle);
    bar(dir.resolve(FILES.get(2)), "Mean time to store one answer in the cache (lower is better)",
        "cache fill mean, milliseconds", rows, ResultRow::fillMeanMs, "0.0000' ms'", subtitle);
  }

  private static void bar(Path file, String title, String valueLabel, List<ResultRow> rows,
      Function<ResultRow, Double> value, String format, String subtitle) throws IOException {
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    List<String> without = new java.util.ArrayList<>();
    for (ResultRow r : rows) {
      Double v = value.apply(r);
      if (v != null) {
        data.addValue(v, "value", r.member());
      } else {
        without.add(r.member());
      }
    }
    JFreeChart chart = ChartFactory.createBarChart(title, "member", valueLabel, data,
        PlotOrientation.VERTICAL, false, false, false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
    chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    if (!without.isEmpty()) {
      // a missing bar must not read as a zero
      chart.addSubtitle(new TextTitle("not reported by: " + String.join(", ", without),
          new Font(Font.SANS_SERIF, Font.ITALIC, 12)));
    }

    CategoryPlot plot = chart.getCategoryPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.setNoDataMessage("no member reported this measure");
    plot.setNoDataMessageFont(new Font(Font.SANS_SERIF, Font.PLAIN, 16));

    CategoryAxis members = plot.getDomainAxis();
    members.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    members.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    if (data.getColumnCount() > 4) {
      members.setCategoryLabelPositions(CategoryLabelPositions.UP_45);
    }
    NumberAxis values = (NumberAxis) plot.getRangeAxis();
    values.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
    values.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    values.setUpperMargin(0.15); // room for the value printed above the tallest bar

    BarRenderer renderer = (BarRenderer) plot.getRenderer();
    renderer.setBarPainter(new StandardBarPainter());
    renderer.setShadowVisible(false);
    renderer.setSeriesPaint(0, new Color(0x2f, 0x6f, 0xb3));
    renderer.setMaximumBarWidth(0.12);
    renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator(
        "{2}", new DecimalFormat(format, DecimalFormatSymbols.getInstance(Locale.ROOT))));
    renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
    renderer.setDefaultItemLabelsVisible(true);

    int width = Math.max(900, 220 + 140 * Math.max(1, data.getColumnCount()));
    ChartUtils.saveChartAsPNG(file.toFile(), chart, width, HEIGHT);
  }
}
