package io.github.resilienthttp.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.Operation;
import io.github.resilienthttp.spring.ResilientHttpProperties;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every public method of a public builder of the published API, and every property of the Spring
 * Boot starter, is named somewhere a user reads: README.md or a page under docs/. A new builder
 * method without a line in the docs fails here, naming it.
 *
 * <p>Scanned: every class whose simple name ends in {@code Builder} in the packages
 * {@code io.github.resilienthttp} and below (except {@code internal}), in the jars and class
 * directories of this module's test class path that hold them. "Named" means that one page names
 * the type the builder builds and the method's name in code form: {@code .name}, {@code `name}, or
 * {@code name(}. Properties: each setter of
 * {@link ResilientHttpProperties} and of its nested types, as its kebab-case name
 * ({@code setMaxAttempts} is {@code max-attempts}), in docs/spring-boot.md or docs/server.md.
 *
 * <p>{@link Operation} counts as a builder (its methods that return the operation; the page must say
 * "operation"). Exceptions are listed in {@code src/test/resources/undocumented-builder-methods.txt}
 * ({@code Type.Builder#method} as the failure prints it, one a line): methods that a change in
 * flight documents in a page of its own. Entries for methods that do not exist (yet), or that are
 * documented by now, are tolerated.
 */
class BuilderMethodsDocumentedTest {
  private static final String API_PACKAGE = "io.github.resilienthttp";

  /** README.md and every page under docs/, each as one text. */
  static List<String> pages() throws IOException {
    List<String> pages = new ArrayList<>();
    for (Path f : ReadmeSnippetsTest.markdownFiles()) {
      pages.add(Files.readString(f, StandardCharsets.UTF_8));
    }
    return pages;
  }

  /**
   * Whether one page names both the type the builder builds (its enclosing type, or the builder's
   * own name for a top-level builder) and the method: where a user looking for that type finds it.
   */
  static boolean documented(List<String> pages, Class<?> builder, String method) {
    String owner = builder.getEnclosingClass() != null ? builder.getEnclosingClass().getSimpleName()
        : builder == Operation.class ? "operation" : builder.getSimpleName();
    Pattern ownerName = Pattern.compile("\\b" + Pattern.quote(owner) + "\\b",
        builder == Operation.class ? Pattern.CASE_INSENSITIVE : 0);
    return pages.stream().anyMatch(p -> ownerName.matcher(p).find() && named(p, method));
  }

  static Set<String> allowList() throws IOException {
    try (var in = BuilderMethodsDocumentedTest.class
        .getResourceAsStream("/undocumented-builder-methods.txt")) {
      if (in == null) {
        return Set.of();
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().map(String::strip)
          .filter(l -> !l.isEmpty() && !l.startsWith("#")).collect(Collectors.toCollection(TreeSet::new));
    }
  }

  static boolean named(String text, String name) {
    return Pattern.compile("[.`]" + Pattern.quote(name) + "\\b|\\b" + Pattern.quote(name) + "\\(")
        .matcher(text).find();
  }

  @Test
  void everyPublicBuilderMethodIsNamedInTheDocs() throws Exception {
    List<Class<?>> builders = builderClasses();
    // The client's, the policies', the outbox resumer's, the callbacks', the server guard's ...
    assertThat(builders).extracting(Class::getName).contains(
        "io.github.resilienthttp.ResilientHttpClient$Builder",
        "io.github.resilienthttp.RetryPolicy$Builder",
        "io.github.resilienthttp.callbacks.CallbackReceiver$Builder",
        "io.github.resilienthttp.server.IdempotencyGuard$Builder");
    List<String> pages = pages();
    Set<String> allowed = allowList();
    // Operation is configured like a builder: its methods that return the operation.
    builders.add(Operation.class);
    List<String> undocumented = new ArrayList<>();
    for (Class<?> builder : builders) {
      for (Method m : builder.getMethods()) {
        if (m.getDeclaringClass() == Object.class || m.isSynthetic() || m.isBridge()
            || Modifier.isStatic(m.getModifiers())
            || (builder == Operation.class && m.getReturnType() != Operation.class)) {
          continue;
        }
        String entry = displayName(builder) + "#" + m.getName();
        if (!allowed.contains(entry) && !documented(pages, builder, m.getName())
            && !undocumented.contains(entry)) {
          undocumented.add(entry);
        }
      }
    }
    Collections.sort(undocumented);
    assertThat(undocumented).as("public builder methods named in no page of README.md or docs/"
        + " that also names their type (document them, e.g. in docs/configuration.md, or list them"
        + " in it/src/test/resources/undocumented-builder-methods.txt while their page is in flight)")
        .isEmpty();
  }

  @Test
  void everyStarterPropertyIsNamedInTheSpringBootPages() throws IOException {
    Path docs = ReadmeSnippetsTest.root().resolve("docs");
    String text = Files.readString(docs.resolve("spring-boot.md"), StandardCharsets.UTF_8)
        + Files.readString(docs.resolve("server.md"), StandardCharsets.UTF_8);
    Set<String> properties = new TreeSet<>();
    collectProperties(ResilientHttpProperties.class, properties);
    assertThat(properties).contains("max-attempts", "sliding-window-size", "url-patterns");
    List<String> missing = properties.stream()
        .filter(p -> !Pattern.compile("(?<![a-z-])" + Pattern.quote(p) + "(?![a-z-])").matcher(text).find())
        .collect(Collectors.toList());
    assertThat(missing).as("starter properties named in neither docs/spring-boot.md nor docs/server.md")
        .isEmpty();
  }

  /** Kebab-case names of the setters of {@code type} and of the starter's own types they take. */
  private static void collectProperties(Class<?> type, Set<String> into) {
    for (Method m : type.getMethods()) {
      if (!m.getName().startsWith("set") || m.getParameterCount() != 1
          || m.getDeclaringClass() == Object.class) {
        continue;
      }
      into.add(kebab(m.getName().substring(3)));
      Type param = m.getGenericParameterTypes()[0];
      Class<?> nested = m.getParameterTypes()[0];
      if (param instanceof ParameterizedType p && Map.class.isAssignableFrom(nested)) {
        nested = (Class<?>) p.getActualTypeArguments()[1];
      }
      if (nested.getName().startsWith(ResilientHttpProperties.class.getName() + "$")
          && !nested.isEnum()) {
        collectProperties(nested, into);
      }
    }
  }

  static String kebab(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
  }

  private static String displayName(Class<?> c) {
    return c.getName().substring(API_PACKAGE.length() + 1).replace('$', '.');
  }

  /** Public classes named {@code *Builder} in the API packages on the test class path. */
  static List<Class<?>> builderClasses() throws IOException, URISyntaxException {
    Set<String> names = new TreeSet<>();
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      Path p = Path.of(entry);
      if (Files.isDirectory(p)) {
        collectClassNames(p, names);
      } else if (entry.endsWith(".jar") && Files.isRegularFile(p)
          && p.getFileName().toString().startsWith("resilient-http-")) {
        try (FileSystem jar = FileSystems.newFileSystem(URI.create("jar:" + p.toUri()), Map.of())) {
          collectClassNames(jar.getPath("/"), names);
        }
      }
    }
    List<Class<?>> builders = new ArrayList<>();
    for (String name : names) {
      Class<?> c;
      try {
        c = Class.forName(name, false, BuilderMethodsDocumentedTest.class.getClassLoader());
      } catch (ClassNotFoundException | LinkageError e) {
        continue; // an optional dependency of the class is absent: not what a user builds here
      }
      if (c.getSimpleName().endsWith("Builder") && Modifier.isPublic(c.getModifiers())
          && (c.getEnclosingClass() == null || Modifier.isPublic(c.getEnclosingClass().getModifiers()))) {
        builders.add(c);
      }
    }
    return builders;
  }

  private static void collectClassNames(Path root, Set<String> into) throws IOException {
    Path pkg = root.resolve(API_PACKAGE.replace('.', '/'));
    if (!Files.isDirectory(pkg)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(pkg)) {
      walk.map(f -> root.relativize(f).toString().replace('\\', '/'))
          .filter(f -> f.endsWith(".class") && !f.contains("/internal/") && !f.contains("/it/")
              && !f.endsWith("module-info.class") && !f.endsWith("package-info.class"))
          .map(f -> f.substring(0, f.length() - ".class".length()).replace('/', '.'))
          .forEach(into::add);
    }
  }
}
