package io.shoal.admin;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.shoal.cli.ShoalCommand;
import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Type;
import picocli.CommandLine;

/** The admin endpoint serves only requests with the node's token and without an Origin. */
public class AdminEndpointSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestNode node;
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("www.example.test.");
    node = TestNode.start(auth.hostPort(), "");
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private static HttpRequest.Builder flush(String name) {
    return HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + node.server.adminAddress().getPort() + "/cache/flush?name=" + name));
  }

  /** Caches the name, sends the request, and says whether the name had to be fetched again. */
  private static boolean flushedBy(HttpRequest request, int expectedStatus) throws Exception {
    String name = "www.example.test.";
    DnsClient.udp(node.udp(), DnsClient.query(1, name, Type.A, null));
    int before = auth.queries(name, Type.A);
    HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(r.body(), expectedStatus, r.statusCode());
    DnsClient.udp(node.udp(), DnsClient.query(2, name, Type.A, null));
    return auth.queries(name, Type.A) > before;
  }

  @Test
  public void theTokenFileIsReadableByItsOwnerOnly() throws Exception {
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(node.adminTokenFile())));
    assertEquals(64, node.adminToken().length());
  }

  @Test
  public void aCrossOriginSimpleRequestDoesNotFlush() throws Exception {
    // What a web page can send without a preflight: POST, text/plain, no custom header.
    HttpRequest fromAPage = flush("www.example.test").header("Origin", "https://evil.example")
        .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("x")).build();
    assertTrue(!flushedBy(fromAPage, 403));
    // Even with the token, a request from a page is refused.
    HttpRequest withToken = flush("www.example.test").header("Origin", "http://127.0.0.1")
        .header(AdminToken.HEADER, node.adminToken()).POST(HttpRequest.BodyPublishers.noBody()).build();
    assertTrue(!flushedBy(withToken, 403));
  }

  @Test
  public void aRequestWithoutTheRightTokenDoesNotFlush() throws Exception {
    assertTrue(!flushedBy(flush("www.example.test").POST(HttpRequest.BodyPublishers.noBody()).build(), 401));
    assertTrue(!flushedBy(flush("www.example.test").header(AdminToken.HEADER, "0".repeat(64))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), 401));
  }

  @Test
  public void theCliSendsTheTokenAndGetsJson() throws Exception {
    DnsClient.udp(node.udp(), DnsClient.query(3, "www.example.test.", Type.A, null));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = ShoalCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int status = cl.execute("cache", "flush", "www.example.test", "--type", "A",
        "--admin", "127.0.0.1:" + node.server.adminAddress().getPort(), "--token-file", node.adminTokenFile().toString());
    assertEquals(err.toString(), 0, status);
    JsonNode json = new ObjectMapper().readTree(out.toString());
    assertEquals("www.example.test.", json.get("name").asText());
    assertEquals(Type.A, json.get("type").asInt());
    assertEquals(1, json.get("removed_here").asInt());
    assertEquals(false, json.get("cluster").asBoolean());

    int missing = cl.execute("cache", "flush", "www.example.test",
        "--admin", "127.0.0.1:" + node.server.adminAddress().getPort(), "--token-file", "/nonexistent/admin.token");
    assertEquals(1, missing);
    assertTrue(err.toString(), err.toString().contains("--token-file"));
  }
}
