package io.shoal.ingress;

/**
 * One question the front door asks of a query, as one link of the {@link StageChain}: does this
 * stage answer the query, drop it, or pass it to the next? A stage that answers or drops has sent
 * the reply (or told the reply path there is none) itself. Stages run on the thread that read the
 * query, one after the other, each as often as queries arrive, so a stage keeps no per-query state
 * of its own (that is in the {@link QueryContext}) and allocates nothing on the way to a hit.
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

  /** @param name what the stage is called where the chain is listed (its log line at start) */
  Stage(String name) {
    this.name = name;
  }

  /** What this stage does with the query in {@code q}. */
  abstract Verdict decide(QueryContext q);

  @Override
  public String toString() {
    return name;
  }
}
