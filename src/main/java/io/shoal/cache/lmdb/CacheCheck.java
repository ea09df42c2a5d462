package io.shoal.cache.lmdb;

import static java.nio.ByteOrder.BIG_ENDIAN;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.LmdbException;
import org.lmdbjava.Txn;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Type;

/**
 * {@code shoal cache check}: verifies what a node relies on when it opens a cache directory.
 * Every shard opens and has both databases; every key is well formed and lives in the shard its
 * hash names; every value decodes, its wire bytes scan, and the TTL offsets stored with it are
 * the scan's; and where the directory holds an expiry index (an older shoal kept one in LMDB;
 * a node now keeps the order in memory), it holds exactly one entry, with the same expiry, per
 * answer.
 */
final class CacheCheck {
  /** Problems listed in a check report; beyond this they are only counted. */
  static final int MAX_LISTED_PROBLEMS = 1000;
  private static final int DNS_HEADER = 12;

  private final int shardCount;
  private final List<OfflineShards.Shard> shards;
  private final List<Integer> strays;
  private final List<String> notes = new ArrayList<>();
  private final List<String> problems = new ArrayList<>();
  private long unlisted;

  CacheCheck(int shardCount, List<OfflineShards.Shard> shards, List<Integer> strays) {
    this.shardCount = shardCount;
    this.shards = shards;
    this.strays = strays;
  }

