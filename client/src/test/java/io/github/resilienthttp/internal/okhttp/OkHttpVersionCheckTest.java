package io.github.resilienthttp.internal.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.ResilientHttpClient;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;

/**
 * The OkHttp that Retrofit 3.0.0 brings (4.12), and 5.2.0 (the newest without the call tags the SDK
 * uses), are refused with a message naming the fix; the OkHttp the SDK is built with passes. The old
 * jars are copied by the build (see client/pom.xml) and loaded in their own class loaders, beside the
 * Kotlin standard library and Okio of this class path.
 */
class OkHttpVersionCheckTest {
  @Test
  void okHttp4IsRefusedWithTheFix() throws Exception {
    String message = problemOf("okhttp-4.12.0.jar");

    assertThat(message)
          .contains("needs OkHttp 5.3.0 or newer")
          .contains("found OkHttp 4.12.0")
          .contains("okhttp-4.12.0.jar")
          .contains("Retrofit 3.0.0")
          .contains("io.github.resilienthttp:resilient-http-bom")
          .contains("com.squareup.okhttp3:okhttp-bom")
          .contains("<scope>import</scope>")
          .contains("platform(");
  }

  @Test
  void okHttp5BeforeCallTagsIsRefusedToo() throws Exception {
    assertThat(problemOf("okhttp-jvm-5.2.0.jar"))
        .contains("needs OkHttp 5.3.0 or newer")
        .contains("found OkHttp 5.2.0");
  }

  @Test
  void theOkHttpTheSdkIsBuiltWithPasses() {
    assertThat(OkHttpVersionCheck.problem(Call.class)).isNull();
    OkHttpVersionCheck.requireSupportedOkHttp();
    ResilientHttpClient.wrap(new OkHttpClient()).build();
  }

  /** The check's verdict on the okhttp3.Call of one old OkHttp jar, in its own class loader. */
  private static String problemOf(String jarName) throws Exception {
    Path dir = Path.of(System.getProperty("okhttp4.jar", "target/okhttp4/okhttp-4.12.0.jar"))
        .getParent();
    Path jar = dir.resolve(jarName);
    assertThat(jar).exists();
    URL[] jars = {jar.toUri().toURL(), jarOf(kotlin.Unit.class), jarOf(okio.Timeout.class)};
    try (URLClassLoader loader = new URLClassLoader(jars, ClassLoader.getPlatformClassLoader())) {
      Class<?> oldCall = Class.forName("okhttp3.Call", false, loader);
      assertThat(oldCall).isNotSameAs(Call.class);
      return OkHttpVersionCheck.problem(oldCall);
    }
  }

  private static URL jarOf(Class<?> c) throws URISyntaxException, java.io.IOException {
    Path p = Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    assertThat(Files.exists(p)).isTrue();
    return p.toUri().toURL();
  }
}
