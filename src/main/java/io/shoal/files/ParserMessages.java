package io.shoal.files;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.xbill.DNS.InvalidTTLException;
import org.xbill.DNS.NameTooLongException;
import org.xbill.DNS.RelativeNameException;

/**
 * What dnsjava's zone-file parser found wrong, said in words of this project's own: the parser's
 * messages quote the offending text, which must not reach a log or a reply (a zone file pointed
 * at /etc/shadow would print its root hash line). Its messages are matched by their fixed part;
 * the text they quote is only looked at (is it a number?).
 */
public final class ParserMessages {
  private static final Pattern TOKENIZER_LINE = Pattern.compile("^<none>:(\\d+): (.*)$", Pattern.DOTALL);
  private static final Pattern QUOTED = Pattern.compile("'[^']*'");

  private ParserMessages() {}

  /** What {@code e}, thrown by dnsjava's zone-file parser, says is wrong, in words that quote nothing of the text. */
  public static String describe(Throwable e) {
    String m = e.getMessage() == null ? "" : e.getMessage();
    Matcher at = TOKENIZER_LINE.matcher(m);
    return describe(e, at.matches() ? at.group(2) : m);
  }

  /**
   * What the parser found wrong, in words that quote nothing of the file: its own messages are
   * matched by their fixed part; the text they quote is only looked at (is it a number?).
   */
  static String describe(Throwable e, String message) {
    if (e instanceof RelativeNameException) {
      return "a relative name (such as @) with no $ORIGIN before it: start the file with $ORIGIN, or end every"
          + " name with a dot";
    }
    if (e instanceof NameTooLongException || message.contains("Name too long")) {
      return "a name longer than 255 bytes";
    }
    if (e instanceof InvalidTTLException) {
      return "a TTL out of range (0 to 2147483647 seconds)";
    }
    Matcher quoted = QUOTED.matcher(message);
    String first = quoted.find() ? quoted.group() : "''";
    String token = first.substring(1, first.length() - 1);
    if (message.startsWith("Invalid type")) {
      return !token.isEmpty() && Character.isDigit(token.charAt(0))
          ? "not a valid TTL (0 to 2147483647 seconds, or with units such as 1h30m)"
          : "an unknown record type or class";
    }
    String[][] known = {
      {"missing TTL", "no TTL: give the record one, or put $TTL before it"},
      {"no owner", "a line that starts with a blank (no owner name) before any record with one"},
      {"Invalid directive", "an unknown $ directive (known: $ORIGIN, $TTL, $INCLUDE, $GENERATE)"},
      {"$INCLUDE encountered", "$INCLUDE where it cannot be followed"},
      {"Invalid $GENERATE range", "a $GENERATE range that is not START-END[/STEP]"},
      {"$GENERATE does not support", "a $GENERATE of a record type it cannot make"},
      {"Parsing $GENERATE", "a $GENERATE template that makes no valid record"},
      {"unbalanced parentheses", "unbalanced parentheses"},
      {"invalid close parenthesis", "unbalanced parentheses"},
      {"EOF in quoted string", "a quoted string that does not end"},
      {"newline in quoted string", "a quoted string that does not end on its line"},
      {"unterminated escape", "a backslash at the end of the file"},
      {"unexpected tokens at end of record", "more fields than the record type takes"},
      {"expected a string", "a record cut short: its type or data is missing"},
      {"expected an identifier", "a record cut short: its type or data is missing"},
      {"Invalid address", "not a valid address"},
      {"expected", null},
    };
    for (String[] k : known) {
      if (message.startsWith(k[0])) {
        if (k[1] != null) {
          return k[1];
        }
        // "expected an integer", "expected a TTL value", ...: the fixed phrase before any quote.
        return QUOTED.matcher(message).replaceAll("").split(":")[0].trim();
      }
    }
    // Name errors read "'TEXT': what"; other messages keep their fixed first part.
    String unquoted = QUOTED.matcher(message).replaceAll("").trim();
    String[] parts = unquoted.split(":\\s*");
    String words = parts.length == 0 ? "" : parts[0].isEmpty() && parts.length > 1 ? parts[1] : parts[0];
    words = words.replaceAll("[^A-Za-z0-9 $,()-]", "").trim();
    if (words.isEmpty() || words.length() > 80) {
      return "not a valid record (" + e.getClass().getSimpleName() + ")";
    }
    return "not a valid record: " + words;
  }
}
