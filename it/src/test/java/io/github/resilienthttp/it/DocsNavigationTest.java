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

  /** The docs pages (other than {@code start}) more than two clicks from {@code start}. */
  static List<String> fartherThanTwoClicks(String start) throws IOException {
    Path root = ReadmeSnippetsTest.root();
    Path from = root.resolve(start).normalize();
    Map<Path, Integer> reached = reachable(from, 2);
    return docsPages().stream().filter(p -> !p.equals(from) && !reached.containsKey(p))
        .map(p -> root.relativize(p).toString()).collect(Collectors.toList());
  }

  @Test
  void everyDocsPageIsWithinTwoClicksOfTheReadme() throws IOException {
    assertThat(docsPages()).hasSizeGreaterThan(30);
    assertThat(fartherThanTwoClicks("README.md")).as("docs pages more than two clicks from README.md")
        .isEmpty();
  }

  @Test
  void everyDocsPageIsWithinTwoClicksOfTheSiteHome() throws IOException {
    assertThat(fartherThanTwoClicks("docs/index.md"))
        .as("docs pages more than two clicks from docs/index.md").isEmpty();
  }

  /**
   * Every relative link of README.md points to a file of the repository, and a {@code #anchor} on a
   * Markdown file to one of its headings (GitHub's and MkDocs' slug: lower case, punctuation
   * dropped, spaces as hyphens). mkdocs checks the links inside docs/, not the README's.
   */
  @Test
  void theReadmesLinksResolve() throws IOException {
    Path root = ReadmeSnippetsTest.root();
    Path readme = root.resolve("README.md");
    Matcher m = Pattern.compile("\\]\\(([^)\\s]+)\\)").matcher(
        Files.readString(readme, StandardCharsets.UTF_8));
    List<String> broken = new java.util.ArrayList<>();
    while (m.find()) {
      String link = m.group(1);
      if (link.contains("://")) {
        continue;
      }
      int hash = link.indexOf('#');
      String file = hash < 0 ? link : link.substring(0, hash);
      String anchor = hash < 0 ? null : link.substring(hash + 1);
      Path target = file.isEmpty() ? readme : root.resolve(file).normalize();
      if (!Files.exists(target)) {
        broken.add(link + " (no such file)");
      } else if (anchor != null && target.toString().endsWith(".md")
          && !headingSlugs(target).contains(anchor)) {
        broken.add(link + " (no such heading)");
      }
    }
    assertThat(broken).as("README.md links").isEmpty();
  }

  static Set<String> headingSlugs(Path markdown) throws IOException {
    Set<String> slugs = new TreeSet<>();
    boolean fenced = false;
    for (String line : Files.readAllLines(markdown, StandardCharsets.UTF_8)) {
      if (line.startsWith("```")) {
        fenced = !fenced;
      }
      if (!fenced && line.startsWith("#")) {
        String text = line.replaceFirst("^#+\\s*", "").strip();
        slugs.add(text.toLowerCase(java.util.Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\s_-]", "")
            .strip().replaceAll("\\s+", "-"));
      }
    }
    return slugs;
  }
}
