package io.shoal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/** The key hash is the JDK's CRC-32 for every length: the slicing by four and the tail byte by byte. */
class Crc32Test {

  @Test
  void theKeyHashIsTheJdksCrc32ForEveryLength() {
    Random random = new Random(12);
    for (int length = 0; length <= 300; length++) {
      byte[] bytes = new byte[length];
      random.nextBytes(bytes);
      CRC32 jdk = new CRC32();
      jdk.update(bytes);
      assertEquals(jdk.getValue(), Crc32.of(bytes), "length " + length);
    }
  }
}
