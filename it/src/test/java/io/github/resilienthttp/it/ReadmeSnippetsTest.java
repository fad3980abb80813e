package io.github.resilienthttp.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
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
 * Compiles every Java snippet of the README against the published artifacts (this module's test
 * class path: core, JSON, Micrometer, OpenTelemetry, Retrofit), so that the snippets a user pastes
 * cannot rot. Each {@code ```java} block must be preceded by a marker that says how to compile it:
 * <ul>
 *   <li>{@code <!-- compile: statements; given: Type name, ... -->}: the block's {@code import} lines,
 *       then statements (local records and interfaces allowed), compiled as the body of a method whose
 *       parameters are the given variables;
 *   <li>{@code <!-- compile: file -->}: a whole compilation unit;
 *   <li>{@code <!-- compile: no (why) -->}: not compiled (for example, code of other libraries).
 * </ul>
 */
class ReadmeSnippetsTest {
  private static final Pattern MARKER = Pattern.compile("<!--\\s*compile:\\s*(.*?)\\s*-->");

  record Snippet(int line, String mode, String given, List<String> imports, String body) {}

  @Test
  void everyJavaSnippetOfTheReadmeCompiles(@TempDir Path out) throws IOException {
    List<Snippet> snippets = snippets(Path.of(System.getProperty("readme", "../README.md")));
    List<Snippet> compiled = snippets.stream().filter(s -> !s.mode().startsWith("no"))
        .collect(Collectors.toList());
    assertThat(compiled).hasSizeGreaterThanOrEqualTo(7);

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
          .map(d -> d.getSource().getName() + ":" + d.getLineNumber() + ": " + d.getMessage(Locale.ROOT))
          .collect(Collectors.joining("\n"));
      assertThat(ok).as("README snippets (file name = README line of the block):%n%s", errors).isTrue();
    }
  }

  @Test
  void everyJavaSnippetSaysHowToCompileIt() throws IOException {
    // snippets() fails on a block without a marker; this names the rule in the test report.
    assertThat(snippets(Path.of(System.getProperty("readme", "../README.md")))).isNotEmpty();
  }

  static List<Snippet> snippets(Path readme) throws IOException {
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
          throw new AssertionError("README.md:" + (i + 1) + ": a ```java block without a"
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
          assertThat(rest).as("README.md:%d marker", start).startsWith("given:");
          given = rest.substring("given:".length()).strip();
        }
        assertThat(mode).as("README.md:%d marker", start)
            .matches("statements|file|no( \\(.*\\))?");
        snippets.add(new Snippet(start, mode, given, imports, body.toString()));
        marker = null;
      } else if (!line.isBlank()) {
        marker = null;
      }
    }
    return snippets;
  }

  private static JavaFileObject source(Snippet s) {
    String name = "ReadmeLine" + s.line();
    String imports = String.join("\n", s.imports());
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
