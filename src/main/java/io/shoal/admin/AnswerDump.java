package io.shoal.admin;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Master;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TextParseException;
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
 */
public final class AnswerDump {
  static final String HEADER = "; shoal-dump v1 dumped=";
  static final String ANSWER = "; shoal-answer ";
  static final String END = "; end entries=";
  private static final int[] SECTIONS = {Section.ANSWER, Section.AUTHORITY, Section.ADDITIONAL};
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
  private static final int QUOTED = 300;

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
    Lines lines = new Lines(in);
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
    Reading r = new Reading(nowMillis, dumped, sink);
    long lineNo = 1;
    String line;
    while ((line = lines.next()) != null) {
      lineNo++;
      r.line(line, lineNo, lines.tooLong);
    }
    r.finish();
    return new ReadCount(r.entries, r.expired, r.unreadable, r.refused, r.recordsDropped, List.copyOf(r.problems));
  }

  /** The lines of a text, each cut at {@link #MAX_LINE} characters (the rest skipped), so no line fills the heap. */
  private static final class Lines {
    private final Reader in;
    private final char[] buf = new char[1 << 16];
    private int at;
    private int end;
    private final StringBuilder line = new StringBuilder(256);
    /** Whether the line {@link #next} returned last was longer than it returned. */
    boolean tooLong;

    Lines(Reader in) {
      this.in = in;
    }

    /** The next line without its end (LF or CRLF), or null at the end of the text. */
    String next() throws IOException {
      line.setLength(0);
      tooLong = false;
      boolean any = false;
      while (true) {
        if (at == end) {
          end = in.read(buf, 0, buf.length);
          at = 0;
          if (end <= 0) {
            end = 0;
            return any ? finish() : null;
          }
        }
        any = true;
        int from = at;
        while (at < end && buf[at] != '\n') {
          at++;
        }
        int room = MAX_LINE - line.length();
        int n = at - from;
        if (n > room) {
          tooLong = true;
          n = room;
        }
        line.append(buf, from, n);
        if (at < end) {
          at++;
          return finish();
        }
      }
    }

    private String finish() {
      int n = line.length();
      if (n > 0 && line.charAt(n - 1) == '\r') {
        line.setLength(n - 1);
      }
      return line.toString();
    }
  }

  /** The state of one read: the answer being gathered, its records by section. */
  private static final class Reading {
    final long now;
    final long dumped;
    final long age;
    final EntrySink sink;
    long entries;
    long expired;
    long unreadable;
    long refused;
    long recordsDropped;
    final List<Problem> problems = new ArrayList<>();
    String head;
    long headLine;
    /** Why the answer being gathered cannot be read (too long), or null. */
    String broken;
    int textSize;
    final Map<Integer, StringBuilder> sections = new TreeMap<>();
    int section = Section.ANSWER;

    Reading(long now, long dumped, EntrySink sink) {
      this.now = now;
      this.dumped = dumped;
      this.age = Math.max(0, now - dumped);
      this.sink = sink;
    }

    void line(String line, long lineNo, boolean tooLong) throws IOException {
      String t = line.strip();
      if (t.startsWith(ANSWER)) {
        finish();
        head = t.substring(ANSWER.length());
        headLine = lineNo;
        sections.clear();
        textSize = 0;
        broken = tooLong ? "line " + lineNo + " is longer than " + MAX_LINE + " characters" : null;
        section = Section.ANSWER;
      } else if (t.startsWith(";")) {
        String name = t.substring(1).strip();
        int s = name.equals("answer") ? Section.ANSWER
            : name.equals("authority") ? Section.AUTHORITY : name.equals("additional") ? Section.ADDITIONAL : -1;
        if (s >= 0) {
          section = s;
        }
      } else if (!t.isEmpty() && head != null && broken == null) {
        textSize += t.length();
        if (tooLong || textSize > MAX_ANSWER_TEXT) {
          broken = tooLong ? "line " + lineNo + " is longer than " + MAX_LINE + " characters"
              : "its records are longer than " + MAX_ANSWER_TEXT + " characters";
          sections.clear();
          return;
        }
        sections.computeIfAbsent(section, k -> new StringBuilder()).append(aged(t)).append('\n');
      }
    }

    /** The record line with its TTL (the second field, as dump writes it) lowered by the age. */
    String aged(String line) {
      String[] f = line.split("\\s+", 3);
      if (f.length < 3 || f[0].startsWith("$")) {
        // Master would take $INCLUDE as a file to read: a dump names no files.
        return "; " + line;
      }
      try {
        long ttl = Math.max(0, Long.parseLong(f[1]) - age / 1000);
        return f[0] + "\t" + ttl + "\t" + f[2];
      } catch (NumberFormatException e) {
        return line;
      }
    }

    void finish() throws IOException {
      if (head == null) {
        return;
      }
      Entry e = null;
      try {
        if (broken != null) {
          unreadable++;
          problem("unreadable", broken);
        } else {
          e = entry();
          if (e == null) {
            expired++;
          }
        }
      } catch (AnswerChain.Misfit m) {
        refused++;
        problem("refused", m.getMessage());
      } catch (IOException | WireException | RuntimeException x) {
        // Master throws IOExceptions for text it cannot parse: the text is in memory, never the stream.
        unreadable++;
        problem("unreadable", String.valueOf(x.getMessage()));
      } finally {
        head = null;
        broken = null;
        sections.clear();
      }
      if (e != null) {
        entries++;
        sink.accept(e);
      }
    }

    private void problem(String kind, String why) {
      if (problems.size() < PROBLEMS_SHOWN) {
        problems.add(new Problem(headLine, quoted(head.split("\\s+", 2)[0]), kind, quoted(why)));
      }
    }

    private static String quoted(String s) {
      return s.length() <= QUOTED ? s : s.substring(0, QUOTED) + "...";
    }
    /** The answer gathered so far, or null when it has expired since the dump. */
    Entry entry() throws IOException, WireException, AnswerChain.Misfit {
      Map<String, String> fields = new TreeMap<>();
      String[] words = head.split("\\s+");
      if (words.length < 3) {
        throw new IllegalArgumentException("expected NAME TYPE CLASS key=.. rcode=.. flags=.. expires=..");
      }
      for (int i = 3; i < words.length; i++) {
        int eq = words[i].indexOf('=');
        if (eq > 0) {
          fields.put(words[i].substring(0, eq), words[i].substring(eq + 1));
        }
      }
      // Left at the dump as much as expires says, less the time since: in this node's clock.
      long expires = now + Long.parseLong(required(fields, "expires")) - dumped - age;
      if (expires <= now) {
        return null;
      }
      int qtype = Type.value(words[1]);
      int qclass = DClass.value(words[2]);
      int rcode = Rcode.value(required(fields, "rcode"));
      if (qtype < 0 || qclass < 0 || rcode < 0) {
        throw new IllegalArgumentException("unknown type, class or rcode in: " + head);
      }
      CacheKey key = CacheKey.of(words[0], qtype, qclass, keyFlags(required(fields, "key")));
      Message m = new Message();
      m.getHeader().setRcode(rcode);
      String flags = required(fields, "flags");
      if (!flags.equals("-")) {
        for (String f : flags.split(",")) {
          int bit = Flags.value(f);
          if (bit < 0) {
            throw new IllegalArgumentException("unknown header flag " + f);
          }
          m.getHeader().setFlag(bit);
        }
      }
      Name qname = Name.fromString(words[0], Name.root);
      m.addRecord(Record.newRecord(qname, qtype, qclass), Section.QUESTION);
      Map<Integer, List<Record>> read = new TreeMap<>();
      for (int s : SECTIONS) {
        read.put(s, new ArrayList<>());
      }
      for (Map.Entry<Integer, StringBuilder> s : sections.entrySet()) {
        try (Master records = new Master(
            new ByteArrayInputStream(s.getValue().toString().getBytes(StandardCharsets.UTF_8)), Name.root)) {
          records.disableIncludes();
          Record r;
          while ((r = records.nextRecord()) != null) {
            read.get(s.getKey()).add(r);
          }
        }
      }
      AnswerChain.Kept kept = AnswerChain.check(qname, qtype, qclass,
          read.get(Section.ANSWER), read.get(Section.AUTHORITY), read.get(Section.ADDITIONAL));
      kept.answer().forEach(r -> m.addRecord(r, Section.ANSWER));
      kept.authority().forEach(r -> m.addRecord(r, Section.AUTHORITY));
      kept.additional().forEach(r -> m.addRecord(r, Section.ADDITIONAL));
      recordsDropped += kept.dropped();
      return new Entry(key, ScannedAnswer.fromUpstream(m.toWire()), expires);
    }

    private static String required(Map<String, String> fields, String name) {
      String v = fields.get(name);
      if (v == null) {
        throw new IllegalArgumentException("missing " + name + "=");
      }
      return v;
    }

    private static int keyFlags(String names) {
      int flags = 0;
      for (String n : names.split(",")) {
        switch (n) {
          case "do" -> flags |= CacheKey.FLAG_DO;
          case "cd" -> flags |= CacheKey.FLAG_CD;
          case "-" -> { }
          default -> throw new IllegalArgumentException("unknown key flag " + n);
        }
      }
      return flags;
    }
  }
}
