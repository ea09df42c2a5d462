package io.shoal.admin;

import static io.shoal.admin.AnswerDump.ANSWER;
import static io.shoal.admin.AnswerDump.MAX_ANSWER_TEXT;
import static io.shoal.admin.AnswerDump.MAX_LINE;
import static io.shoal.admin.AnswerDump.PROBLEMS_SHOWN;
import static io.shoal.admin.AnswerDump.SECTIONS;

import io.shoal.admin.AnswerDump.Entry;
import io.shoal.admin.AnswerDump.EntrySink;
import io.shoal.admin.AnswerDump.Problem;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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
import org.xbill.DNS.Type;

/**
 * One read of a cache dump (see {@link AnswerDump#read}), fed a line at a time: gathers the
 * answer being read, its records by section with their TTLs aged since the dump, makes it an
 * {@link Entry} when its next one starts, and counts what was handed on, expired, unreadable and
 * refused, keeping the first {@link AnswerDump#PROBLEMS_SHOWN} problems.
 */
final class DumpReading {
  /** Characters of a name or reason quoted in a problem. */
  private static final int QUOTED = 300;

  /** Counts of the read so far, as {@link AnswerDump.ReadCount} reports them. */
  long entries;
  long expired;
  long unreadable;
  long refused;
  long recordsDropped;
  final List<Problem> problems = new ArrayList<>();
  private final long now;
  private final long dumped;
  private final long age;
  private final EntrySink sink;
  private String head;
  private long headLine;
  /** Why the answer being gathered cannot be read (too long), or null. */
  private String broken;
  private int textSize;
  private final Map<Integer, StringBuilder> sections = new TreeMap<>();
  private int section = Section.ANSWER;

  DumpReading(long now, long dumped, EntrySink sink) {
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
  private String aged(String line) {
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
  private Entry entry() throws IOException, WireException, AnswerChain.Misfit {
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
