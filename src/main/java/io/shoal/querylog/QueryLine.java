package io.shoal.querylog;

import java.io.IOException;
import java.time.Instant;
import java.util.Locale;
import org.xbill.DNS.DNSInput;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * One query as a JSON line: {@code time, client, transport, name, type, rcode, cache, latency_ms}.
 * Built on the writer thread, so the query path never formats text.
 */
final class QueryLine {
  private QueryLine() {}

  static String format(QueryEvent e) {
    StringBuilder b = new StringBuilder(192);
    b.append("{\"time\":\"").append(Instant.ofEpochSecond(0, e.queryNanos())).append('"');
    b.append(",\"client\":\"").append(e.peer().getAddress().getHostAddress()).append('"');
    b.append(",\"transport\":\"").append(e.protocol().label()).append('"');
    String name = null;
    int qtype = -1;
    try {
      DNSInput in = new DNSInput(e.query());
      in.jump(12);
      name = new Name(in).toString();
      qtype = in.readU16();
    } catch (IOException | RuntimeException unreadable) {
      // a query bad enough to have no question still gets its line, without name and type
    }
    b.append(",\"name\":");
    string(b, name);
    b.append(",\"type\":");
    string(b, qtype < 0 ? null : Type.string(qtype));
    b.append(",\"rcode\":");
    // null: the query got no reply (dropped)
    string(b, e.response() == null || e.response().length < 4 ? null : Rcode.string(e.response()[3] & 0x0F));
    b.append(",\"cache\":\"").append(e.cache().label()).append('"');
    b.append(",\"latency_ms\":")
        .append(String.format(Locale.ROOT, "%.3f", Math.max(0, e.responseNanos() - e.queryNanos()) / 1e6));
    return b.append('}').toString();
  }

  private static void string(StringBuilder b, String s) {
    if (s == null) {
      b.append("null");
      return;
    }
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c > 0x7e) {
        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    b.append('"');
  }
}
