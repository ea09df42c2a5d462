package io.shoal.study.host;

/** A study step that failed at run time: a server that did not start or answer, a tool that failed. */
public final class StudyException extends Exception {
  public StudyException(String message) {
    super(message);
  }

  public StudyException(String message, Throwable cause) {
    super(message, cause);
  }
}
