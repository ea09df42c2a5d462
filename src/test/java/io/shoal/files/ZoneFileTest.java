package io.shoal.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.InvalidConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;

/** The bounded zone-file reader: includes, generates, bounds, and messages that name the line but never quote it. */
class ZoneFileTest {
  private static final String KEY = "shoal.policy.rpz_files";
  private static final String SOA = "@ 300 SOA localhost. admin.localhost. 1 3600 600 86400 60";
  /** What /etc/shadow's first line looks like: it must never reach a message. */
  private static final String SECRET = "root:$6$s3cr3tSALT$ZmFrZWhhc2hmb3J0ZXN0aW5nb25seQ:19000:0:99999:7:::";

  @TempDir
  Path dir;

  private record Read(Record record, Path file, int line) {}

  private List<Read> read(Path file, FileLimits limits) {
    List<Read> out = new ArrayList<>();
    ZoneFile.read(KEY, file, null, -1, limits, (r, f, line) -> out.add(new Read(r, f, line)));
    return out;
  }

  private InvalidConfigException refused(Path file, FileLimits limits) {
    return assertThrows(InvalidConfigException.class, () -> read(file, limits));
  }

  private InvalidConfigException refused(String name, String text) throws Exception {
    Path file = Files.writeString(dir.resolve(name), text);
    return refused(file, FileLimits.DEFAULTS);
  }

  /** The message names the key, the file and the line, and says {@code what}. */
  private static void names(InvalidConfigException e, Path file, int line, String what) {
    String m = e.getMessage();
    assertTrue(m.startsWith(KEY + ": "), m);
    assertTrue(m.contains(file + " line " + line + ":") || m.contains(file + " line " + line + " (included"), m);
    assertTrue(m.contains(what), m);
  }

  private Path file(String name, String... lines) throws Exception {
    return Files.writeString(dir.resolve(name), String.join("\n", lines) + "\n");
  }

  @Test
  void recordsComeWithTheirLine() throws Exception {
    Path f = file("ok.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "", "; a comment", "a.example CNAME .",
        "b.example (", "  CNAME . )", "c.example A 192.0.2.1");
    List<Read> got = read(f, FileLimits.DEFAULTS);
    assertEquals(4, got.size());
    assertEquals(List.of(3, 6, 8, 9), got.stream().map(Read::line).toList());
    assertEquals(Name.fromString("c.example.rpz.test."), got.get(3).record().getName());
  }

  @Test
  void aMissingOriginNamesTheLine() throws Exception {
    Path f = file("no-origin.rpz", "$TTL 300", SOA, "a.example CNAME .");
    names(refused(f, FileLimits.DEFAULTS), f, 2, "no $ORIGIN");
  }

  @Test
  void aBadTtlSaysItIsTheTtl() throws Exception {
    Path f = file("ttl.rpz", "$ORIGIN rpz.test.", SOA, "a.example 99x CNAME .");
    InvalidConfigException e = refused(f, FileLimits.DEFAULTS);
    names(e, f, 3, "not a valid TTL");
    assertFalse(e.getMessage().contains("99x"), e.getMessage());
  }

  @Test
  void anUnknownTypeIsNamedButNotQuoted() throws Exception {
    Path f = file("type.rpz", "$ORIGIN rpz.test.", SOA, "a.example 300 BOGUSTYPE 192.0.2.1");
    InvalidConfigException e = refused(f, FileLimits.DEFAULTS);
    names(e, f, 3, "unknown record type");
    assertFalse(e.getMessage().contains("BOGUSTYPE"), e.getMessage());
  }

  @Test
  void aTruncatedLineIsCutShort() throws Exception {
    Path f = file("cut.rpz", "$ORIGIN rpz.test.", SOA, "a.example 300 A");
    names(refused(f, FileLimits.DEFAULTS), f, 3, "line 3");
    Path quote = file("quote.rpz", "$ORIGIN rpz.test.", SOA, "a.example 300 TXT \"never ends");
    names(refused(quote, FileLimits.DEFAULTS), quote, 3, "quoted string");
  }

  @Test
  void binaryGarbageIsNotText() throws Exception {
    Path f = Files.write(dir.resolve("garbage.rpz"), new byte[] {'$', 'O', '\n', 'x', 0, 1, 2, (byte) 0xFF, '\n'});
    names(refused(f, FileLimits.DEFAULTS), f, 2, "binary data");
  }

  @Test
  void aDirectoryIsNotAFile() throws Exception {
    Path d = Files.createDirectory(dir.resolve("a-directory"));
    InvalidConfigException e = refused(d, FileLimits.DEFAULTS);
    assertTrue(e.getMessage().contains(KEY) && e.getMessage().contains(d + ": is a directory"), e.getMessage());
  }

  @Test
  void aSecretLineIsNeverQuoted() throws Exception {
    Path f = file("shadow", SECRET, "daemon:*:19000:0:99999:7:::");
    InvalidConfigException e = refused(f, FileLimits.DEFAULTS);
    names(e, f, 1, "");
    assertFalse(e.getMessage().contains("s3cr3t"), e.getMessage());
    assertFalse(e.getMessage().contains("root"), e.getMessage());
  }

