package io.shoal.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.InvalidConfigException;
import io.shoal.files.FileLimits;
import io.shoal.metrics.PolicyMetrics;
import io.shoal.wire.DnsQuery;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** RPZ files and domain lists that are malformed, hostile or too large: refused naming key, file and line, never quoted. */
class PolicyFilesTest {
  private static final String RPZ_KEY = "shoal.policy.rpz_files";
  private static final String LIST_KEY = "shoal.policy.domain_lists";
  private static final String SOA = "@ SOA localhost. admin.localhost. 1 3600 600 86400 60";
  private static final String SECRET = "root:$6$s3cr3tSALT$ZmFrZWhhc2hmb3J0ZXN0aW5nb25seQ:19000:0:99999:7:::";

  @TempDir
  Path dir;

  private static Message ask(ResponsePolicy p, String name) throws Exception {
    Message m = Message.newQuery(Record.newRecord(Name.fromString(name), Type.A, 1));
    m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
    byte[] r = p.answer(DnsQuery.parse(m.toWire()), 1232);
    return r == null ? null : new Message(r);
  }

  private Path write(String name, String... lines) throws Exception {
    return Files.writeString(dir.resolve(name), String.join("\n", lines) + "\n");
  }

  private static ResponsePolicy rpz(Path file) {
    return ResponsePolicy.load(new PolicySettings(List.of(file), List.of()), new PolicyMetrics());
  }

  private static InvalidConfigException rpzRefused(Path file) {
    return assertThrows(InvalidConfigException.class, () -> rpz(file));
  }

  private static ResponsePolicy list(Path file, FileLimits limits) {
    return ResponsePolicy.load(new PolicySettings(List.of(), PolicySettings.domainLists(List.of(file + " nxdomain")),
        limits), new PolicyMetrics());
  }

  private static InvalidConfigException listRefused(Path file, FileLimits limits) {
    return assertThrows(InvalidConfigException.class, () -> list(file, limits));
  }

  private static void names(InvalidConfigException e, String key, String where, String what) {
    String m = e.getMessage();
    assertTrue(m.startsWith(key + ": ") && m.contains(where) && m.contains(what), m);
  }

  @Test
  void anRpzFileWithoutOriginNamesTheLineNotAStackTrace() throws Exception {
    Path f = write("no-origin.rpz", "$TTL 300", SOA, "nx.example CNAME .");
    names(rpzRefused(f), RPZ_KEY, f + " line 2:", "no $ORIGIN");
  }

