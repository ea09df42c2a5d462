package io.shoal.testing;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.Ignore;
import org.junit.Test;

/**
 * Run by the build after the ScalaTest specs (pom.xml, phase verify): fails it when a spec ran
 * fewer tests than it has. ScalaTest's JUnitSuite drops a failure of a spec's {@code @BeforeClass}
 * (it reaches JUnit as a failure of the class, not of a test): the spec then reports no test at
 * all, none failed, and the build would pass without having run it.
 *
 *   SuiteReports REPORTS_DIR
 *
 * A spec without a report (not selected with -Dsuites) is not checked; nor is anything when the
 * directory is missing (no spec ran).
 */
public final class SuiteReports {
  private static final Pattern SUITE = Pattern.compile("<testsuite\\b[^>]*?\\bname=\"([^\"]+)\"[^>]*?\\btests=\"(\\d+)\"");

  private SuiteReports() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    if (!Files.isDirectory(dir)) {
      return;
    }
    List<String> short_ = new ArrayList<>();
    try (Stream<Path> reports = Files.list(dir)) {
      for (Path report : (Iterable<Path>) reports.filter(p -> p.getFileName().toString().endsWith(".xml"))::iterator) {
        String problem = check(report);
        if (problem != null) {
          short_.add(problem);
        }
      }
    }
    if (!short_.isEmpty()) {
      throw new IllegalStateException("specs that did not run all their tests (a @BeforeClass that failed is "
          + "not reported as a failure; see the spec's output above):\n  " + String.join("\n  ", short_));
    }
  }

  /** What is wrong with one spec's report, or null. */
  static String check(Path report) throws IOException, ClassNotFoundException {
    Matcher m = SUITE.matcher(Files.readString(report));
    if (!m.find()) {
      return null;
    }
    String suite = m.group(1);
    int ran = Integer.parseInt(m.group(2));
    int declared = declaredTests(Class.forName(suite, false, SuiteReports.class.getClassLoader()));
    return ran < declared ? suite + ": " + ran + " of " + declared + " tests ran" : null;
  }

  /** The JUnit tests of {@code spec} that are not ignored. */
  static int declaredTests(Class<?> spec) {
    if (spec.isAnnotationPresent(Ignore.class)) {
      return 0;
    }
    int n = 0;
    for (Method method : spec.getMethods()) {
      if (method.isAnnotationPresent(Test.class) && !method.isAnnotationPresent(Ignore.class)) {
        n++;
      }
    }
    return n;
  }
}
