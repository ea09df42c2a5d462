package io.shoal.upstream;

import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A query sent from one of the node's listening UDP sockets (an owner lookup in cluster mode),
 * whose reply is read by the listeners' own threads: {@link UpstreamSelector#fromListener}.
 *
 * <p>It has no socket of its own, so no random source port: what an off-path attacker must
 * guess to slip in a forged reply is its 16-bit ID, the exact letter case of its question name
 * (randomised, as in draft-vixie-dnsext-dns0x20), and the owner's address, which the reply
 * must come from.
 */
final class ListenerExchange extends Exchange {
  /** The question as sent, letter case and all: the reply must carry it byte for byte. */
  private final byte[] question;
  private final AtomicReferenceArray<ListenerExchange> byId;

  ListenerExchange(InetSocketAddress server, int id, CacheKey key, long deadlineNanos, byte[] question,
      AtomicReferenceArray<ListenerExchange> byId) {
    super(server, id, key, deadlineNanos);
    this.question = question;
    this.byId = byId;
  }

  @Override
  int firstInterest() {
    return 0; // never registered with the selector: only its deadline is kept there
  }

  @Override
  void end(UpstreamSockets sockets, boolean reuse) {
    claim(); // frees its ID, unless a reply took it first
  }

  /** Whether {@code reply}, which came from {@code from}, is this query's answer. */
  boolean repliedBy(byte[] reply, InetSocketAddress from) {
    return from.getPort() == server.getPort()
        && from.getAddress().equals(server.getAddress())
        && ScannedAnswer.echoes(reply, question);
  }

  /** Takes this exchange's ID back for the reply; false when its time ran out or another reply took it first. */
  boolean claim() {
    return byId.compareAndSet(id, this, null);
  }
}