  @Test
  void anRpzFileThatIncludesItselfIsRefused() throws Exception {
    Path f = write("self.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "$INCLUDE self.rpz");
    names(rpzRefused(f), RPZ_KEY, f + " line 4:", "cycle");
    Path onlySelf = write("bare.rpz", "$INCLUDE bare.rpz");
    names(rpzRefused(onlySelf), RPZ_KEY, onlySelf + " line 1:", "cycle");
  }

  @Test
  void aHugeGenerateInAnRpzFileIsRefused() throws Exception {
    Path f = write("gen.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "$GENERATE 1-2000000 h$.example CNAME .");
    names(rpzRefused(f), RPZ_KEY, f + " line 4:", "shoal.files.max_generate");
  }

  @Test
  void anRpzFileMadeOfSecretsIsNotQuoted() throws Exception {
    Path f = write("shadow", SECRET);
    InvalidConfigException e = rpzRefused(f);
    names(e, RPZ_KEY, f + " line 1:", "");
    assertFalse(e.getMessage().contains("s3cr3t"), e.getMessage());
    Path empty = write("empty.rpz", "");
    names(rpzRefused(empty), RPZ_KEY, empty.toString(), "no records");
    Path notBelow = write("outside.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "secret-name.other.test. CNAME .");
    InvalidConfigException outside = rpzRefused(notBelow);
    names(outside, RPZ_KEY, notBelow + " line 4:", "not a trigger below");
    assertFalse(outside.getMessage().contains("secret-name"), outside.getMessage());
  }

  @Test
  void aWildcardAtTheApexMatchesEveryName() throws Exception {
    Path f = write("all.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "* CNAME .", "ok.example CNAME rpz-passthru.",
        "*.open.example CNAME rpz-passthru.");
    ResponsePolicy p = rpz(f);
    assertEquals(Rcode.NXDOMAIN, ask(p, "anything.example.").getRcode());
    assertEquals(Rcode.NXDOMAIN, ask(p, "com.").getRcode());
    assertEquals(Rcode.NXDOMAIN, ask(p, "a.b.c.d.example.org.").getRcode());
    assertNull(ask(p, "ok.example."), "a name's own trigger beats the wildcard");
    assertNull(ask(p, "www.open.example."), "a longer wildcard beats the one at the apex");
    assertEquals(Rcode.NXDOMAIN, ask(p, "open.example.").getRcode(), "*.open.example is not open.example");
  }

  @Test
  void aWatchedRpzFileSavedBrokenKeepsTheOldPolicyAndTheNextEditApplies() throws Exception {
    Path f = write("watched.rpz", "$TTL 300", "$ORIGIN rpz.test.", SOA, "old.example CNAME .");
    ResponsePolicy p = rpz(f);
    assertEquals(Rcode.NXDOMAIN, ask(p, "old.example.").getRcode());
    Files.writeString(f, String.join("\n", "$TTL 300", SOA, "new.example CNAME .", ""));
    Files.setLastModifiedTime(f, FileTime.fromMillis(System.currentTimeMillis() + 5000));
    assertTrue(p.pollFiles());
    assertTrue(p.needsReading(), "a refused reading is read again by the next configuration reload");
    assertEquals(Rcode.NXDOMAIN, ask(p, "old.example.").getRcode(), "the previous policy stays");
    assertNull(ask(p, "new.example."));
    Files.writeString(f, String.join("\n", "$TTL 300", "$ORIGIN rpz.test.", SOA, "new.example CNAME .", ""));
    Files.setLastModifiedTime(f, FileTime.fromMillis(System.currentTimeMillis() + 10000));
    assertTrue(p.pollFiles());
    assertFalse(p.needsReading());
    assertNull(ask(p, "old.example."));
    assertEquals(Rcode.NXDOMAIN, ask(p, "new.example.").getRcode());
  }

  @Test
  void aDomainListOfSecretsIsNotQuoted() throws Exception {
    Path f = write("shadow", SECRET, "daemon:*:19000:0:99999:7:::");
    InvalidConfigException e = listRefused(f, FileLimits.DEFAULTS);
    names(e, LIST_KEY, f + " line 1:", "is not a domain name");
    assertFalse(e.getMessage().contains("s3cr3t") || e.getMessage().contains("root"), e.getMessage());
  }

  @Test
  void aDomainListThatIsBinaryADirectoryOrTooLargeIsRefused() throws Exception {
    Path binary = Files.write(dir.resolve("binary.txt"), new byte[] {'a', '.', 'b', '\n', 0x7f, 0, 0x45, 0x4c, 0x46});
    names(listRefused(binary, FileLimits.DEFAULTS), LIST_KEY, binary + " line 2:", "binary data");
    Path directory = Files.createDirectory(dir.resolve("lists.d"));
    names(listRefused(directory, FileLimits.DEFAULTS), LIST_KEY, directory + ":", "is a directory");
    Path many = write("many.txt", "a.test", "b.test", "0.0.0.0 c.test d.test");
    names(listRefused(many, new FileLimits(1 << 20, 3, 4, 10)), LIST_KEY, many + " line 3:",
        "shoal.files.max_entries");
    names(listRefused(many, new FileLimits(10, 1000, 4, 10)), LIST_KEY, many + ":", "shoal.files.max_bytes");
    assertEquals(4, list(many, new FileLimits(1 << 20, 4, 4, 10)).current().names());
  }
}
