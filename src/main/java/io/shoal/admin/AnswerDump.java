package io.shoal.admin;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
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

  /** What a read found: answers handed on, answers expired since the dump, answers that would not parse. */
  public record ReadCount(int entries, int expired, List<String> unreadable) {}

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
   * counted and left out, the others handed to {@code sink}. An answer that does not parse is
   * reported and left out; a dump without its header line is refused.
   */
  public static ReadCount read(BufferedReader in, long nowMillis, EntrySink sink) throws IOException, FormatException {
    String first = in.readLine();
    if (first == null || !first.startsWith(HEADER)) {
      throw new FormatException(1, "not a shoal cache dump: the first line must start with '" + HEADER + "'");
    }
    long dumped;
    try {
      dumped = Long.parseLong(first.substring(HEADER.length()).split("\\s+", 2)[0]);
    } catch (NumberFormatException e) {
      throw new FormatException(1, "dumped= is not epoch milliseconds");
    }
    Reading r = new Reading(nowMillis, dumped, sink);
    int lineNo = 1;
    String line;
    while ((line = in.readLine()) != null) {
      lineNo++;
      r.line(line, lineNo);
    }
    r.finish();
    return new ReadCount(r.entries, r.expired, List.copyOf(r.unreadable));
  }

  /** The state of one read: the answer being gathered, its records by section. */
  private static final class Reading {
    final long now;
    final long dumped;
    final long age;
    final EntrySink sink;
    int entries;
    int expired;
    final List<String> unreadable = new ArrayList<>();
    String head;
    int headLine;
    final Map<Integer, StringBuilder> sections = new TreeMap<>();
    int section = Section.ANSWER;

    Reading(long now, long dumped, EntrySink sink) {
      this.now = now;
      this.dumped = dumped;
      this.age = Math.max(0, now - dumped);
      this.sink = sink;
    }

    void line(String line, int lineNo) throws IOException {
      String t = line.strip();
      if (t.startsWith(ANSWER)) {
        finish();
        head = t.substring(ANSWER.length());
        headLine = lineNo;
        sections.clear();
        section = Section.ANSWER;
      } else if (t.startsWith(";")) {
        String name = t.substring(1).strip();
        int s = name.equals("answer") ? Section.ANSWER
            : name.equals("authority") ? Section.AUTHORITY : name.equals("additional") ? Section.ADDITIONAL : -1;
        if (s >= 0) {
          section = s;
        }
      } else if (!t.isEmpty() && head != null) {
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
      String at = "line " + headLine + ": ";
      try {
        Entry e = entry();
        if (e == null) {
          expired++;
        } else {
          entries++;
          sink.accept(e);
        }
      } catch (IllegalArgumentException | WireException | TextParseException e) {
        unreadable.add(at + e.getMessage());
      } finally {
        head = null;
      }
    }

    /** The answer gathered so far, or null when it has expired since the dump. */
    Entry entry() throws IOException, WireException {
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
      m.addRecord(Record.newRecord(Name.fromString(words[0], Name.root), qtype, qclass), Section.QUESTION);
      for (Map.Entry<Integer, StringBuilder> s : sections.entrySet()) {
        try (Master records = new Master(
            new ByteArrayInputStream(s.getValue().toString().getBytes(StandardCharsets.UTF_8)), Name.root)) {
          records.disableIncludes();
          Record r;
          while ((r = records.nextRecord()) != null) {
            m.addRecord(r, s.getKey());
          }
        }
      }
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
