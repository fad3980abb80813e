package io.github.resilienthttp.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.github.resilienthttp.testkit.probe.CheckResult;
import io.github.resilienthttp.testkit.probe.EffectCounter;
import io.github.resilienthttp.testkit.probe.IdempotencyProbe;
import io.github.resilienthttp.testkit.probe.ProbeCheck;
import io.github.resilienthttp.testkit.probe.ProbeReport;
import io.github.resilienthttp.testkit.probe.Verdict;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The probe against the two third-party Node idempotency middlewares of docs/validation (installed
 * with {@code npm ci} from the checked-in lock file into a copy under target/): each check's verdict
 * equals the one in the checked-in output of the manual run, which is what the middleware's README
 * promises (replay of a completed key, 409 while in progress, mismatch refused: express-idempotency
 * with 417, @node-idempotency/core mapped to 422). Skipped when node or npm is not on the PATH, except
 * under {@code CI=true}, where a missing runtime fails; a failing {@code npm ci} fails with its output.
 */
class NodeMiddlewareValidationTest {
  private static final Path SOURCE = Path.of("..", "docs", "validation");
  private static final Path WORK = Path.of("target", "node-validation");
  private static final String BODY = "{\"order\":\"probe-order\",\"amount\":1000}"; // the CLI's default
  private static final Pattern PORT = Pattern.compile("PORT (\\d+)");
  private static final Pattern ROW = Pattern.compile("^(\\d)\\s{2,}.{62}\\s{2}(PASS|FAIL|CANNOT TELL|n/a)\\s");

  @BeforeAll
  static void install() throws Exception {
    boolean ci = "true".equalsIgnoreCase(System.getenv("CI"));
    boolean runtime = onPath("node") && onPath("npm");
    if (ci && !runtime) fail("CI=true but node or npm is not on the PATH: the middleware validation must run in CI");
    assumeTrue(runtime, "node and npm are not on the PATH");
    Files.createDirectories(WORK);
    for (String f : new String[] {"package.json", "package-lock.json", "express-idempotency-server.js",
        "node-idempotency-server.js", "express-idempotency.probe.txt", "node-idempotency.probe.txt"}) {
      Files.copy(SOURCE.resolve(f), WORK.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    Process npm = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund", "--prefer-offline")
        .directory(WORK.toFile()).redirectErrorStream(true).start();
    CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> readAll(npm));
    try {
      if (!npm.waitFor(120, TimeUnit.SECONDS)) fail("npm ci did not finish in 120 s: " + output.getNow(""));
    } finally {
      npm.destroyForcibly();
    }
    String out = output.get(10, TimeUnit.SECONDS);
    if (npm.exitValue() != 0) fail("npm ci failed with exit code " + npm.exitValue() + ":\n" + out);
  }

  @Test
  void expressIdempotencyVerdictsAgreeWithTheCheckedInRun() throws Exception {
    ProbeReport report = probe("express-idempotency-server.js", 417);
    assertThat(verdicts(report)).as(report.toTable())
        .isEqualTo(checkedIn("express-idempotency.probe.txt"))
        .isEqualTo(documented());
  }

  @Test
  void nodeIdempotencyCoreVerdictsAgreeWithTheCheckedInRun() throws Exception {
    ProbeReport report = probe("node-idempotency-server.js", 422);
    assertThat(verdicts(report)).as(report.toTable())
        .isEqualTo(checkedIn("node-idempotency.probe.txt"))
        .isEqualTo(documented());
  }

  /** What both READMEs promise: replay, mismatch refused, one execution under concurrency, replay after a lost answer. */
  private static Map<ProbeCheck, Verdict> documented() {
    Map<ProbeCheck, Verdict> m = new EnumMap<>(ProbeCheck.class);
    for (ProbeCheck c : ProbeCheck.values()) m.put(c, c.number() <= 4 ? Verdict.PASS : Verdict.NOT_APPLICABLE);
    return m;
  }

  private static ProbeReport probe(String script, int mismatchStatus) throws Exception {
    Process node = new ProcessBuilder("node", script).directory(WORK.toFile()).redirectErrorStream(true).start();
    try {
      BufferedReader lines = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
      CompletableFuture<Integer> port = CompletableFuture.supplyAsync(() -> {
        StringBuilder seen = new StringBuilder();
        try {
          for (String line; (line = lines.readLine()) != null; ) {
            Matcher m = PORT.matcher(line);
            if (m.find()) return Integer.parseInt(m.group(1));
            seen.append(line).append('\n');
          }
        } catch (IOException e) {
          throw new IllegalStateException(seen.toString(), e);
        }
        throw new IllegalStateException("node " + script + " ended without a port:\n" + seen);
      });
      String base = "http://127.0.0.1:" + port.get(20, TimeUnit.SECONDS);
      return IdempotencyProbe.builder(HttpUrl.get(base + "/payments"))
          .body(BODY).mismatchStatus(mismatchStatus).requestTimeout(Duration.ofSeconds(5))
          .effectCounter(EffectCounter.url(HttpUrl.get(base + "/count")))
          .build().run();
    } finally {
      node.destroy();
      if (!node.waitFor(5, TimeUnit.SECONDS)) node.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
    }
  }

  private static Map<ProbeCheck, Verdict> verdicts(ProbeReport report) {
    Map<ProbeCheck, Verdict> m = new EnumMap<>(ProbeCheck.class);
    for (CheckResult r : report.results()) m.put(r.check(), r.verdict());
    return m;
  }

  /** The verdict column of the checked-in table (ProbeReport.toTable's layout). */
  private static Map<ProbeCheck, Verdict> checkedIn(String file) throws IOException {
    Map<ProbeCheck, Verdict> m = new EnumMap<>(ProbeCheck.class);
    for (String line : Files.readAllLines(WORK.resolve(file))) {
      Matcher row = ROW.matcher(line);
      if (!row.find()) continue;
      int number = Integer.parseInt(row.group(1));
      ProbeCheck check = java.util.Arrays.stream(ProbeCheck.values()).filter(c -> c.number() == number)
          .findFirst().orElseThrow();
      m.put(check, switch (row.group(2)) {
        case "n/a" -> Verdict.NOT_APPLICABLE;
        case "CANNOT TELL" -> Verdict.CANNOT_TELL;
        default -> Verdict.valueOf(row.group(2));
      });
    }
    assertThat(m).as("rows of " + file).hasSize(ProbeCheck.values().length);
    return m;
  }

  private static boolean onPath(String command) {
    String path = System.getenv("PATH");
    if (path == null) return false;
    for (String dir : path.split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, command))) return true;
    }
    return false;
  }

  private static String readAll(Process p) {
    try {
      return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(output unreadable: " + e + ")";
    }
  }
}
