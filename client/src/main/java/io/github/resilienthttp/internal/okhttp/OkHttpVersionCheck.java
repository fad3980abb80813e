package io.github.resilienthttp.internal.okhttp;

import okhttp3.Call;

/**
 * Refuses, at {@code ResilientHttpClient.wrap()}, an OkHttp older than the SDK needs, with a message that
 * names the fix. Not API.
 *
 * <p>Why here: the SDK is compiled against OkHttp 5 and uses {@code Call.tag(KClass, Function0)}, which
 * OkHttp added in 5.3.0. An older OkHttp on the class path, most often 4.12 brought by Retrofit 3.0.0
 * declared before the SDK without a BOM, links fine and then dies at the first {@code execute()} with
 * a {@code NoSuchMethodError} deep in an interceptor. Checking the method itself (not the version
 * string) is what the SDK actually needs; the version string only makes the message precise.
 *
 * <p>The check runs once per class loader (the answer cannot change while the classes are loaded).
 */
public final class OkHttpVersionCheck {
  /** The oldest OkHttp release with every method the SDK calls. */
  public static final String MINIMUM_VERSION = "5.3.0";

  private static volatile boolean verified;

  private OkHttpVersionCheck() {}

  /**
   * Returns normally when the OkHttp that {@code okhttp3.Call} was loaded from is new enough.
   *
   * @throws IllegalStateException when it is older than {@link #MINIMUM_VERSION}; the message names
   *     the version found, the jar it came from and the fix
   */
  public static void requireSupportedOkHttp() {
    if (verified) {
      return;
    }
    String problem = problem(Call.class);
    if (problem != null) {
      throw new IllegalStateException(problem);
    }
    verified = true;
  }

  /**
   * What is wrong with the OkHttp whose {@code Call} interface is {@code call}, or {@code null} when
   * nothing is. Separate from {@link #requireSupportedOkHttp()} so that a test can pass a {@code Call}
   * loaded from an older OkHttp jar.
   *
   * @param call the {@code okhttp3.Call} class to inspect
   * @return the message of the exception to throw, or {@code null}
   */
  public static String problem(Class<?> call) {
    ClassLoader loader = call.getClassLoader();
    try {
      Class<?> kClass = Class.forName("kotlin.reflect.KClass", false, loader);
      Class<?> function0 = Class.forName("kotlin.jvm.functions.Function0", false, loader);
      call.getMethod("tag", kClass, function0);
      return null;
    } catch (ClassNotFoundException | NoSuchMethodException | LinkageError e) {
      return "Resilient HTTP needs OkHttp " + MINIMUM_VERSION + " or newer (5.x), but found OkHttp "
          + version(loader) + " (okhttp3.Call from " + source(call) + "). Another dependency (often"
          + " Retrofit 3.0.0, which depends on OkHttp 4.12) put an older OkHttp first on the class"
          + " path. Fix: import a BOM so that one OkHttp 5 wins: in Maven, in <dependencyManagement>,"
          + " import io.github.resilienthttp:resilient-http-bom (or com.squareup.okhttp3:okhttp-bom,"
          + " version " + MINIMUM_VERSION + " or newer) with <type>pom</type> and <scope>import</scope>;"
          + " in Gradle, implementation(platform(\"io.github.resilienthttp:resilient-http-bom:<version>\"))."
          + " Check with mvn dependency:tree -Dincludes=com.squareup.okhttp3";
    }
  }

  private static String version(ClassLoader loader) {
    try {
      // A Kotlin const: read reflectively, or javac would inline the SDK's compile-time value.
      Object v = Class.forName("okhttp3.OkHttp", false, loader).getField("VERSION").get(null);
      return String.valueOf(v);
    } catch (ReflectiveOperationException | LinkageError e) {
      return "(version unknown, older than 4)";
    }
  }

  private static String source(Class<?> c) {
    try {
      java.security.CodeSource cs = c.getProtectionDomain().getCodeSource();
      return cs == null || cs.getLocation() == null ? "an unknown location" : cs.getLocation().toString();
    } catch (SecurityException e) {
      return "an unknown location";
    }
  }
}
