package io.github.resilienthttp.testkit.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The probe against servers whose answers do not identify the effect (a server that ignores keys
 * and answers {@code 201 {"status":"created"}} or {@code 204}), that close the connection after
 * each answer, and under a request cap: verdicts it can stand behind, or "cannot tell".
 */
class ProbeVerdictTrustTest {
  private HttpServer server;
  private final AtomicInteger charges = new AtomicInteger();

  /** Charges every POST, ignoring keys; closes each connection after the answer; /count tells. */
  private HttpUrl start(int status, String body) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.setExecutor(Executors.newFixedThreadPool(16));
    server.createContext("/payments", exchange -> {
      exchange.getRequestBody().readAllBytes();
      charges.incrementAndGet();
      answer(exchange, status, body);
    });
    server.createContext("/count", exchange -> answer(exchange, 200, "{\"count\":" + charges.get() + "}"));
    server.start();
    return HttpUrl.get("http://127.0.0.1:" + server.getAddress().getPort() + "/payments");
  }

  private static void answer(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Connection", "close");
    if (!body.isEmpty()) exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) exchange.getResponseBody().write(bytes);
    exchange.close();
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
      ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
  }

  private static IdempotencyProbe.Builder probe(HttpUrl url) {
    return IdempotencyProbe.builder(url).requestTimeout(Duration.ofSeconds(5))
        .inProgressRetries(1, Duration.ofMillis(10));
  }

  @Test
  void aServerThatIgnoresKeysAndNamesNoResourceGetsCannotTellNotPass() throws Exception {
    HttpUrl url = start(201, "{\"status\":\"created\"}");
    ProbeReport report = probe(url).build().run();

    assertThat(report.result(ProbeCheck.REPLAY).verdict()).isEqualTo(Verdict.CANNOT_TELL);
    assertThat(report.result(ProbeCheck.CONCURRENT_REQUESTS).verdict()).isEqualTo(Verdict.CANNOT_TELL);
    assertThat(report.result(ProbeCheck.LOST_RESPONSE).verdict()).isEqualTo(Verdict.CANNOT_TELL);
    assertThat(report.result(ProbeCheck.REPLAY).evidence())
        .contains("no resource id and no replay header").contains("SDK reads the retry as: final");
    // Check 2 fails, and says what it saw instead of guessing a cause.
    CheckResult reuse = report.result(ProbeCheck.KEY_REUSE_REJECTED);
    assertThat(reuse.verdict()).isEqualTo(Verdict.FAIL);
    assertThat(reuse.evidence()).contains("the answers do not identify the effect");
    // Every answer arrived although the server closes each connection (no "unexpected end of stream").
    assertThat(report.toTable()).doesNotContain("no answer").contains("result: FAIL");
  }

  @Test
  void withAnEffectCounterTheSameServerFailsEachCheckOnTheCount() throws Exception {
    HttpUrl url = start(204, "");
    ProbeReport report = probe(url).effectCounter(EffectCounter.url(url.resolve("/count"))).build().run();

    assertThat(report.result(ProbeCheck.REPLAY).verdict()).isEqualTo(Verdict.FAIL);
    assertThat(report.result(ProbeCheck.REPLAY).evidence())
        .contains("2 effects counted by count URL").contains("executed 2 times (judged by the effect count)");
    assertThat(report.result(ProbeCheck.CONCURRENT_REQUESTS).evidence()).contains("executed 8 times");
    assertThat(report.result(ProbeCheck.LOST_RESPONSE).verdict()).isEqualTo(Verdict.FAIL);
  }

  @Test
  void aCheckThatWouldExceedTheCapSaysCannotTellWithinTheCapAndTheProbeGoesOn() throws Exception {
    HttpUrl url = start(201, "{\"id\":\"same\"}");
    ProbeReport report = probe(url).maxRequests(6).build().run();

    assertThat(report.result(ProbeCheck.REPLAY).verdict()).isNotEqualTo(Verdict.CANNOT_TELL);
    CheckResult burst = report.result(ProbeCheck.CONCURRENT_REQUESTS);
    assertThat(burst.verdict()).isEqualTo(Verdict.CANNOT_TELL);
    assertThat(burst.evidence()).contains("cannot tell within the cap").contains("--max-requests");
    assertThat(report.requestsSent()).isLessThanOrEqualTo(6);
    assertThat(charges.get()).isEqualTo(report.requestsSent());
  }
}
