package io.github.resilienthttp.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Every page under docs/ is within two clicks of README.md (on GitHub) and of docs/index.md (the
 * site's home): linked from it, or from a page it links to. Relative Markdown links only; anchors
 * ignored. Broken links are {@code mkdocs build --strict}'s job.
 */
class DocsNavigationTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]+\\.md)(#[^)]*)?\\)");

  /** The docs pages (and README.md) each page links to, as normalized absolute paths. */
  static Set<Path> linksOf(Path page) throws IOException {
    Set<Path> out = new TreeSet<>();
    Matcher m = LINK.matcher(Files.readString(page, StandardCharsets.UTF_8));
    while (m.find()) {
      String target = m.group(1);
      if (target.contains("://")) {
        continue;
      }
      out.add(page.getParent().resolve(target).normalize());
    }
    return out;
  }

  /** Pages reachable from {@code start} in at most {@code clicks} clicks, with their distance. */
  static Map<Path, Integer> reachable(Path start, int clicks) throws IOException {
    Map<Path, Integer> distance = new HashMap<>();
    Deque<Path> queue = new ArrayDeque<>();
    distance.put(start.normalize(), 0);
    queue.add(start.normalize());
    while (!queue.isEmpty()) {
      Path p = queue.remove();
      int d = distance.get(p);
      if (d == clicks || !Files.isRegularFile(p)) {
        continue;
      }
      for (Path next : linksOf(p)) {
        if (distance.putIfAbsent(next, d + 1) == null) {
          queue.add(next);
        }
      }
    }
    return distance;
  }

  static List<Path> docsPages() throws IOException {
    return ReadmeSnippetsTest.markdownFiles().stream()
        .filter(f -> !f.getFileName().toString().equals("README.md")
            || !f.getParent().equals(ReadmeSnippetsTest.root()))
        .map(Path::normalize)
        .collect(Collectors.toList());
  }

  @Test
  void everyDocsPageIsWithinTwoClicksOfTheReadme() throws IOException {
    Path root = ReadmeSnippetsTest.root();
    Map<Path, Integer> fromReadme = reachable(root.resolve("README.md"), 2);
    assertThat(docsPages()).hasSizeGreaterThan(30)
        .filteredOn(p -> !fromReadme.containsKey(p))
        .extracting(p -> root.relativize(p).toString())
        .as("docs pages more than two clicks from README.md").isEmpty();
  }

  @Test
  void everyDocsPageIsWithinTwoClicksOfTheSiteHome() throws IOException {
    Path root = ReadmeSnippetsTest.root();
    Path home = root.resolve("docs/index.md");
    Map<Path, Integer> fromHome = reachable(home, 2);
    assertThat(docsPages())
        .filteredOn(p -> !p.equals(home.normalize()) && !fromHome.containsKey(p))
        .extracting(p -> root.relativize(p).toString())
        .as("docs pages more than two clicks from docs/index.md").isEmpty();
  }
}
