package io.github.resilienthttp.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles every Java snippet of README.md and of every page under docs/ against the published
 * artifacts (this module's test class path: every artifact of the BOM, the starter with Spring MVC,
 * Spring JDBC and the Servlet API, Retrofit, Failsafe and resilience4j-retry for the comparisons), so
 * that the snippets a user pastes cannot rot. Each {@code ```java} block must be preceded by a marker that says how to compile it:
 * <ul>
 *   <li>{@code <!-- compile: statements; given: Type name, ... -->}: the block's {@code import} lines,
 *       then statements (local records and interfaces allowed), compiled as the body of a method whose
 *       parameters are the given variables;
 *   <li>{@code <!-- compile: file -->}: a whole compilation unit;
 *   <li>{@code <!-- compile: no (why) -->}: not compiled, when no class path can compile it (none of
 *       README.md and docs/ needs it today).
 * </ul>
 * A failure names the Markdown file and line ({@code docs/hedging.md:42}).
 */
class ReadmeSnippetsTest {
  private static final Pattern MARKER = Pattern.compile("<!--\\s*compile:\\s*(.*?)\\s*-->");

  record Snippet(String file, int line, String mode, String given, List<String> imports,
      String body) {
    /** A Java class name unique per block, from which the file and line can be read back. */
    String className() {
      return "Snippet_" + file.replaceAll("[^A-Za-z0-9]", "_") + "_line" + line;
    }

    /** Lines of the generated source before the block's first line (see {@code source}). */
    int headerLines() {
      return mode.equals("file") ? 1 : 3;
    }
  }

  /** The repository root: the parent of README.md. */
  static Path root() {
    return Path.of(System.getProperty("readme", "../README.md")).toAbsolutePath().getParent();
  }

  /** README.md and every Markdown page under docs/, in a stable order. */
  static List<Path> markdownFiles() throws IOException {
    Path root = root();
    List<Path> files = new ArrayList<>();
    files.add(root.resolve("README.md"));
    Path docs = root.resolve("docs");
    if (Files.isDirectory(docs)) {
      try (Stream<Path> walk = Files.walk(docs)) {
        walk.filter(f -> f.toString().endsWith(".md")).sorted().forEach(files::add);
      }
    }
    return files;
  }

  static List<Snippet> allSnippets() throws IOException {
    List<Snippet> all = new ArrayList<>();
    for (Path f : markdownFiles()) {
      all.addAll(snippets(f, root().relativize(f).toString().replace('\\', '/')));
    }
    return all;
  }

  @Test
  void everyJavaSnippetOfTheReadmeAndTheDocsCompiles(@TempDir Path out) throws IOException {
    List<Snippet> snippets = allSnippets();
    List<Snippet> compiled = snippets.stream().filter(s -> !s.mode().startsWith("no"))
        .collect(Collectors.toList());
    assertThat(compiled).hasSizeGreaterThanOrEqualTo(7);
    Map<String, Snippet> byClass = new HashMap<>();
    for (Snippet s : compiled) {
      byClass.put(s.className(), s);
    }

    List<JavaFileObject> sources = new ArrayList<>();
    for (Snippet s : compiled) {
      sources.add(source(s));
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT,
        StandardCharsets.UTF_8)) {
      List<String> options = List.of("-d", out.toString(), "-proc:none", "--release", "17",
          "-classpath", System.getProperty("java.class.path"));
      boolean ok = javac.getTask(null, files, diagnostics, options, null, sources).call();
      String errors = diagnostics.getDiagnostics().stream()
          .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
          .map(d -> where(byClass, d) + ": " + d.getMessage(Locale.ROOT))
          .collect(Collectors.joining("\n"));
      assertThat(ok).as("Java snippets of the README and docs/ (file:line of the Markdown):%n%s",
          errors).isTrue();
    }
  }

  /** The Markdown file and line of a compiler diagnostic (body lines keep the Markdown's numbering). */
  private static String where(Map<String, Snippet> byClass, Diagnostic<? extends JavaFileObject> d) {
    if (d.getSource() == null) {
      return "(no source)";
    }
    String name = d.getSource().getName();
    String cls = name.substring(name.lastIndexOf('/') + 1).replace(".java", "");
    Snippet s = byClass.get(cls);
    if (s == null) {
      return name + ":" + d.getLineNumber();
    }
    // s.line() is the line of the ```java fence; body line k is Markdown line s.line() + k, and
    // generated line k + headerLines().
    long markdownLine = s.line() + d.getLineNumber() - s.headerLines();
    return s.file() + ":" + Math.max(s.line(), markdownLine);
  }

  @Test
  void everyJavaSnippetSaysHowToCompileIt() throws IOException {
    // snippets() fails on a block without a marker; this names the rule in the test report.
    assertThat(allSnippets()).isNotEmpty();
  }

  @Test
  void theDocsPagesAreScanned() throws IOException {
    assertThat(markdownFiles()).extracting(f -> f.getFileName().toString())
        .contains("README.md", "index.md", "configuration.md");
  }

  static List<Snippet> snippets(Path readme, String file) throws IOException {
    List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
    List<Snippet> snippets = new ArrayList<>();
    String marker = null;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      Matcher m = MARKER.matcher(line);
      if (m.find()) {
        marker = m.group(1);
        continue;
      }
      if (line.strip().equals("```java")) {
        if (marker == null) {
          throw new AssertionError(file + ":" + (i + 1) + ": a ```java block without a"
              + " <!-- compile: ... --> marker on the line before");
        }
        int start = i + 1;
        List<String> imports = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        for (i++; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
          String l = lines.get(i);
          if (l.startsWith("import ")) {
            imports.add(l);
            body.append('\n'); // keeps line numbers equal to the README's
          } else {
            body.append(l).append('\n');
          }
        }
        String mode = marker;
        String given = "";
        int semi = marker.indexOf(';');
        if (semi >= 0) {
          mode = marker.substring(0, semi).strip();
          String rest = marker.substring(semi + 1).strip();
          assertThat(rest).as("%s:%d marker", file, start).startsWith("given:");
          given = rest.substring("given:".length()).strip();
        }
        assertThat(mode).as("%s:%d marker", file, start)
            .matches("statements|file|no( \\(.*\\))?");
        snippets.add(new Snippet(file, start, mode, given, imports, body.toString()));
        marker = null;
      } else if (!line.isBlank()) {
        marker = null;
      }
    }
    return snippets;
  }

  private static JavaFileObject source(Snippet s) {
    String name = s.className();
    // Imports are put on one line so that body line k is generated line k + headerLines().
    String imports = String.join(" ", s.imports());
    String code;
    if (s.mode().equals("file")) {
      code = imports + "\n" + s.body();
    } else {
      code = imports + "\nclass " + name + " {\n  void snippet(" + s.given()
          + ") throws Exception {\n" + s.body() + "\n  }\n}\n";
    }
    return new SimpleJavaFileObject(URI.create("string:///" + name + ".java"),
        JavaFileObject.Kind.SOURCE) {
      @Override
      public CharSequence getCharContent(boolean ignoreEncodingErrors) {
        return code;
      }
    };
  }
}
