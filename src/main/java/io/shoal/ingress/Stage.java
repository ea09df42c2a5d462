package io.shoal.ingress;

import io.shoal.wire.DnsQuery;
import java.net.InetSocketAddress;

/**
 * One question the front door asks of a parsed query, as one link of the {@link StageChain}: does
 * this stage answer the query, drop it, or pass it to the next? A stage that answers or drops has
 * sent the reply (or told the reply path there is none) itself. Stages run on the thread that read
 * the query, one after the other, as often as queries arrive, so a stage keeps no per-query state:
 * what it needs comes as arguments (in registers, never in an object of its own), and nothing on
 * the way to a hit allocates.
 */
abstract class Stage {
  /** What a stage did with a query. */
  enum Verdict {
    /** Replied (an answer, an error, a refusal): the chain ends here. */
    ANSWERED,
    /** No reply, on purpose: the chain ends here. */
    DROPPED,
    /** Handed on to a worker or to the key's owner node, which owe the reply: the chain ends here. */
    OWED,
    /** Not this stage's to decide: the next stage's turn. */
    PASS
  }

  private final String name;

  /** @param name what the stage is called where the chain is listed (its debug log line) */
  Stage(String name) {
    this.name = name;
  }

  /**
   * What this stage does with {@code query} from {@code client}, which came in over {@code
   * protocol} and whose reply goes to {@code reply}.
   *
   * @param arrivedOn the path the query came in on: {@code reply} itself, unless a query log
   *     watches the reply (a UDP socket sends owner lookups from itself)
   */
  abstract Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply,
      ReplyPath arrivedOn);

  @Override
  public String toString() {
    return name;
  }

  /** Sends {@code wire} to {@code client}. */
  static Verdict answer(ReplyPath reply, byte[] wire, InetSocketAddress client) {
    reply.send(wire, client);
    return Verdict.ANSWERED;
  }

  /** Tells {@code reply} the query gets no reply. */
  static Verdict drop(ReplyPath reply) {
    reply.drop();
    return Verdict.DROPPED;
  }

  /** A stage that looks at the datagram or message as read, before it is parsed. */
  abstract static class BeforeParse {
    private final String name;

    BeforeParse(String name) {
      this.name = name;
    }

    /** What this stage does with {@code packet}; as {@link Stage#decide}. */
    abstract Verdict decide(byte[] packet, InetSocketAddress client, Protocol protocol, ReplyPath reply);

    @Override
    public String toString() {
      return name;
    }
  }
}
