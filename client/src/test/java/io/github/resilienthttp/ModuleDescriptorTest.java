package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The jar is a named module that exports the API packages and nothing under internal. */
class ModuleDescriptorTest {
  @Test
  void exportsTheApiPackagesOnly() throws IOException, URISyntaxException {
    ModuleDescriptor descriptor;
    // The client's own descriptor: other jars on the class path have a module-info.class too.
    Path classes = Path.of(ResilientHttpClient.class.getProtectionDomain().getCodeSource()
        .getLocation().toURI());
    try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
      descriptor = ModuleDescriptor.read(in);
    }
    assertThat(descriptor.name()).isEqualTo("io.github.resilienthttp");
    assertThat(descriptor.exports().stream().map(ModuleDescriptor.Exports::source)
        .collect(Collectors.toSet())).containsExactly(
            "io.github.resilienthttp");
    assertThat(descriptor.exports()).allSatisfy(e -> assertThat(e.isQualified()).isFalse());
    assertThat(descriptor.opens()).isEmpty();
    // JSON, Micrometer and OpenTelemetry are their own artifacts: the core reads none of them.
    assertThat(descriptor.requires().stream().map(ModuleDescriptor.Requires::name))
        .noneMatch(m -> m.contains("jackson") || m.contains("micrometer")
            || m.contains("opentelemetry"));
  }

  @Test
  void theImplementationClassesLiveUnderInternal() {
    assertThat(ResilientHttpClient.class.getPackageName()).isEqualTo("io.github.resilienthttp");
    for (String internal : new String[] {
        "io.github.resilienthttp.internal.engine.RetryLoop",
        "io.github.resilienthttp.internal.engine.ClientRuntime",
        "io.github.resilienthttp.internal.guard.BulkheadGate",
        "io.github.resilienthttp.internal.deadline.DeadlineWatchdog",
        "io.github.resilienthttp.internal.okhttp.RetryInterceptor"}) {
      assertThat(classExists(internal)).as(internal).isTrue();
    }
  }

  private static boolean classExists(String name) {
    try {
      Class.forName(name, false, ModuleDescriptorTest.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}
