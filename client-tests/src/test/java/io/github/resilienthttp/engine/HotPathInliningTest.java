package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.ResilientHttpClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.CodeSizeEvaluator;

/**
 * No method of the client jar is too big for HotSpot's C2 to inline where it runs hot, except
 * methods the healthy path never runs (issue 26).
 *
 * <p>C2 never inlines a hot call to a method over {@code FreqInlineSize} bytecode bytes (325 on
 * x86-64, HotSpot's {@code c2_globals}), so such a method on the healthy path is a call on every
 * operation and a wall for the inlining around it. So the healthy path's steps keep their rare
 * branches in methods of their own ({@code RetryLoop.decide} and {@code decideNotSuccess},
 * {@code RetryLoop.ended} and {@code report}). This test keeps a change from growing a method over
 * the line unnoticed: the benchmarks cannot see it, its cost being inside their noise.
 *
 * <p>The size is ASM's {@link CodeSizeEvaluator#getMinSize()}: the exact length for a method under
 * 32 KiB but for up to 3 bytes of padding per switch.
 */
class HotPathInliningTest {
  /** HotSpot's {@code FreqInlineSize} on x86-64 and AArch64 (bytes of bytecode). */
  private static final int FREQ_INLINE_SIZE = 325;

  /** Methods over the line, each with why the healthy path (a first-attempt success) skips it. */
  private static final Map<String, String> OFF_THE_HEALTHY_PATH = Map.of(
      "internal.engine.RetryLoop#decideNotSuccess", "an answer that is not a success",
      "internal.engine.RetryLoop#report", "an end with a retry, a failure, listeners or debug log",
      "internal.engine.ClientRuntime#<init>", "once per client, at build()",
      "internal.deadline.DeadlineWatchdog#sweep", "the watchdog thread's tick, not the caller's",
      "internal.async.PollLoop#afterPoll", "a 202 job's poll",
      "ResumeToken#parse", "resuming an operation from its token",
      "OutboxResumer#tryOne", "the outbox's resumer",
      "OutboxResumer#drain", "the outbox's resumer");

  private static Map<String, Integer> sizes;

  @BeforeAll
  static void measureTheClientJar() throws IOException, URISyntaxException {
    Path location = Path.of(
        ResilientHttpClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    sizes = new TreeMap<>();
    if (Files.isDirectory(location)) {
      try (Stream<Path> files = Files.walk(location)) {
        for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
          try (InputStream in = Files.newInputStream(file)) {
            measure(in);
          }
        }
      }
    } else {
      try (JarFile jar = new JarFile(location.toFile())) {
        for (JarEntry entry : (Iterable<JarEntry>) jar.stream()::iterator) {
          if (entry.getName().endsWith(".class")) {
            try (InputStream in = jar.getInputStream(entry)) {
              measure(in);
            }
          }
        }
      }
    }
  }

  private static void measure(InputStream classFile) throws IOException {
    ClassReader reader = new ClassReader(classFile);
    String owner = reader.getClassName().replace('/', '.')
        .replaceFirst("^io\\.github\\.resilienthttp\\.", "");
    reader.accept(new ClassVisitor(Opcodes.ASM9) {
      @Override
      public MethodVisitor visitMethod(int access, String name, String descriptor,
          String signature, String[] exceptions) {
        return new CodeSizeEvaluator(Opcodes.ASM9, null) {
          @Override
          public void visitEnd() {
            sizes.merge(owner + "#" + name, getMinSize(), Math::max);
          }
        };
      }
    }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
  }

  @Test
  void onlyMethodsOffTheHealthyPathAreTooBigToInline() {
    Map<String, Integer> tooBig = new TreeMap<>();
    sizes.forEach((method, size) -> {
      if (size > FREQ_INLINE_SIZE) {
        tooBig.put(method, size);
      }
    });
    assertThat(tooBig.keySet())
        .as("methods over %d bytes (%s): split one the healthy path runs, as RetryLoop.decide"
            + " was; list one it never runs in OFF_THE_HEALTHY_PATH, with why; drop one that"
            + " shrank", FREQ_INLINE_SIZE, tooBig)
        .containsExactlyInAnyOrderElementsOf(OFF_THE_HEALTHY_PATH.keySet());
  }

  @Test
  void theHealthyPathsOwnStepsAreMeasuredAndSmall() {
    // Guards the measuring itself: these exist, have code, and fit.
    assertThat(sizes).containsKeys("internal.engine.RetryLoop#decide",
        "internal.engine.RetryLoop#ended");
    assertThat(sizes.get("internal.engine.RetryLoop#decide")).isBetween(40, FREQ_INLINE_SIZE);
    assertThat(sizes.get("internal.engine.RetryLoop#ended")).isBetween(40, FREQ_INLINE_SIZE);
    assertThat(sizes.get("internal.engine.RetryLoop#decideNotSuccess"))
        .isGreaterThan(FREQ_INLINE_SIZE);
  }
}
