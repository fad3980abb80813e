package io.github.resilienthttp.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo jar's {@code probe} command, run in-process as {@code main} runs it: against the
 * embedded correct server (exit 0), an embedded broken one (exit 1), a URL (a loopback server
 * this test starts), and bad arguments (exit 2).
 */
class ProbeCommandTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int probe(String... args) {
    return ProbeCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void theEmbeddedServerPassesAllSixChecks() {
    int exit = probe("--embedded");

    assertThat(exit).as(out()).isZero();
    assertThat(out())
        .startsWith("Probing POST http://127.0.0.1:")
        .contains("(embedded payments server, flaw none): at most 24 requests, all to this URL.")
        .contains("/payments (embedded payments server")
        .contains("sent 19 requests (at most 24), all to this URL")
        .endsWith("result: PASS (0 failed, 6 passed, 0 not applicable)\n");
  }

  @Test
  void anEmbeddedServerWithoutDeduplicationFailsWithExitCodeOne() {
    int exit = probe("--embedded-flaw", "no-dedup");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains("flaw no_deduplication")
        .contains("executed again (id pay_2 is not id pay_1)")
        .endsWith("result: FAIL (4 failed, 2 passed, 0 not applicable)\n");
  }

  @Test
  void jsonIsTheOnlyOutputWithJson() {
    int exit = probe("--embedded-flaw", "race", "--json");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .startsWith("{\"method\":\"POST\",\"url\":\"http://127.0.0.1:")
        .contains("\"passed\":false")
        .contains("{\"number\":3,\"name\":\"CONCURRENT_REQUESTS\"")
        .endsWith("]}\n");
  }

  @Test
  void aUrlWithABodyFromAFileIsProbedAndOnlyThatUrlIsContacted(@TempDir Path dir)
      throws Exception {
    Path body = dir.resolve("p.json");
    Files.writeString(body, "{\"order\":\"o-7\",\"amount\":250}");
    try (IdempotentTestServer server = IdempotentTestServer.startDefault()) {
      int exit = probe("--url", server.url("/payments").toString(), "--body", "@" + body,
          "--concurrency", "4", "--header", "X-Team: payments");

      assertThat(exit).as(out()).isZero();
      assertThat(out()).contains("result: PASS (0 failed, 4 passed, 2 not applicable)");
      assertThat(server.requests())
          .allSatisfy(r -> {
            assertThat(r.path()).isEqualTo("/payments");
            assertThat(r.headers().get("X-Team")).isEqualTo("payments");
          })
          .hasSize(2 + 3 + 4 + 3);
      assertThat(server.effects().get(0).body()).isEqualTo("{\"order\":\"o-7\",\"amount\":250}");
    }
  }

  @Test
  void badArgumentsExitWithTwoAndSayWhy() {
    assertThat(probe()).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .startsWith("error: give exactly one of --url, --embedded or --embedded-flaw");
    assertThat(probe("--embedded-flaw", "sloppy")).isEqualTo(2);
    assertThat(probe("--embedded", "--max-requests", "10")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("error: maxRequests is 10 but the configured checks can need up to 24 requests");
    assertThat(probe("--url", "http://127.0.0.1:9/p", "--retention", "soon")).isEqualTo(2);
  }

  @Test
  void helpExplainsTheChecksAndTheBound() {
    assertThat(probe("--help")).isZero();
    assertThat(out()).contains("sends at most the printed number of").contains("--embedded-flaw");
  }
}
