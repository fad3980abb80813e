package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Netflix concurrency-limits is an optional dependency: the module reads it with
 * {@code requires static}, no public type names it, and without it on the class path
 * {@code build()} with a concurrency limit fails naming the artifact, while every other client
 * still builds.
 */
class ConcurrencyLimitDependencyTest {
  private static final String NETFLIX = "concurrency-limits-core";

  @Test
  void theModuleReadsItStaticallyOnly() throws Exception {
    Path classes = Path.of(ResilientHttpClient.class.getProtectionDomain().getCodeSource()
        .getLocation().toURI());
    ModuleDescriptor descriptor;
    try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
      descriptor = ModuleDescriptor.read(in);
    }
    assertThat(descriptor.requires()).filteredOn(r -> r.name().equals("concurrency.limits.core"))
        .singleElement().satisfies(r -> assertThat(r.modifiers())
            .containsExactly(ModuleDescriptor.Requires.Modifier.STATIC));
  }

  @Test
  void noPublicTypeNamesNetflixTypes() {
    for (Class<?> c : new Class<?>[] {ConcurrencyLimitPolicy.class,
        ConcurrencyLimitPolicy.Builder.class, ConcurrencyLimitExceededException.class,
        ResilientHttpClient.class, ResilientHttpClient.Builder.class}) {
      for (Method m : c.getMethods()) {
        assertThat(m.getReturnType().getName()).as(m.toString()).doesNotStartWith("com.netflix");
        assertThat(Arrays.stream(m.getParameterTypes()).map(Class::getName))
            .as(m.toString()).noneMatch(n -> n.startsWith("com.netflix"));
      }
    }
  }

  @Test
  void withoutTheJarBuildFailsNamingTheArtifactAndOtherClientsStillBuild() throws Exception {
    List<URL> urls = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!entry.contains(NETFLIX)) {
        urls.add(Path.of(entry).toUri().toURL());
      }
    }
    try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new),
        ClassLoader.getPlatformClassLoader())) {
      Class<?> okHttpClass = loader.loadClass("okhttp3.OkHttpClient");
      Object okHttp = okHttpClass.getConstructor().newInstance();
      Class<?> clientClass = loader.loadClass(ResilientHttpClient.class.getName());
      Class<?> policyClass = loader.loadClass(ConcurrencyLimitPolicy.class.getName());
      Method wrap = clientClass.getMethod("wrap", okHttpClass);

      Object plain = wrap.invoke(null, okHttp);
      Object built = plain.getClass().getMethod("build").invoke(plain);
      assertThat(built).isNotNull(); // a client without the limit needs nothing of Netflix's

      Object builder = wrap.invoke(null, okHttp);
      Object policy = policyClass.getMethod("vegas").invoke(null);
      builder.getClass().getMethod("concurrencyLimit", policyClass).invoke(builder, policy);
      Throwable thrown = null;
      try {
        builder.getClass().getMethod("build").invoke(builder);
      } catch (InvocationTargetException e) {
        thrown = e.getCause();
      }
      assertThat(thrown).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("com.netflix.concurrency-limits:concurrency-limits-core");
      assertThat(loader.getResource("com/netflix/concurrency/limits/Limit.class")).isNull();

      // Throttling and pacing make a target's state without touching Netflix's classes.
      Class<?> settingsClass = loader.loadClass(
          "io.github.resilienthttp.internal.guard.OverloadSettings");
      Class<?> throttlingClass = loader.loadClass(AdaptiveThrottlingPolicy.class.getName());
      Object settings = settingsClass.getConstructor(throttlingClass, policyClass, boolean.class)
          .newInstance(throttlingClass.getMethod("defaults").invoke(null), null, true);
      Class<?> timeClass = loader.loadClass(TimeSource.class.getName());
      Class<?> overloadClass = loader.loadClass(
          "io.github.resilienthttp.internal.guard.TargetOverload");
      Object overload = overloadClass.getMethod("of", settingsClass, timeClass,
          java.util.random.RandomGenerator.class).invoke(null, settings,
          timeClass.getMethod("system").invoke(null), new java.util.SplittableRandom(1));
      Class<?> urlClass = loader.loadClass("okhttp3.HttpUrl");
      Object url = urlClass.getMethod("get", String.class).invoke(null, "http://example.com/");
      Object target = overloadClass.getMethod("forUrl", urlClass).invoke(overload, url);
      assertThat(target.getClass().getMethod("throttle").invoke(target)).isNotNull();
      assertThat(target.getClass().getMethod("limiter").invoke(target)).isNull();
    }
  }
}
