package io.shoal.study.scenario;

/**
 * What a study's page says before its figures, from the scenario file: the question the study
 * answers and when the answer matters to a user ({@code question}, {@code when_this_matters}; the
 * description stands in for the question, and nothing for the other, when a file has neither), and
 * the study a variant belongs to ({@code part_of}: its runs are published under that study's
 * results as named runs, TIMESTAMP-NAME, rather than as a study of their own), and the members
 * that repeat the baseline, its build and configuration under another name ({@code
 * repeats_baseline}): an A/A check, whose ratio to the baseline is the host's and the turn
 * order's, so the page reads it as the instrument's spread rather than as a result.
 */
public record StudyPage(String question, String whenThisMatters, String partOf, java.util.List<String> repeats) {

  public StudyPage {
    repeats = java.util.List.copyOf(repeats);
  }

  /** A page without A/A members. */
  public StudyPage(String question, String whenThisMatters, String partOf) {
    this(question, whenThisMatters, partOf, java.util.List.of());
  }

  /** The page of a scenario with neither key: its description as the question. */
  public static StudyPage of(String description) {
    return new StudyPage(description, null, null);
  }
}
