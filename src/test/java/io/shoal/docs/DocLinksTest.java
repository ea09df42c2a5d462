package io.shoal.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in README.md and docs/**.md points to a file or directory that exists, so
 * moving or pruning published results cannot leave the docs pointing at nothing.
 */
class DocLinksTest {
  /** A markdown link or image: [text](target) or ![alt](target), the target up to a space or ')'. */
  private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

  static List<String> targets(String markdown) {
    List<String> out = new ArrayList<>();
    boolean fenced = false;
    for (String line : markdown.split("\n", -1)) {
      if (line.strip().startsWith("```")) {
        fenced = !fenced;
        continue;
      }
      if (fenced) {
        continue;
      }
      // inline code spans are not links
      Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", ""));
      while (m.find()) {
        out.add(m.group(1));
      }
    }
    return out;
  }

  static List<String> broken(Path root) throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(root.resolve("README.md"));
    try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    List<String> broken = new ArrayList<>();
    for (Path page : pages) {
      for (String target : targets(Files.readString(page, StandardCharsets.UTF_8))) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*") || target.startsWith("#")) {
          continue; // http:, https:, mailto: and links within the page
        }
        String file = URLDecoder.decode(target.replaceAll("#.*$", "").replaceAll("\\?.*$", ""), StandardCharsets.UTF_8);
        Path resolved = file.startsWith("/") ? root.resolve(file.substring(1)) : page.getParent().resolve(file);
        if (!Files.exists(resolved.normalize())) {
          broken.add(root.relativize(page) + ": " + target);
        }
      }
    }
    return broken;
  }

  @Test
  void everyRelativeLinkInTheDocsResolves() throws IOException {
    Path root = Path.of("").toAbsolutePath();
    assertTrue(Files.isRegularFile(root.resolve("README.md")), "run from the repository root: " + root);
    List<String> broken = broken(root);
    assertEquals(List.of(), broken, broken.size() + " broken links");
  }

  @Test
  void theCheckFindsABrokenLinkAndSkipsCodeAndWebLinks(@org.junit.jupiter.api.io.TempDir Path root) throws IOException {
    Files.createDirectories(root.resolve("docs/sub"));
    Files.writeString(root.resolve("docs/there.md"), "x");
    Files.writeString(root.resolve("README.md"), "[ok](docs/there.md#a) [web](https://example.org/x) [self](#top)\n"
        + "[gone](docs/missing.md) ![img](docs/sub/none.png)\n```\n[in code](nowhere.md)\n```\n`[span](nowhere.md)`\n");
    Files.writeString(root.resolve("docs/sub/page.md"), "[up](../there.md) [up gone](../../nothing.md)\n");
    assertEquals(List.of("README.md: docs/missing.md", "README.md: docs/sub/none.png", "docs/sub/page.md: ../../nothing.md"),
        broken(root));
  }
}
