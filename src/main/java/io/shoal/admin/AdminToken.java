package io.shoal.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The secret an admin request must carry in {@link #HEADER}: written by the node at start to a
 * file only its user can read (mode 0600), read from there by {@code shoal cache flush}. A web
 * page cannot read the file, and a custom header makes the request non-simple, so a browser
 * will not send it cross-origin without a preflight the endpoint never grants.
 */
public final class AdminToken {
  /** The request header that carries the token. */
  public static final String HEADER = "X-Shoal-Token";

  private final String value;

  private AdminToken(String value) {
    this.value = value;
  }

  /** A fresh random token. */
  public static AdminToken fresh() {
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    return new AdminToken(HexFormat.of().formatHex(random));
  }

  /** Writes the token to {@code file} (mode 0600), replacing any old one. */
  public void writeTo(Path file) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    // Created with its final mode and moved into place: the token is never readable by others,
    // not even for an instant, and a reader never sees half a file.
    Path tmp = dir.resolve(file.getFileName() + ".tmp-" + ProcessHandle.current().pid());
    Files.deleteIfExists(tmp);
    try {
      Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException | FileAlreadyExistsException e) {
      throw new IOException("cannot create " + tmp + " with mode 0600: " + e.getMessage(), e);
    }
    Files.writeString(tmp, value + "\n", StandardCharsets.US_ASCII);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Reads the token a running node wrote. */
  public static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.US_ASCII).trim();
  }

  /** Compares in constant time, so the answer's timing says nothing about the token. */
  boolean matches(String presented) {
    return presented != null
        && MessageDigest.isEqual(value.getBytes(StandardCharsets.US_ASCII), presented.getBytes(StandardCharsets.US_ASCII));
  }
}
