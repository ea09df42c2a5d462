package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.pubsub.Topic;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.shoal.cache.AnswerCache;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster-wide flush through Akka's distributed pub-sub: every node subscribes to one topic and
 * removes the flushed name from all of its caches, local copies included.
 */
public final class CacheFlush {
  private static final Logger log = LoggerFactory.getLogger(CacheFlush.class);

  private CacheFlush() {}

  /** Remove {@code name} (all types, or only {@code qtype} when it is not 0) everywhere. */
  public static final class Flush implements CborSerializable {
    public final String name;
    public final int qtype;

    @JsonCreator
    public Flush(@JsonProperty("name") String name, @JsonProperty("qtype") int qtype) {
      this.name = name;
      this.qtype = qtype;
    }
  }

  /** The topic actor: publish a {@link Flush} to it to reach every node. */
  public static Behavior<Topic.Command<Flush>> topic() {
    return Topic.create(Flush.class, "shoal-cache-flush");
  }

  /** A subscriber that applies flushes to this node's caches. */
  public static Behavior<Flush> subscriber(ActorRef<Topic.Command<Flush>> topic, List<AnswerCache> caches) {
    return Behaviors.setup(ctx -> {
      topic.tell(Topic.subscribe(ctx.getSelf()));
      return Behaviors.receiveMessage(flush -> {
        for (AnswerCache cache : caches) {
          cache.flushName(flush.name, flush.qtype).thenAccept(n ->
              log.info("flushed {} entr{} for {} from cache {}", n, n == 1 ? "y" : "ies", flush.name, cache.name()));
        }
        return Behaviors.same();
      });
    });
  }
}
