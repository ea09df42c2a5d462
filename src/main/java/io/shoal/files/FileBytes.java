package io.shoal.files;

import io.shoal.config.InvalidConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Reads a whole file named in the configuration, at most a given number of bytes: a directory, a
 * device or a pipe (which may never end) and a file past the bound are refused with a message
 * that names the key and the file, never with an exception from deep in the JDK.
 */
public final class FileBytes {
  private FileBytes() {}

  /**
   * The bytes of {@code file}.
   *
   * @param key the configuration key that named the file
   * @param maxBytes the most it may hold ({@link FileLimits#maxBytes()}, less what its includer used)
   * @throws InvalidConfigException naming the key and the file, and what is wrong
   */
  public static byte[] read(String key, Path file, long maxBytes) {
    BasicFileAttributes attributes;
    try {
      attributes = Files.readAttributes(file, BasicFileAttributes.class);
    } catch (IOException e) {
      throw new InvalidConfigException(key, file + ": cannot read: " + reason(e));
    }
    if (attributes.isDirectory()) {
      throw new InvalidConfigException(key, file + ": is a directory, not a file");
    }
    if (!attributes.isRegularFile()) {
      throw new InvalidConfigException(key, file + ": not a regular file (a device or a pipe is not read)");
    }
    if (attributes.size() > maxBytes) {
      throw tooLarge(key, file, maxBytes);
    }
    // The size can change between the look and the read (a list being rewritten): read at most one
    // byte past the bound, and refuse if it is there.
    try (InputStream in = Files.newInputStream(file)) {
      byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
      if (bytes.length > maxBytes) {
        throw tooLarge(key, file, maxBytes);
      }
      return bytes;
    } catch (IOException e) {
      throw new InvalidConfigException(key, file + ": cannot read: " + reason(e));
    }
  }

  private static InvalidConfigException tooLarge(String key, Path file, long maxBytes) {
    return new InvalidConfigException(key, file + ": larger than " + maxBytes + " bytes, the bound set by "
        + FileLimits.SECTION + ".max_bytes (its $INCLUDEd files counted with it); raise it if the file is meant to be this large");
  }

  /** The 1-based line of the first NUL byte in {@code text}, or 0: a NUL means binary data, not text. */
  public static int binaryLine(byte[] text) {
    int line = 1;
    for (byte b : text) {
      if (b == 0) {
        return line;
      }
      if (b == '\n') {
        line++;
      }
    }
    return 0;
  }

  /** Why a file could not be read, for an operator: the JDK's message for a missing file is only its path. */
  public static String reason(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    String m = e.getMessage();
    return m == null ? e.getClass().getSimpleName() : m;
  }
}
