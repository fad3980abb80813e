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
        .endsWith("result: PASS (0 failed, 6 passed, 0 cannot tell, 0 not applicable)\n");
  }

  @Test
  void anEmbeddedServerWithoutDeduplicationFailsWithExitCodeOne() {
    int exit = probe("--embedded-flaw", "no-dedup");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains("flaw no_deduplication")
        .contains("executed again (id pay_2 is not id pay_1)")
        .endsWith("result: FAIL (4 failed, 2 passed, 0 cannot tell, 0 not applicable)\n");
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
      assertThat(out()).contains("result: PASS (0 failed, 4 passed, 0 cannot tell, 2 not applicable)");
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
    assertThat(probe("--embedded", "--max-requests", "0")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("error: maxRequests must be in 1..1000 but was 0");
    // A cap below what the checks need is not an error: those checks cannot tell within it.
    assertThat(probe("--embedded", "--max-requests", "10")).isEqualTo(ProbeCommand.EXIT_CANNOT_TELL);
    assertThat(out()).contains("cannot tell within the cap").contains("--max-requests raises it");
    assertThat(probe("--url", "http://127.0.0.1:9/p", "--retention", "soon")).isEqualTo(2);
  }

  @Test
  void helpExplainsTheChecksAndTheBound() {
    assertThat(probe("--help")).isZero();
    assertThat(out()).contains("sends at most the").contains("--embedded-flaw");
  }

  @Test
  void aServerWhoseAnswersNameNoResourceGetsCannotTellWithExitCodeThreeUnlessEffectsAreCounted()
      throws Exception {
    // Deduplicates correctly (one charge per key, 409 while the first runs, 422 for another body)
    // but answers 201 {"status":"created"} every time, with no replay header.
    java.util.Map<String, String> bodies = new java.util.concurrent.ConcurrentHashMap<>();
    java.util.Set<String> done = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.concurrent.atomic.AtomicInteger charges = new java.util.concurrent.atomic.AtomicInteger();
    com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
        new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 64);
    server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(16));
    server.createContext("/payments", exchange -> {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
      int status;
      String previous = key == null ? null : bodies.putIfAbsent(key, body);
      if (previous == null) {
        charges.incrementAndGet();
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        if (key != null) done.add(key);
        status = 201;
      } else {
        status = !previous.equals(body) ? 422 : done.contains(key) ? 201 : 409;
      }
      byte[] answer = (status == 201 ? "{\"status\":\"created\"}" : "{}").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, answer.length);
      exchange.getResponseBody().write(answer);
      exchange.close();
    });
    server.createContext("/count", exchange -> {
      byte[] answer = ("{\"count\":" + charges.get() + "}").getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, answer.length);
      exchange.getResponseBody().write(answer);
      exchange.close();
    });
    server.start();
    try {
      String base = "http://127.0.0.1:" + server.getAddress().getPort();
      assertThat(probe("--url", base + "/payments")).as(out()).isEqualTo(ProbeCommand.EXIT_CANNOT_TELL);
      assertThat(out()).contains("CANNOT TELL").contains("result: CANNOT TELL");
      out.reset();
      assertThat(probe("--url", base + "/payments", "--count-url", base + "/count")).as(out()).isZero();
      assertThat(out()).contains("judged by the effect count").contains("result: PASS");
    } finally {
      server.stop(0);
      ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
  }
}
