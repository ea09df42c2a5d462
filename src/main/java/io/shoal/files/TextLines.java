package io.shoal.files;

/**
 * The lines of a file's bytes, one after another, without copying them: where each starts, where
 * it ends (its {@code '\n'}, or the end of the text), and its 1-based number. Each {@link #next}
 * moves past at least one byte, so a loop over the lines ends with the text.
 */
public final class TextLines {
  private final byte[] text;
  private int start;
  private int end;
  private int following;
  private int number;

  /** The lines of {@code text}; none yet taken. */
  public TextLines(byte[] text) {
    this.text = text;
  }

  /** Takes the next line; false when the text has no more. */
  public boolean next() {
    if (following >= text.length) {
      return false;
    }
    start = following;
    int eol = start;
    while (eol < text.length && text[eol] != '\n') {
      eol++;
    }
    end = eol;
    following = Math.min(eol + 1, text.length);
    number++;
    return true;
  }

  /** The index of the line's first byte. */
  public int start() {
    return start;
  }

  /** The index just past the line's last byte: its {@code '\n'}, or the end of the text. */
  public int end() {
    return end;
  }

  /** The index where the next line starts: past the line's {@code '\n'}, or the end of the text. */
  public int following() {
    return following;
  }

  /** Whether the line ends with a {@code '\n'} (the text's last line may not). */
  public boolean endsWithNewline() {
    return end < text.length;
  }

  /** The 1-based number of the line. */
  public int number() {
    return number;
  }
}
