package io.shoal.recursion;

import io.shoal.upstream.UpstreamException;
import io.shoal.upstream.UpstreamSelector;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.WireException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;

/**
 * One question to one authority address through the node's upstream sockets: a fresh random ID
 * and source port, the question name's letter case randomised (0x20) and required back exactly,
 * EDNS with a 1232-byte buffer and DO set (the validator needs RRSIGs and denial proofs), no RD,
 * and TCP when the answer comes back truncated. Completes with the parsed reply or fails with an
 * {@link UpstreamException} whose outcome names why.
 */
final class AuthorityQuery {
  /** What came back and how long it took. */
  record Reply(Message message, long rttNanos) {}

  private AuthorityQuery() {}

  static CompletableFuture<Reply> ask(
      UpstreamSelector sockets, InetSocketAddress server, Name name, int type, long deadlineNanos) {
    int id = sockets.newQueryId();
    Message m = new Message(id);
    m.addRecord(Record.newRecord(name, type, DClass.IN), Section.QUESTION);
    m.addRecord(new OPTRecord(DnsQuery.EDNS_UDP_SIZE, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    byte[] wire = mixCase(m.toWire());
    CacheKey key;
    try {
      key = CacheKey.ofQuestion(wire, 0);
    } catch (WireException e) {
      return CompletableFuture.failedFuture(new UpstreamException("error", "cannot ask " + name + ": " + e));
    }
    long start = System.nanoTime();
    return sockets.udp(server, wire, id, key, deadlineNanos).thenCompose(answer -> {
      if (answer.length > 2 && (answer[2] & 0x02) != 0) {
        return sockets.tcp(server, wire, id, key, deadlineNanos).thenApply(tcp -> parse(wire, tcp, start, true));
      }
      return CompletableFuture.completedFuture(parse(wire, answer, start, false));
    });
  }

  private static Reply parse(byte[] query, byte[] answer, long start, boolean tcp) {
    long rtt = System.nanoTime() - start;
    int nameEnd = 12;
    while (query[nameEnd] != 0) {
      nameEnd += (query[nameEnd] & 0xff) + 1;
    }
    for (int i = 12; i <= nameEnd; i++) {
      if (i >= answer.length || answer[i] != query[i]) {
        // The selector matched ID and question ignoring case; a spoofer must guess the case too.
        throw new CompletionException(new UpstreamException("mismatch", "question's letter case changed"));
      }
    }
    try {
      Message m = new Message(answer);
      if (!tcp && m.getHeader().getFlag(org.xbill.DNS.Flags.TC)) {
        throw new CompletionException(new UpstreamException("truncated", "truncated"));
      }
      return new Reply(m, rtt);
    } catch (IOException e) {
      throw new CompletionException(new UpstreamException("malformed", "malformed reply: " + e.getMessage()));
    }
  }

  /**
   * {@code query} with each letter of its question name given a random case, in place: the
   * name is the first in the message, written whole from offset 12 (nothing before it to point to).
   */
  static byte[] mixCase(byte[] query) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long bits = 0;
    int left = 0;
    int i = 12;
    while (i < query.length && query[i] != 0) {
      int end = i + 1 + (query[i] & 0xff);
      for (int j = i + 1; j < end && j < query.length; j++) {
        int c = query[j] | 0x20;
        if (c >= 'a' && c <= 'z') {
          if (left == 0) {
            bits = random.nextLong();
            left = 64;
          }
          if ((bits & 1) != 0) {
            query[j] ^= 0x20;
          }
          bits >>>= 1;
          left--;
        }
      }
      i = end;
    }
    return query;
  }
}
