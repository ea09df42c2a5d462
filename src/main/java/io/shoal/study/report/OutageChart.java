package io.shoal.study.report;

import io.shoal.study.timeline.OutageTimeline;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The chart of an outage run: SERVFAIL, lost and stale answers per second, one line per member,
 * one panel each over a shared time axis, with the outage shaded.
 */
public final class OutageChart {
  private static final List<Color> MEMBER_COLORS = List.of(
      new Color(0x2f, 0x6f, 0xb3), new Color(0xc0, 0x39, 0x2b), new Color(0x27, 0xae, 0x60),
      new Color(0x8e, 0x44, 0xad), new Color(0xd3, 0x84, 0x00));

  private OutageChart() {}

  /** Writes the chart of {@code seconds} (every member's, as read back from the CSV) to {@code file}. */
  public static void write(Path file, List<OutageTimeline.Second> seconds, String subtitle) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<String> members = seconds.stream().map(OutageTimeline.Second::member).distinct().toList();
    CombinedDomainXYPlot plot = new CombinedDomainXYPlot(
        new NumberAxis("seconds since dnsperf started (end of each one-second interval)"));
    plot.setGap(12);
    plot.add(panel("SERVFAIL per second", seconds, members, OutageTimeline.Second::servfail), 1);
    plot.add(panel("lost per second (no answer in time)", seconds, members, OutageTimeline.Second::lost), 1);
    plot.add(panel("stale answers per second", seconds, members, OutageTimeline.Second::stale), 1);
    JFreeChart chart = new JFreeChart("Upstream outage: knotd stopped (SIGSTOP) mid-run",
        new Font(Font.SANS_SERIF, Font.BOLD, 18), plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    ChartUtils.saveChartAsPNG(file.toFile(), chart, 1100, 820);
  }

  private static XYPlot panel(String label, List<OutageTimeline.Second> seconds, List<String> members,
      ToDoubleFunction<OutageTimeline.Second> value) {
    XYSeriesCollection data = new XYSeriesCollection();
    XYLineAndShapeRenderer lines = new XYLineAndShapeRenderer(true, false);
    for (int i = 0; i < members.size(); i++) {
      XYSeries series = new XYSeries(members.get(i));
      for (OutageTimeline.Second s : seconds) {
        if (s.member().equals(members.get(i))) {
          series.add(s.second(), value.applyAsDouble(s));
        }
      }
      data.addSeries(series);
      lines.setSeriesPaint(i, MEMBER_COLORS.get(i % MEMBER_COLORS.size()));
      lines.setSeriesStroke(i, new BasicStroke(2.0f));
      // only the first panel's legend items: the members are the same in every panel
      lines.setSeriesVisibleInLegend(i, label.startsWith("SERVFAIL"));
    }
    NumberAxis counts = new NumberAxis(label);
    // whole queries, and a readable axis when a panel is all zeros (no lost queries at all)
    counts.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
    counts.setAutoRangeMinimumSize(4);
    XYPlot plot = new XYPlot(data, null, counts, lines);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    shadeOutage(plot, seconds, members.isEmpty() ? null : members.get(0));
    return plot;
  }

  /** Shades the first member's outage seconds (every member's outage starts at the same offset). */
  private static void shadeOutage(XYPlot plot, List<OutageTimeline.Second> seconds, String member) {
    List<OutageTimeline.Second> flagged = seconds.stream()
        .filter(s -> s.member().equals(member) && s.outage()).toList();
    if (flagged.isEmpty()) {
      return;
    }
    // second k covers (k - 1, k]
    IntervalMarker m = new IntervalMarker(flagged.get(0).second() - 1, flagged.get(flagged.size() - 1).second(),
        new Color(0xf3, 0x9c, 0x12, 0x40));
    m.setLabel("knotd stopped");
    m.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    m.setLabelAnchor(RectangleAnchor.TOP_LEFT);
    m.setLabelTextAnchor(TextAnchor.TOP_LEFT);
    plot.addDomainMarker(m);
  }
}
