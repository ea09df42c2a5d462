package io.shoal.cache.lmdb;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.shoal.wire.CacheKey;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/** The shard of a key is the same as every earlier shoal computed it: CRC-32 as the JDK's. */
class AnswerCodecTest {

  private static long jdkCrc(byte[] bytes) {
    CRC32 crc = new CRC32();
    crc.update(bytes);
    return crc.getValue();
  }

  @Test
  void keysLandInTheShardsTheLayoutPromises() {
    for (int i = 0; i < 2000; i++) {
      CacheKey key = CacheKey.of("host" + i + ".example.test.", 1 + i % 40, 1, i % 4);
      for (int shards : new int[] {1, 2, 16, 255}) {
        assertEquals((int) (jdkCrc(key.bytes()) % shards), AnswerCodec.shardOf(key, shards));
      }
      // Kept with the key after the first time: the same value again, and for an equal key made anew.
      assertEquals(jdkCrc(key.bytes()), key.crc32());
      assertEquals(key.crc32(), CacheKey.ofBytes(key.bytes()).crc32());
    }
  }
}
