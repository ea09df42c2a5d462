package io.shoal.cache.lmdb;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import java.util.ArrayList;
import java.util.List;
import org.lmdbjava.Cursor;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.GetOp;
import org.lmdbjava.Txn;

/**
 * The two databases of one shard (see {@link AnswerCodec}) and what the node and the offline
 * tools both do with them inside a write transaction.
 */
record ShardDatabases(Dbi<ByteBuffer> answers, Dbi<ByteBuffer> expiry) {

  /** Opens both, creating them when absent (a node). */
  static ShardDatabases create(Env<ByteBuffer> env) {
    return new ShardDatabases(env.openDbi(AnswerCodec.ANSWERS, DbiFlags.MDB_CREATE),
        env.openDbi(AnswerCodec.EXPIRY, DbiFlags.MDB_CREATE));
  }

  /**
   * Empties the expiry index an older shoal kept in LMDB: nothing keeps it in step any more (the
   * order lives in the heap, or no order is kept), so stale entries must not linger.
   */
  void dropExpiryIndex(Txn<ByteBuffer> txn) {
    if (expiry.stat(txn).entries > 0) {
      expiry.drop(txn);
    }
  }

  /** Deletes an answer and its expiry-index entry (only a directory an older shoal wrote has one). */
  void delete(Txn<ByteBuffer> txn, byte[] key, long expiresAt, ByteBuffer keyScratch, ByteBuffer indexScratch) {
    answers.delete(txn, AnswerCodec.copyInto(keyScratch, key));
    expiry.delete(txn, AnswerCodec.indexKey(indexScratch, expiresAt, key));
  }

  /**
   * Removes every answer for the wire-form {@code name} of type {@code qtype} (0: every type),
   * whatever its class and flags, telling {@code removed} each key that went; returns how many
   * went. Nothing is committed here.
   */
  int removeName(Txn<ByteBuffer> txn, byte[] name, int qtype, Consumer<byte[]> removed) {
    ByteBuffer keyScratch = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY);
    ByteBuffer indexScratch = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY + 8);
    List<byte[]> keys = new ArrayList<>();
    List<Long> expiries = new ArrayList<>();
    try (Cursor<ByteBuffer> c = answers.openCursor(txn)) {
      // A wire name ends at its root label, so every key with this prefix is this name.
      boolean found = c.get(AnswerCodec.copyInto(keyScratch, name), GetOp.MDB_SET_RANGE);
      while (found && AnswerCodec.startsWith(c.key(), name)) {
        byte[] key = AnswerCodec.bytes(c.key());
        if (key.length >= name.length + 2 && (qtype == 0 || AnswerCodec.keyType(key, name.length) == qtype)) {
          keys.add(key);
          ByteBuffer v = c.val();
          expiries.add(v.remaining() >= 8 ? AnswerCodec.expiresAt(v) : -1L);
        }
        found = c.next();
      }
    }
    for (int i = 0; i < keys.size(); i++) {
      delete(txn, keys.get(i), expiries.get(i), keyScratch, indexScratch);
      removed.accept(keys.get(i));
    }
    return keys.size();
  }
}
