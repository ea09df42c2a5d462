package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A node asking the owner of a question for its answer: the client's query bytes (the owner
 * validates them again; nothing from another node is trusted blindly) and where to reply.
 */
public final class PeerLookup implements CborSerializable {
  public final byte[] query;
  public final ActorRef<PeerAnswer> replyTo;

  @JsonCreator
  public PeerLookup(@JsonProperty("query") byte[] query, @JsonProperty("replyTo") ActorRef<PeerAnswer> replyTo) {
    this.query = query;
    this.replyTo = replyTo;
  }
}