  @Test
  void anIncludeIsFollowedWithItsOriginAndTheIncludersStateKept() throws Exception {
    file("part.inc", "x.example CNAME .", "y.example CNAME .");
    Path f = file("main.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "$INCLUDE part.inc sub.rpz.test.", "z.example CNAME .");
    List<Read> got = read(f, FileLimits.DEFAULTS);
    assertEquals(List.of("rpz.test.", "x.example.sub.rpz.test.", "y.example.sub.rpz.test.", "z.example.rpz.test."),
        got.stream().map(r -> r.record().getName().toString()).toList());
    assertEquals(dir.resolve("part.inc"), got.get(1).file());
    assertEquals(2, got.get(2).line());
    assertEquals(5, got.get(3).line());
  }

  @Test
  void anErrorInAnIncludedFileNamesBothFiles() throws Exception {
    Path part = file("bad.inc", "x.example CNAME .", "y.example 300 BOGUS .");
    Path f = file("main.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "$INCLUDE bad.inc");
    InvalidConfigException e = refused(f, FileLimits.DEFAULTS);
    names(e, part, 2, "included from " + f + " line 4");
  }

  @Test
  void aFileThatIncludesItselfIsACycle() throws Exception {
    Path f = file("self.rpz", "$ORIGIN rpz.test.", SOA, "a.example CNAME .", "$INCLUDE self.rpz");
    names(refused(f, FileLimits.DEFAULTS), f, 4, "cycle");
    Path only = file("only-include.rpz", "$INCLUDE " + dir.resolve("only-include.rpz"));
    names(refused(only, FileLimits.DEFAULTS), only, 1, "cycle");
  }

  @Test
  void anIncludeCycleThroughOtherFilesIsACycle() throws Exception {
    file("b.inc", "b.example CNAME .", "$INCLUDE a.rpz");
    Path a = file("a.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "$INCLUDE b.inc");
    InvalidConfigException e = refused(a, FileLimits.DEFAULTS);
    names(e, dir.resolve("b.inc"), 2, "cycle");
  }

  @Test
  void includesNestNoDeeperThanTheBound() throws Exception {
    for (int i = 1; i <= 5; i++) {
      file("level" + i + ".inc", "l" + i + ".example CNAME .", i < 5 ? "$INCLUDE level" + (i + 1) + ".inc" : "");
    }
    Path f = file("deep.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "$INCLUDE level1.inc");
    InvalidConfigException e = refused(f, new FileLimits(1 << 20, 1000, 4, 100));
    assertTrue(e.getMessage().contains("shoal.files.max_include_depth"), e.getMessage());
    assertEquals(6, read(f, new FileLimits(1 << 20, 1000, 5, 100)).size());
    InvalidConfigException off = refused(f, new FileLimits(1 << 20, 1000, 0, 100));
    names(off, f, 4, "max_include_depth = 0");
  }

  @Test
  void aHugeGenerateIsRefusedBeforeItExpands() throws Exception {
    Path f = file("gen.rpz", "$ORIGIN rpz.test.", SOA, "$GENERATE 1-2000000 host$.example CNAME .");
    names(refused(f, FileLimits.DEFAULTS), f, 3, "shoal.files.max_generate");
    Path small = file("small.rpz", "$ORIGIN rpz.test.", SOA, "$GENERATE 1-10 host$.example CNAME .");
    assertEquals(11, read(small, FileLimits.DEFAULTS).size());
  }

  @Test
  void entriesPastTheBoundAreRefused() throws Exception {
    Path f = file("many.rpz", "$ORIGIN rpz.test.", SOA, "a.example CNAME .", "b.example CNAME .", "c.example CNAME .");
    names(refused(f, new FileLimits(1 << 20, 3, 4, 100)), f, 5, "shoal.files.max_entries");
    Path gen = file("gen-many.rpz", "$ORIGIN rpz.test.", SOA, "$GENERATE 1-50 host$.example CNAME .");
    names(refused(gen, new FileLimits(1 << 20, 20, 4, 100)), gen, 3, "shoal.files.max_entries");
  }

  @Test
  void bytesPastTheBoundAreRefusedIncludedFilesCounted() throws Exception {
    Path f = file("big.rpz", "$ORIGIN rpz.test.", SOA, "a.example CNAME .");
    InvalidConfigException e = refused(f, new FileLimits(40, 1000, 4, 100));
    assertTrue(e.getMessage().contains(f + ": larger than 40 bytes") && e.getMessage().contains("max_bytes"),
        e.getMessage());
    file("part.inc", "x.example CNAME .", "y.example CNAME .", "z.example CNAME .");
    Path main = file("main.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "$INCLUDE part.inc");
    long mainSize = Files.size(main);
    InvalidConfigException included = refused(main, new FileLimits(mainSize + 20, 1000, 4, 100));
    assertTrue(included.getMessage().contains("part.inc: larger than"), included.getMessage());
  }
}
