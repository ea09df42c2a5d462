package io.shoal.admin;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The text form of cached answers that {@code shoal cache dump} writes and {@code shoal cache
 * load} reads: zone-file lines with each record's remaining TTL, each answer introduced by a
 * comment that says what the cache needs beyond its records (the key's DO and CD bits, the rcode,
 * the header flags, the expiry). A reader that knows nothing of shoal sees a zone file.
 *
 * <pre>
 * ; shoal-dump v1 dumped=1764650000000 (2025-12-02T04:33:20Z)
 * ; shoal-answer www.example.com. A IN key=- rcode=NOERROR flags=qr,rd,ra expires=1764650055000
 * ; answer
 * www.example.com.	55	IN	A	192.0.2.1
 * ; end entries=1
 * </pre>
 *
 * <p>This class writes a dump and holds its format; a read goes a line at a time through
 * {@link DumpLines}, and {@link DumpReading} turns the lines back into answers.
 */
public final class AnswerDump {
  static final String HEADER = "; shoal-dump v1 dumped=";
  static final String ANSWER = "; shoal-answer ";
  static final String END = "; end entries=";
  static final int[] SECTIONS = {Section.ANSWER, Section.AUTHORITY, Section.ADDITIONAL};
  private static final int[] HEADER_FLAGS = {Flags.QR, Flags.AA, Flags.TC, Flags.RD, Flags.RA, Flags.AD, Flags.CD};

  /** A dump that cannot be loaded: the line and what is wrong with it. */
  public static final class FormatException extends Exception {
    FormatException(int line, String why) {
      super("line " + line + ": " + why);
    }
  }

  /** An answer read back from a dump, its TTLs aged by the time since the dump. */
  public record Entry(CacheKey key, ScannedAnswer answer, long expiresAtMillis) {}

  /** What a dump's reader wants done with each unexpired answer. */
  @FunctionalInterface
  public interface EntrySink {
    void accept(Entry entry) throws IOException;
  }

  /**
   * One answer of a dump that was not loaded: the line its {@code ; shoal-answer} comment is on,
   * its name, {@code unreadable} (it does not parse) or {@code refused} (its records do not belong
   * to its key, see {@link AnswerChain}), and what is wrong.
   */
  public record Problem(long line, String name, String kind, String why) {}

  /**
   * What a read found: answers handed on, expired since the dump, that would not parse, refused
   * for records that do not belong to their key; authority and additional records dropped from
   * the answers handed on; and the first {@link #PROBLEMS_SHOWN} problems, never more.
   */
  public record ReadCount(long entries, long expired, long unreadable, long refused, long recordsDropped,
      List<Problem> firstProblems) {}

  /** Problems a read reports in full: the rest are only counted, so the reply stays small. */
  public static final int PROBLEMS_SHOWN = 10;
  /** Characters of one line a read holds; a longer line makes its answer unreadable. */
  static final int MAX_LINE = 256 * 1024;
  /** Characters of one answer's records a read holds (a DNS message is at most 64 KiB on the wire). */
  static final int MAX_ANSWER_TEXT = 1024 * 1024;
  /** Characters of a name or reason quoted in a problem. */

  private AnswerDump() {}

  /** The first line of a dump taken at {@code nowMillis}. */
  public static void writeHeader(Writer out, long nowMillis) throws IOException {
    out.write(HEADER + nowMillis + " (" + Instant.ofEpochMilli(nowMillis) + ")\n");
  }

  /** The last line: a reader that does not find it knows the dump was cut short. */
  public static void writeEnd(Writer out, long entries) throws IOException {
    out.write(END + entries + "\n");
  }

  /**
   * Writes {@code answer} with its TTLs counted down to {@code nowMillis}, as a hit would serve
   * them; returns false (and writes nothing) when it is expired or does not parse.
   */
  public static boolean write(Writer out, CacheKey key, CachedAnswer answer, long nowMillis) throws IOException {
    if (answer.expiredAt(nowMillis)) {
      return false;
    }
    Message m;
    try {
      m = new Message(answer.optStart() >= 0 ? ScannedAnswer.withoutUpstreamOpt(answer.wire()).wire() : answer.wire());
    } catch (IOException | WireException e) {
      return false;
    }
    long elapsed = Math.max(0, (nowMillis - answer.storedAtMillis()) / 1000);
    // As CachedAnswer.render: a negative answer's TTLs never outlive the entry.
    long cap = ScannedAnswer.positive(answer.wire())
        ? Long.MAX_VALUE : Math.max(0, (answer.expiresAtMillis() - answer.storedAtMillis()) / 1000);
    StringBuilder sb = new StringBuilder(256);
    sb.append(ANSWER).append(key.name()).append(' ').append(Type.string(key.qtype())).append(' ')
        .append(DClass.string(key.qclass())).append(" key=").append(CacheDirectory.flagNames(key.flags()))
        .append(" rcode=").append(Rcode.string(m.getHeader().getRcode()))
        .append(" flags=").append(flagNames(m)).append(" expires=").append(answer.expiresAtMillis()).append('\n');
    for (int section : SECTIONS) {
      List<Record> records = m.getSection(section).stream().filter(r -> r.getType() != Type.OPT).toList();
      if (records.isEmpty()) {
        continue;
      }
      sb.append("; ").append(Section.string(section).toLowerCase(Locale.ROOT)).append('\n');
      for (Record r : records) {
        long ttl = Math.max(0, Math.min(r.getTTL(), cap) - elapsed);
        sb.append(r.getName()).append('\t').append(ttl).append('\t').append(DClass.string(r.getDClass()))
            .append('\t').append(Type.string(r.getType())).append('\t').append(r.rdataToString()).append('\n');
      }
    }
    out.write(sb.toString());
    return true;
  }

  private static String flagNames(Message m) {
    List<String> set = new ArrayList<>();
    for (int f : HEADER_FLAGS) {
      if (m.getHeader().getFlag(f)) {
        set.add(Flags.string(f));
      }
    }
    return set.isEmpty() ? "-" : String.join(",", set);
  }

  /**
   * Reads a dump at {@code nowMillis}: each answer's TTLs and expiry aged by the time since the
   * dump (never made longer when this clock is behind the dumping node's), expired answers
   * counted and left out, the others handed to {@code sink}. An answer that does not parse, or
   * whose answer section holds a record off its key's chain, is counted and left out; authority
   * and additional records that do not belong are dropped from it. A dump without its header
   * line is refused. The text is read as a stream: one answer at a time, one line of at most
   * {@link #MAX_LINE} characters at a time.
   */
  public static ReadCount read(Reader in, long nowMillis, EntrySink sink) throws IOException, FormatException {
    DumpLines lines = new DumpLines(in);
    String first = lines.next();
    if (first == null || lines.tooLong || !first.startsWith(HEADER)) {
      throw new FormatException(1, "not a shoal cache dump: the first line must start with '" + HEADER + "'");
    }
    long dumped;
    try {
      dumped = Long.parseLong(first.substring(HEADER.length()).split("\\s+", 2)[0]);
    } catch (NumberFormatException e) {
      throw new FormatException(1, "dumped= is not epoch milliseconds");
    }
    DumpReading r = new DumpReading(nowMillis, dumped, sink);
    long lineNo = 1;
    String line;
    while ((line = lines.next()) != null) {
      lineNo++;
      r.line(line, lineNo, lines.tooLong);
    }
    r.finish();
    return new ReadCount(r.entries, r.expired, r.unreadable, r.refused, r.recordsDropped, List.copyOf(r.problems));
  }
}
