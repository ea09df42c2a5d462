package io.shoal.files;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.ShoalProcess;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * A bad file named in the configuration, as an operator meets it: {@code shoal serve} exits 2 with
 * one line naming the key, the file and the line, no stack trace, and nothing of the file's text.
 */
public class FileErrorsProcessSpec extends JUnitSuite {
  private static final String SECRET = "root:$6$s3cr3tSALT$ZmFrZWhhc2hmb3J0ZXN0aW5nb25seQ:19000:0:99999:7:::";

  private static ShoalProcess serve(String... more) throws IOException {
    List<String> args = new ArrayList<>(List.of("serve", "-Dshoal.listen.udp=127.0.0.1:0",
        "-Dshoal.listen.tcp=127.0.0.1:0", "-Dshoal.upstreams.default.servers.0=127.0.0.1:9",
        "-Dshoal.metrics.enabled=off"));
    args.addAll(List.of(more));
    return ShoalProcess.launch(args.toArray(new String[0]));
  }

  /** Exit 2, the key, file and line named, and neither a stack trace nor a start. */
  private static String exitsTwo(ShoalProcess p, String... words) throws Exception {
    assertEquals(2, p.exit(60));
    String out = p.output();
    for (String w : words) {
      assertTrue(out, out.contains(w));
    }
    assertFalse(out, out.contains("Exception") || out.contains("\tat ") || out.contains("Error:"));
    assertFalse(out, out.contains("answering on"));
    return out;
  }

  @Test
  public void anRpzFileWithoutOriginStopsTheStartWithOneLine() throws Exception {
    Path rpz = Files.createTempDirectory("shoal-rpz").resolve("no-origin.rpz");
    Files.writeString(rpz, "$TTL 300\n@ SOA localhost. admin.localhost. 1 3600 600 86400 60\nnx.test CNAME .\n");
    exitsTwo(serve("-Dshoal.policy.rpz_files.0=" + rpz), "shoal: invalid configuration: shoal.policy.rpz_files: ",
        rpz + " line 2:", "no $ORIGIN");
  }

  @Test
  public void anRpzFileThatIncludesItselfOrGeneratesMillionsExitsTwo() throws Exception {
    Path dir = Files.createTempDirectory("shoal-rpz");
    Path self = dir.resolve("self.rpz");
    Files.writeString(self, "$INCLUDE self.rpz\n");
    exitsTwo(serve("-Dshoal.policy.rpz_files.0=" + self), "shoal.policy.rpz_files", self + " line 1:", "cycle");
    Path gen = dir.resolve("gen.rpz");
    Files.writeString(gen, "$TTL 300\n$ORIGIN rpz.test.\n@ SOA localhost. admin.localhost. 1 3600 600 86400 60\n"
        + "$GENERATE 1-2000000 h$ CNAME .\n");
    exitsTwo(serve("-Dshoal.policy.rpz_files.0=" + gen), "shoal.policy.rpz_files", gen + " line 4:",
        "shoal.files.max_generate");
  }

  @Test
  public void aRecursiveGroupWithABadOrMissingHintsFileDoesNotServe() throws Exception {
    Path dir = Files.createTempDirectory("shoal-hints");
    Path bad = Files.writeString(dir.resolve("bad.hints"),
        ".  3600000 IN NS a.root-servers.\na.root-servers. 3600000 IN A 300.1.1.1\n");
    exitsTwo(serve("-Dshoal.upstreams.default.mode=recursive", "-Dshoal.upstreams.default.root_hints=" + bad),
        "shoal: invalid configuration: shoal.upstreams.default.root_hints", bad + ":2");
    Path missing = dir.resolve("missing.hints");
    exitsTwo(serve("-Dshoal.upstreams.default.mode=recursive", "-Dshoal.upstreams.default.root_hints=" + missing),
        "shoal.upstreams.default.root_hints", missing.toString());
  }

  @Test
  public void aSecretFileGivenAsADomainListIsNotPrinted() throws Exception {
    Path shadow = Files.createTempDirectory("shoal-list").resolve("shadow");
    Files.writeString(shadow, SECRET + "\nbin:*:19000:0:99999:7:::\n");
    String out = exitsTwo(serve("-Dshoal.policy.domain_lists.0=" + shadow + " nxdomain"),
        "shoal.policy.domain_lists", shadow + " line 1:");
    assertFalse(out, out.contains("s3cr3t"));
  }

  @Test
  public void theAdminTokenFileIsWrittenBeforeDnsIsAnswered() throws Exception {
    int admin = TestNode.freePort();
    Path tokens = Files.createTempDirectory("shoal-token");
    tokenWrittenBeforeTheFirstAnswer(admin, tokens.resolve("admin-{port}.token"),
        tokens.resolve("admin-" + admin + ".token"));
  }

  @Test
  public void withAnyAdminPortATokenFileNamedInAdvanceIsWrittenBeforeDnsIsAnswered() throws Exception {
    Path token = Files.createTempDirectory("shoal-token").resolve("admin.token");
    tokenWrittenBeforeTheFirstAnswer(0, token, token);
  }

  private static void tokenWrittenBeforeTheFirstAnswer(int adminPort, Path tokenFile, Path token) throws Exception {
    int dns = TestNode.freePort();
    ShoalProcess p = ShoalProcess.launch("serve", "-Dshoal.listen.udp=127.0.0.1:" + dns,
        "-Dshoal.listen.tcp=127.0.0.1:" + dns, "-Dshoal.upstreams.default.servers.0=127.0.0.1:9",
        "-Dshoal.metrics.enabled=off", "-Dshoal.admin.port=" + adminPort,
        "-Dshoal.admin.token_file=" + tokenFile,
        "-Dshoal.local.records.0=ready.test. A 192.0.2.7");
    try {
      InetSocketAddress server = new InetSocketAddress("127.0.0.1", dns);
      Message answer = null;
      long deadline = System.nanoTime() + 60_000_000_000L;
      // Ask until the first answer: the token file must exist by the time any answer comes.
      for (int id = 1; answer == null && id < 60_000 && System.nanoTime() < deadline && p.process.isAlive(); id++) {
        try {
          byte[] reply = DnsClient.udp(server, DnsClient.query(id, "ready.test.", Type.A, 1232).toWire(), 200);
          answer = reply == null ? null : new Message(reply);
        } catch (IOException e) {
          // not answering yet (a refused port reads as an error): ask again
        }
      }
      boolean written = Files.exists(token);
      assertTrue(p.output(), answer != null);
      assertEquals(Rcode.NOERROR, answer.getRcode());
      assertTrue("no token file when DNS answered first: " + token, written);
    } finally {
      p.close();
    }
  }
}
