package io.shoal.study.run;

import io.shoal.study.report.ClusterRow;
import io.shoal.study.report.ResultRow;

/** A member's results: its results.csv row, and its cluster.csv row. */
record Measured(ResultRow row, ClusterRow cluster) {}
