package io.shoal.cluster;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.shoal.cache.CachedAnswer;
import java.nio.ByteBuffer;

/**
 * The owner's reply to a {@link PeerLookup}: the answer as the owner caches it (so every node
 * counts the TTL down from the same store time), or nothing when the owner could not resolve it.
 */
public final class PeerAnswer implements CborSerializable {
  /** Where the owner found it: "hit" (its cache), "fetched" (upstream), "failed". */
  public final String source;
  /** {@link CachedAnswer#encode} bytes, empty when failed. */
  public final byte[] answer;
  /** False when the owner did not cache it either (e.g. TTL 0): serve, do not keep. */
  public final boolean cacheable;

  @JsonCreator
  public PeerAnswer(
      @JsonProperty("source") String source,
      @JsonProperty("answer") byte[] answer,
      @JsonProperty("cacheable") boolean cacheable) {
    this.source = source;
    this.answer = answer;
    this.cacheable = cacheable;
  }

  public static PeerAnswer of(String source, CachedAnswer answer, boolean cacheable) {
    ByteBuffer buf = ByteBuffer.allocate(answer.encodedSize());
    answer.encode(buf);
    return new PeerAnswer(source, buf.array(), cacheable);
  }

  public static PeerAnswer failed() {
    return new PeerAnswer("failed", new byte[0], false);
  }

  public boolean answered() {
    return answer.length > 0;
  }

  public CachedAnswer decode() {
    return CachedAnswer.decode(ByteBuffer.wrap(answer));
  }
}
