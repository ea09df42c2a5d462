package io.shoal.study.report;

import io.shoal.study.attack.PhaseRow;
import io.shoal.study.timeline.KillTimeline;
import java.awt.BasicStroke;
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
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** Charts of a study's results, drawn from the CSV rows: one bar chart per measure, and a kill test's timeline. */
public final class StudyCharts {
  /** The files {@link #write} creates, in order: QPS, hit rate, fill mean, CPU per query. */
  public static final List<String> FILES = List.of(
      "achieved_qps.png", "hit_rate.png", "fill_mean.png", "cpu_per_query.png");
  /** The files {@link #writeCluster} creates, in order: aggregate QPS, upstream queries, fair hit rate. */
  public static final List<String> CLUSTER_FILES = List.of(
      "cluster_qps.png", "cluster_upstream_queries.png", "cluster_hit_rate.png");

  private static final int HEIGHT = 560;

  private StudyCharts() {}

  /** Writes the four charts into {@code dir}; {@code subtitle} says which run they show. */
  public static void write(Path dir, List<ResultRow> rows, String subtitle) throws IOException {
    // Charts are drawn off-screen; without this AWT looks for a display and fails on a server.
    System.setProperty("java.awt.headless", "true");
    List<String> names = rows.stream().map(ResultRow::member).toList();
    bar(dir.resolve(FILES.get(0)), "Achieved throughput (higher is better)", "queries per second (dnsperf)",
        names, values(rows, r -> r.achievedQps()), "#,##0", subtitle);
    bar(dir.resolve(FILES.get(1)), "Cache hit rate (1 - upstream queries / completed queries)",
        "hit rate, % of completed queries", names, values(rows, ResultRow::hitRatePct), "0.0'%'", subtitle);
    bar(dir.resolve(FILES.get(2)), "Mean time to store one answer in the cache (lower is better)",
        "cache fill mean, milliseconds", names, values(rows, ResultRow::fillMeanMs), "0.0000' ms'", subtitle);
    bar(dir.resolve(FILES.get(3)), "CPU time per answered query (lower is better)",
        "microseconds of user + system CPU per completed query", names,
        values(rows, ResultRow::cpuMicrosPerQuery), "0.0' us'", subtitle);
  }