  CacheDirectory.CheckReport run(long nowMillis) {
    long entries = 0;
    long expired = 0;
    for (int stray : strays) {
      problem(String.format("shard-%02d: a shard directory beyond shard_count %d", stray, shardCount));
    }
    for (OfflineShards.Shard s : shards) {
      if (s.error() != null) {
        problem(s.label() + ": " + s.error());
        continue;
      }
      ShardDatabases db = s.databases();
      try (Txn<ByteBuffer> txn = s.env().txnRead()) {
        long answers = db.answers().stat(txn).entries;
        // A node keeps its expiry order in memory; only a directory last written by an older
        // shoal holds an index, and then it must agree with the answers.
        boolean indexUsed = db.expiry().stat(txn).entries > 0;
        ByteBuffer indexKey = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY + 8);
        try (CursorIterable<ByteBuffer> all = db.answers().iterate(txn)) {
          for (CursorIterable.KeyVal<ByteBuffer> kv : all) {
            entries++;
            byte[] key = AnswerCodec.bytes(kv.key());
            String where = s.label() + ": " + describe(key);
            CacheKey parsed = AnswerCodec.parseKey(key);
            if (parsed == null) {
              problem(where + ": malformed key");
            } else {
              int owner = AnswerCodec.shardOf(parsed, shardCount);
              if (owner != s.index()) {
                problem(where + String.format(": belongs in shard-%02d by its key hash", owner));
              }
            }
            ByteBuffer value = kv.val().duplicate().order(BIG_ENDIAN);
            if (value.remaining() < 8) {
              problem(where + ": value of " + value.remaining() + " bytes");
              continue;
            }
            long expiresAt = AnswerCodec.expiresAt(value);
            if (expiresAt <= nowMillis) {
              expired++;
            }
            String valueProblem = valueProblem(value, key, parsed);
            if (valueProblem != null) {
              problem(where + ": " + valueProblem);
            }
            if (indexUsed && db.expiry().get(txn, AnswerCodec.indexKey(indexKey, expiresAt, key)) == null) {
              problem(where + ": no expiry index entry for expires-at " + Instant.ofEpochMilli(expiresAt));
            }
          }
        }
        if (indexUsed) {
          checkIndex(s, txn);
        }
      } catch (LmdbException e) {
        problem(s.label() + ": cannot read: " + e.getMessage());
      }
    }
    return new CacheDirectory.CheckReport(shards.size(), entries, expired, notes, problems, unlisted);
  }

  private void problem(String p) {
    if (problems.size() < MAX_LISTED_PROBLEMS) {
      problems.add(p);
    } else {
      unlisted++;
    }
  }

  /** Every index entry must point at an answer with the same expiry. */
  private void checkIndex(OfflineShards.Shard s, Txn<ByteBuffer> txn) {
    try (CursorIterable<ByteBuffer> all = s.databases().expiry().iterate(txn)) {
      for (CursorIterable.KeyVal<ByteBuffer> kv : all) {
        byte[] indexKey = AnswerCodec.bytes(kv.key());
        if (indexKey.length < 8 + 6) {
          problem(s.label() + ": expiry index entry of " + indexKey.length + " bytes");
          continue;
        }
        long expiresAt = ByteBuffer.wrap(indexKey).getLong();
        byte[] key = Arrays.copyOfRange(indexKey, 8, indexKey.length);
        ByteBuffer answer = s.databases().answers().get(txn, AnswerCodec.direct(key));
        String where = s.label() + ": expiry index entry for " + describe(key);
        if (answer == null) {
          problem(where + ": no such answer");
        } else if (answer.remaining() >= 8 && AnswerCodec.expiresAt(answer) != expiresAt) {
          problem(where + ": says expires-at " + Instant.ofEpochMilli(expiresAt) + ", the answer "
              + Instant.ofEpochMilli(AnswerCodec.expiresAt(answer)));
        }
      }
    }
  }

  /** Why a stored value cannot serve as the answer for {@code key}, or null when it can. */
  private static String valueProblem(ByteBuffer value, byte[] key, CacheKey parsed) {
    CachedAnswer answer = AnswerCodec.decodeChecked(value);
    if (answer == null) {
      return "value of " + value.remaining() + " bytes does not decode";
    }
    if (answer.storedAtMillis() > answer.expiresAtMillis()) {
      return "stored at " + Instant.ofEpochMilli(answer.storedAtMillis()) + ", after it expires";
    }
    ScannedAnswer scan;
    try {
      scan = ScannedAnswer.scan(answer.wire());
    } catch (WireException e) {
      return "answer does not scan: " + e.getMessage();
    }
    if (!Arrays.equals(scan.ttlOffsets(), answer.ttlOffsets())
        || scan.optStart() != answer.optStart() || scan.optEnd() != answer.optEnd()) {
      // Hits patch the TTLs at these offsets: wrong ones would corrupt every reply.
      return "stored TTL offsets do not match the answer's records";
    }
    if (parsed != null && !answersQuestion(answer.wire(), key)) {
      return "the answer is for another question";
    }
    return null;
  }

  /** Whether the answer's question is the key's name (any case), type and class. */
  private static boolean answersQuestion(byte[] wire, byte[] key) {
    int nameLength = key.length - 5;
    if (wire.length < DNS_HEADER + nameLength + 4 || u16(wire, 4) != 1) {
      return false;
    }
    for (int i = 0; i < nameLength; i++) {
      if (lower(wire[DNS_HEADER + i]) != key[i]) {
        return false;
      }
    }
    int at = DNS_HEADER + nameLength;
    return u16(wire, at) == u16(key, nameLength) && u16(wire, at + 2) == u16(key, nameLength + 2);
  }

  private static String describe(byte[] key) {
    CacheKey k = AnswerCodec.parseKey(key);
    if (k == null) {
      StringBuilder hex = new StringBuilder("key 0x");
      for (int i = 0; i < Math.min(key.length, 32); i++) {
        hex.append(String.format("%02x", key[i] & 0xFF));
      }
      return hex.append(key.length > 32 ? "..." : "").toString();
    }
    return k.name() + " " + Type.string(k.qtype()) + " " + DClass.string(k.qclass()) + " "
        + CacheDirectory.flagNames(k.flags());
  }

  private static int u16(byte[] b, int off) {
    return ((b[off] & 0xFF) << 8) | (b[off + 1] & 0xFF);
  }

  private static byte lower(byte c) {
    return c >= 'A' && c <= 'Z' ? (byte) (c + 32) : c;
  }
}
