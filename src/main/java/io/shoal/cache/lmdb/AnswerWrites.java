package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import java.nio.ByteBuffer;
import org.lmdbjava.Dbi;
import org.lmdbjava.Txn;

/**
 * The writer's access to one shard's {@code answers} database inside a write transaction, with
 * its reusable native buffers. Only the shard's actor writes, never two messages at once.
 */
final class AnswerWrites {
  private final Dbi<ByteBuffer> answers;
  private final ByteBuffer key = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY);
  private ByteBuffer value = ByteBuffer.allocateDirect(4096);

  AnswerWrites(Dbi<ByteBuffer> answers) {
    this.answers = answers;
  }

  /** The expiry of the answer stored under {@code key} as this transaction sees it, or -1 when none. */
  long expiryOf(Txn<ByteBuffer> txn, byte[] key) {
    ByteBuffer held = answers.get(txn, AnswerCodec.copyInto(this.key, key));
    return held == null ? -1 : AnswerCodec.expiresAt(held);
  }

  void put(Txn<ByteBuffer> txn, byte[] key, CachedAnswer answer) {
    value = AnswerCodec.encode(answer, value);
    answers.put(txn, AnswerCodec.copyInto(this.key, key), value);
  }

  void delete(Txn<ByteBuffer> txn, byte[] key) {
    answers.delete(txn, AnswerCodec.copyInto(this.key, key));
  }
}