  /**
   * Writes one bar chart per file of {@code charts} (file name to title, value label, figure of a
   * row and number format) into {@code dir}, one bar per row, named by {@code name}.
   */
  static <T> void writeBars(Path dir, List<T> rows, Function<T, String> name, List<Bars<T>> charts, String subtitle)
      throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<String> names = rows.stream().map(name).toList();
    for (Bars<T> c : charts) {
      bar(dir.resolve(c.file()), c.title(), c.valueLabel(), names, values(rows, c.value()), c.format(), subtitle);
    }
  }

  /** One bar chart of {@link #writeBars}: its file, title, value axis, the figure of a row (null: no bar) and format. */
  record Bars<T>(String file, String title, String valueLabel, Function<T, Double> value, String format) {}

  /** Writes the cluster charts (one bar per member, summed over its nodes) into {@code dir}. */
  public static void writeCluster(Path dir, List<ClusterRow> rows, String subtitle) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<String> names = rows.stream().map(r -> r.member() + " (" + r.nodes() + (r.nodes() == 1 ? " node" : " nodes")
        + (r.cluster() ? ", cluster" : "") + ")").toList();
    bar(dir.resolve(CLUSTER_FILES.get(0)), "Aggregate throughput over the member's nodes (higher is better)",
        "queries per second, summed over nodes", names, values(rows, r -> r.achievedQps()), "#,##0", subtitle);
    // per answered query: a slower member answers fewer queries and so also sends fewer upstream
    bar(dir.resolve(CLUSTER_FILES.get(1)), "Upstream queries per 1,000 answered queries (lower is better)",
        "queries knotd received per 1,000 completed", names,
        values(rows, r -> r.completed() > 0 ? 1000.0 * r.upstreamQueries() / r.completed() : null), "#,##0.0",
        subtitle);
    bar(dir.resolve(CLUSTER_FILES.get(2)), "Hit rate (1 - upstream queries / completed queries)",
        "hit rate, % of completed queries", names, values(rows, ClusterRow::fairHitRatePct), "0.0'%'", subtitle);
  }

  /**
   * A line chart of a kill test: QPS and lost queries (left axis) and mean latency (right axis)
   * per second, with markers where the node was killed, marked unreachable and removed.
   */
  public static void writeKillTimeline(Path file, List<KillTimeline.Second> seconds, KillTimeline.Event kill,
      String subtitle) throws IOException {
    System.setProperty("java.awt.headless", "true");
    XYSeries qps = new XYSeries("queries per second (summed over the nodes dnsperf ran against)");
    XYSeries latency = new XYSeries("mean latency, ms");
    XYSeries lost = new XYSeries("queries lost (given up on) in that second");
    for (KillTimeline.Second s : seconds) {
      qps.add(s.second(), s.qps());
      lost.add(s.second(), s.lost());
      if (s.avgLatencyMs() != null) {
        latency.add(s.second(), s.avgLatencyMs());
      }
    }
    JFreeChart chart = ChartFactory.createXYLineChart(
        "Losing a node: " + kill.node() + " of " + kill.member() + " killed (SIGKILL)",
        "seconds since dnsperf started (end of each one-second interval)", "queries per second",
        collection(qps, lost), PlotOrientation.VERTICAL, true, false, false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
    chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    XYPlot plot = chart.getXYPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    NumberAxis latencyAxis = new NumberAxis("mean latency, milliseconds");
    plot.setRangeAxis(1, latencyAxis);
    plot.setDataset(1, new XYSeriesCollection(latency));
    plot.mapDatasetToRangeAxis(1, 1);
    XYLineAndShapeRenderer qpsLine = new XYLineAndShapeRenderer(true, true);
    qpsLine.setSeriesPaint(0, new Color(0x2f, 0x6f, 0xb3));
    qpsLine.setSeriesStroke(0, new BasicStroke(2.5f));
    qpsLine.setSeriesPaint(1, Color.GRAY);
    qpsLine.setSeriesStroke(1, new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
        new float[] {6f, 4f}, 0f));
    plot.setRenderer(0, qpsLine);
    XYLineAndShapeRenderer latencyLine = new XYLineAndShapeRenderer(true, true);
    latencyLine.setSeriesPaint(0, new Color(0xc0, 0x39, 0x2b));
    latencyLine.setSeriesStroke(0, new BasicStroke(2.0f));
    plot.setRenderer(1, latencyLine);
    // the second that holds the kill ends at its "second" value, so the kill sits inside it
    ValueMarker marker = new ValueMarker(kill.atSeconds(), Color.DARK_GRAY, new BasicStroke(1.5f));
    marker.setLabel(String.format(Locale.ROOT, "%s killed at %.1f s", kill.node(), kill.atSeconds()));
    marker.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
    marker.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
    marker.setLabelTextAnchor(TextAnchor.TOP_LEFT);
    if (!Double.isNaN(kill.atSeconds())) {
      plot.addDomainMarker(marker);
      double end = seconds.isEmpty() ? 0 : seconds.get(seconds.size() - 1).second();
      event(plot, kill.unreachableAfterSeconds(), kill.atSeconds(), end, "unreachable", RectangleAnchor.BOTTOM_RIGHT,
          TextAnchor.BOTTOM_LEFT);
      event(plot, kill.removedAfterSeconds(), kill.atSeconds(), end, kill.minority() ? "survivor downed" : "removed",
          RectangleAnchor.CENTER, TextAnchor.CENTER_LEFT);
    }
    ChartUtils.saveChartAsPNG(file.toFile(), chart, 1100, HEIGHT);
  }

  /** A dashed marker for something that happened {@code after} seconds after the kill, if on the chart. */
  private static void event(XYPlot plot, Double after, double killAt, double end, String what,
      RectangleAnchor anchor, TextAnchor text) {
    if (after == null || killAt + after > end) {
      return;
    }
    ValueMarker m = new ValueMarker(killAt + after, Color.GRAY, new BasicStroke(1.0f, BasicStroke.CAP_BUTT,
        BasicStroke.JOIN_MITER, 10f, new float[] {3f, 3f}, 0f));
    m.setLabel(String.format(Locale.ROOT, "%s +%.1f s", what, after));
    m.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    m.setLabelAnchor(anchor);
    m.setLabelTextAnchor(text);
    plot.addDomainMarker(m);
  }

  private static XYSeriesCollection collection(XYSeries... series) {
    XYSeriesCollection c = new XYSeriesCollection();
    for (XYSeries s : series) {
      c.addSeries(s);
    }
    return c;
  }

  private static <T> List<Double> values(List<T> rows, Function<T, Double> value) {
    return rows.stream().map(value).toList();
  }

  private static void bar(Path file, String title, String valueLabel, List<String> names, List<Double> values,
      String format, String subtitle) throws IOException {
    save(file, barChart(title, "member", valueLabel, names, values, format, subtitle));
  }

  /**
   * The robustness chart: honest QPS in each phase, one bar per member (shoal, unbound) in each
   * phase, with a line at the first member's baseline (the paced rate when the honest clients are
   * paced), so each attack's cost reads as the gap below the line.
   */
  public static void writeRobustness(Path file, List<PhaseRow> rows, String subtitle) throws IOException {
    DefaultCategoryDataset data = robustnessData(rows);
    JFreeChart chart = seriesChart("Honest clients' throughput under each attack (higher is better)", "phase",
        "queries per second dnsperf completed", data, subtitle);
    if (data.getRowCount() > 1) {
      BarRenderer renderer = withLegend(chart);
      renderer.setMaximumBarWidth(0.08);
      renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.BOLD, 10));
    }
    if (data.getColumnCount() > 4) {
      chart.getCategoryPlot().getDomainAxis().setCategoryLabelPositions(CategoryLabelPositions.UP_45);
    }
    if (!rows.isEmpty()) {
      ValueMarker baseline = new ValueMarker(rows.get(0).honestQps(), Color.DARK_GRAY, new BasicStroke(1.5f,
          BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
      // said in a subtitle: a label on the line would sit on the bars' own value labels
      chart.addSubtitle(new TextTitle("dashed line: " + rows.get(0).member() + "'s baseline",
          new Font(Font.SANS_SERIF, Font.ITALIC, 12)));
      chart.getCategoryPlot().addRangeMarker(baseline);
    }
    save(file, chart);
  }

  /**
   * The cache_memory chart: resident bytes per cached answer at each size, one bar per member, and
   * for a JVM member (one with a heap reading) a second bar after a full collection.
   */
  public static void writeCacheMemory(Path file, List<CacheMemoryRow> rows, String subtitle) throws IOException {
    JFreeChart chart = seriesChart("Resident memory per cached answer (lower is better)", "answers cached",
        "bytes of VmRSS growth per answer", cacheMemoryData(rows), subtitle);
    withLegend(chart).setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.BOLD, 11));
    save(file, chart);
  }

  /** A bar chart of {@code data}'s series over its categories (whole numbers on the bars). */
  private static JFreeChart seriesChart(String title, String category, String value, DefaultCategoryDataset data,
      String subtitle) {
    System.setProperty("java.awt.headless", "true");
    JFreeChart chart = barChart(title, category, value, List.of(), List.of(), "#,##0", subtitle);
    chart.getCategoryPlot().setDataset(data);
    return chart;
  }

  /**
   * A bar chart of several series: a legend, and the series after the first in colours of their
   * own (the first keeps the bar charts' one colour). Returns the renderer for what else differs.
   */
  private static BarRenderer withLegend(JFreeChart chart) {
    chart.addLegend(new org.jfree.chart.title.LegendTitle(chart.getCategoryPlot()));
    chart.getLegend().setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
    BarRenderer renderer = (BarRenderer) chart.getCategoryPlot().getRenderer();
    renderer.setSeriesPaint(1, new Color(0xe0, 0x8a, 0x2c));
    renderer.setSeriesPaint(2, new Color(0x4c, 0x9a, 0x48));
    renderer.setSeriesPaint(3, new Color(0x8e, 0x44, 0xad));
    return renderer;
  }

  /**
   * The cache_memory chart's data: a series per member (and per JVM member after GC and quiet), a category
   * per size in the order they ran; a size without a per-answer figure has no bar.
   */
  static DefaultCategoryDataset cacheMemoryData(List<CacheMemoryRow> rows) {
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    for (CacheMemoryRow r : rows) {
      String size = String.format(Locale.ROOT, "%,d", r.entriesTarget());
      if (r.bytesPerEntry() != null) {
        data.addValue(r.bytesPerEntry(), r.member(), size);
      }
      if (r.heapIdleKib() != null && r.bytesPerEntryAfterGc() != null) {
        data.addValue(r.bytesPerEntryAfterGc(), r.member() + " after GC", size);
      }
      if (r.rssFilledQuietKib() != null && r.bytesPerEntryQuiet() != null) {
        data.addValue(r.bytesPerEntryQuiet(), r.member() + " quiet", size);
      }
    }
    return data;
  }

  /** The robustness chart's data: one series per member, one category per phase, in the order they ran. */
  static DefaultCategoryDataset robustnessData(List<PhaseRow> rows) {
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    for (PhaseRow r : rows) {
      data.addValue(r.honestQps(), r.member(), r.phase());
    }
    return data;
  }

  private static void save(Path file, JFreeChart chart) throws IOException {
    int columns = chart.getCategoryPlot().getDataset().getColumnCount();
    ChartUtils.saveChartAsPNG(file.toFile(), chart, Math.max(900, 220 + 140 * Math.max(1, columns)), HEIGHT);
  }

  private static JFreeChart barChart(String title, String categoryLabel, String valueLabel, List<String> names,
      List<Double> values, String format, String subtitle) {
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    List<String> without = new java.util.ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      Double v = values.get(i);
      if (v != null) {
        data.addValue(v, "value", names.get(i));
      } else {
        without.add(names.get(i));
      }
    }
    JFreeChart chart = ChartFactory.createBarChart(title, categoryLabel, valueLabel, data,
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
    NumberAxis valueAxis = (NumberAxis) plot.getRangeAxis();
    valueAxis.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
    valueAxis.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    valueAxis.setUpperMargin(0.15); // room for the value printed above the tallest bar

    BarRenderer renderer = (BarRenderer) plot.getRenderer();
    renderer.setBarPainter(new StandardBarPainter());
    renderer.setShadowVisible(false);
    renderer.setSeriesPaint(0, new Color(0x2f, 0x6f, 0xb3));
    renderer.setMaximumBarWidth(0.12);
    renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator(
        "{2}", new DecimalFormat(format, DecimalFormatSymbols.getInstance(Locale.ROOT))));
    renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
    renderer.setDefaultItemLabelsVisible(true);
    return chart;
  }
}
