package io.shoal.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.InvalidConfigException;
import io.shoal.files.FileLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Hosts files and local records that are malformed, hostile or too large: refused naming key, file and line, never quoted. */
class LocalFilesTest {
  private static final String KEY = "shoal.local.hosts_files";
  private static final String SECRET = "root:$6$s3cr3tSALT$ZmFrZWhhc2hmb3J0ZXN0aW5nb25seQ:19000:0:99999:7:::";

  @TempDir
  Path dir;

  private static LocalData hosts(Path file, FileLimits limits) {
    return LocalData.load(new LocalSettings(List.of(), List.of(file), List.of(), limits));
  }

  private static InvalidConfigException refused(Path file, FileLimits limits) {
    return assertThrows(InvalidConfigException.class, () -> hosts(file, limits));
  }

  private static void names(InvalidConfigException e, String where, String what) {
    String m = e.getMessage();
    assertTrue(m.startsWith(KEY + ": ") && m.contains(where) && m.contains(what), m);
  }

  @Test
  void aHostsFileOfSecretsIsNotQuoted() throws Exception {
    Path f = Files.writeString(dir.resolve("shadow"), SECRET + "\n");
    InvalidConfigException e = refused(f, FileLimits.DEFAULTS);
    names(e, f + " line 1:", "ADDRESS NAME");
    assertFalse(e.getMessage().contains("s3cr3t"), e.getMessage());
    Path address = Files.writeString(dir.resolve("hosts"), "127.0.0.1 localhost\n" + "s3cr3t-word host.test\n");
    InvalidConfigException bad = refused(address, FileLimits.DEFAULTS);
    names(bad, address + " line 2:", "not an IPv4 or IPv6 address");
    assertFalse(bad.getMessage().contains("s3cr3t"), bad.getMessage());
    Path name = Files.writeString(dir.resolve("hosts2"), "192.0.2.1 ok.test s3cr3t..name\n");
    InvalidConfigException badName = refused(name, FileLimits.DEFAULTS);
    names(badName, name + " line 1:", "word 3 is not a valid domain name");
    assertFalse(badName.getMessage().contains("s3cr3t"), badName.getMessage());
  }

  @Test
  void aHostsFileThatIsBinaryADirectoryOrTooLargeIsRefused() throws Exception {
    Path binary = Files.write(dir.resolve("binary"), new byte[] {'#', '\n', 0x7f, 'E', 'L', 'F', 0, 1});
    names(refused(binary, FileLimits.DEFAULTS), binary + " line 2:", "binary data");
    Path directory = Files.createDirectory(dir.resolve("hosts.d"));
    names(refused(directory, FileLimits.DEFAULTS), directory + ":", "is a directory");
    Path many = Files.writeString(dir.resolve("many"), "192.0.2.1 a.test b.test\n192.0.2.2 c.test d.test\n");
    names(refused(many, new FileLimits(1 << 20, 3, 4, 10)), many + " line 2:", "shoal.files.max_entries");
    names(refused(many, new FileLimits(16, 1000, 4, 10)), many + ":", "shoal.files.max_bytes");
    assertTrue(hosts(many, new FileLimits(1 << 20, 4, 4, 10)).current().names() >= 4);
  }

  @Test
  void aHostsFileSavedBrokenKeepsTheOldDataAndTheNextEditApplies() throws Exception {
    Path f = Files.writeString(dir.resolve("hosts"), "192.0.2.1 one.test\n");
    LocalData local = hosts(f, FileLimits.DEFAULTS);
    int before = local.current().names();
    Files.writeString(f, "192.0.2.1\n");
    Files.setLastModifiedTime(f, FileTime.fromMillis(System.currentTimeMillis() + 5000));
    assertTrue(local.pollFiles());
    assertTrue(local.needsReading());
    assertEquals(before, local.current().names());
    Files.writeString(f, "192.0.2.1 one.test two.test three.test\n");
    Files.setLastModifiedTime(f, FileTime.fromMillis(System.currentTimeMillis() + 10000));
    assertTrue(local.pollFiles());
    assertFalse(local.needsReading());
    assertTrue(local.current().names() > before);
  }

  @Test
  void aBadTtlInALocalRecordSaysItIsTheTtl() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> LocalSettings.records(List.of("nas.home.arpa. 1h30x A 192.0.2.1")));
    assertTrue(e.getMessage().startsWith("line 1 ") && e.getMessage().contains("not a valid TTL"), e.getMessage());
    assertFalse(e.getMessage().contains("Invalid type"), e.getMessage());
    IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
        () -> LocalSettings.records(List.of("nas.home.arpa. 300 BOGUS 192.0.2.1")));
    assertTrue(type.getMessage().contains("unknown record type"), type.getMessage());
  }

  @Test
  void aLocalRecordLineCannotIncludeAFile() throws Exception {
    Path secret = Files.writeString(dir.resolve("secret.zone"), "leak.test. 300 A 192.0.2.9\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> LocalSettings.records(List.of("$INCLUDE " + secret)));
    assertTrue(e.getMessage().contains("$ directive"), e.getMessage());
  }
}
