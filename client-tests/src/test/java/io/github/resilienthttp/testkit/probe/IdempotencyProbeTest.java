package io.github.resilienthttp.testkit.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.Flaw;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.github.resilienthttp.testkit.Outcome;
import io.github.resilienthttp.testkit.ReceivedRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import okhttp3.Headers;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The probe against the testkit's payments server: every check passes against the correct server,
 * and each deliberately broken variant ({@link Flaw}) fails exactly the checks it should. All
 * servers are on the loopback interface, started by the test.
 */
class IdempotencyProbeTest {
  private static final String PAYMENT = "{\"order\":\"order-1\",\"amount\":1000}";
  /** Long enough that a burst on pre-opened connections lands within one request's processing. */
  private static final Duration SLOW = Duration.ofMillis(300);

  private final List<IdempotentTestServer> servers = new ArrayList<>();

  @AfterEach
  void closeServers() {
    servers.forEach(IdempotentTestServer::close);
  }

  private IdempotentTestServer start(IdempotentTestServer.Builder builder) throws Exception {
    IdempotentTestServer server = builder.build().start();
    servers.add(server);
    return server;
  }

  @Test
  void everyCheckPassesAgainstTheTestServer() throws Exception {
    FakeTimeSource time = new FakeTimeSource();
    IdempotentTestServer server =
        start(
            IdempotentTestServer.builder()
                .requireKeyForNonIdempotent(true)
                .retention(Duration.ofHours(24))
                .clock(time));
    IdempotencyProbe probe =
        IdempotencyProbe.builder(server.url("/payments"))
            .body(PAYMENT)
            .keyRequired(true)
            .retention(Duration.ofHours(24), AfterRetention.EXECUTED_AGAIN)
            .timeSource(time)
            .build();

    ProbeReport report = probe.run();

    assertThat(report.results())
        .extracting(CheckResult::verdict)
        .containsOnly(Verdict.PASS)
        .hasSize(6);
    assertThat(report.failed()).isFalse();
    // Checks 1 to 4 create one payment each, check 6 two (before and after the retention).
    assertThat(server.stats().effects()).isEqualTo(6);
    assertThat(server.stats().requests()).isEqualTo(report.requestsSent());
    assertThat(report.requestsSent()).isEqualTo(2 + 3 + 8 + 3 + 1 + 2);
    assertThat(report.requestCap()).isEqualTo(probe.plannedRequests()).isEqualTo(24);
    assertThat(time.sleeps()).containsExactly(Duration.ofHours(24));
    assertThat(report.result(ProbeCheck.REPLAY).evidence())
        .isEqualTo("first 201 id pay_1; retry 201 id pay_1 Idempotent-Replayed: true; SDK reads the retry"
            + " as: replay (judged by the replay header and the resource id)");
    assertThat(report.result(ProbeCheck.KEY_REUSE_REJECTED).evidence())
        .isEqualTo("first 201 id pay_2; other body 422; first body again 201 id pay_2"
            + " Idempotent-Replayed: true; SDK reads the other body's answer as: mismatch (judged by"
            + " the status and the resource)");
    assertThat(report.result(ProbeCheck.CONCURRENT_REQUESTS).evidence())
        .startsWith("8 at once: ").contains("; 1 resource (id pay_3); SDK reads them as: 1×final, ")
        // The duplicates race the first: each is answered as a replay, or 409 while it runs.
        .matches(".*SDK reads them as: 1×final, (7×replay|[1-7]×in progress(, [1-6]×replay)?)"
            + " \\(judged by the resource id\\)");
    assertThat(report.result(ProbeCheck.LOST_RESPONSE).evidence())
        .startsWith("dropped request closed unread when the answer began after ")
        .endsWith("; retry 201 id pay_4 Idempotent-Replayed: true;"
            + " again 201 id pay_4 Idempotent-Replayed: true; SDK reads the retry as: replay"
            + " (judged by the replay header)");
    assertThat(report.result(ProbeCheck.KEY_REQUIRED).evidence())
        .isEqualTo("without a key: 400; SDK reads it as: final");
    assertThat(report.result(ProbeCheck.RETENTION).evidence())
        .isEqualTo("first 201 id pay_5; after PT24H: 201 id pay_6; SDK reads it as: final: executed"
            + " again, as documented");
  }

  @Test
  void theLostResponseWasExecutedByTheServerAndOnlyReplayedToTheRetry() throws Exception {
    IdempotentTestServer server = start(IdempotentTestServer.builder());

    ProbeReport report =
        IdempotencyProbe.builder(server.url("/payments")).body(PAYMENT).build().run();

    assertThat(report.result(ProbeCheck.LOST_RESPONSE).verdict()).isEqualTo(Verdict.PASS);
    // The last three requests are check 4's: the dropped one executed, its retries replayed.
    List<ReceivedRequest> requests = server.requests();
    assertThat(requests.subList(requests.size() - 3, requests.size()))
        .extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.CREATED, Outcome.REPLAYED, Outcome.REPLAYED);
    assertThat(requests.subList(requests.size() - 3, requests.size()))
        .extracting(ReceivedRequest::key)
        .containsOnly(requests.get(requests.size() - 1).key());
  }

  static Stream<Arguments> flaws() {
    return Stream.of(
        Arguments.of(Flaw.NO_DEDUPLICATION, EnumSet.of(ProbeCheck.REPLAY,
            ProbeCheck.KEY_REUSE_REJECTED, ProbeCheck.CONCURRENT_REQUESTS,
            ProbeCheck.LOST_RESPONSE), ProbeCheck.REPLAY,
            "first 201 id pay_1; retry 201 id pay_2; SDK reads the retry as: final: executed again (id"
                + " pay_2 is not id pay_1)"),
        Arguments.of(Flaw.FINGERPRINT_NOT_CHECKED, EnumSet.of(ProbeCheck.KEY_REUSE_REJECTED),
            ProbeCheck.KEY_REUSE_REJECTED,
            "first 201 id pay_2; other body 201 id pay_2 Idempotent-Replayed: true; first body"
                + " again 201 id pay_2 Idempotent-Replayed: true; SDK reads the other body's answer"
                + " as: replay: the first result was returned for a different request (fingerprint"
                + " not checked)"),
        Arguments.of(Flaw.CHECK_THEN_INSERT_RACE, EnumSet.of(ProbeCheck.CONCURRENT_REQUESTS),
            ProbeCheck.CONCURRENT_REQUESTS, ": executed 8 times"),
        Arguments.of(Flaw.REPLAYS_DIFFERENT_RESULT, EnumSet.of(ProbeCheck.REPLAY),
            ProbeCheck.REPLAY,
            "first 201 id pay_1; retry 200 id pay_1 Idempotent-Replayed: true; SDK reads the retry"
                + " as: replay: the replay's status differs from the first answer's"),
        Arguments.of(Flaw.FORGETS_KEYS_AT_ONCE, EnumSet.of(ProbeCheck.REPLAY,
            ProbeCheck.KEY_REUSE_REJECTED, ProbeCheck.LOST_RESPONSE), ProbeCheck.LOST_RESPONSE,
            "; retry 201 id pay_8; again 201 id pay_9; SDK reads the retry as: final: executed again"
                + " (id pay_9 is not id pay_8)"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("flaws")
  void eachBrokenServerFailsExactlyTheChecksItBreaks(
      Flaw flaw, EnumSet<ProbeCheck> failing, ProbeCheck telling, String evidence)
      throws Exception {
    IdempotentTestServer server =
        start(IdempotentTestServer.builder().flaw(flaw).processingTime(SLOW));

    ProbeReport report =
        IdempotencyProbe.builder(server.url("/payments")).body(PAYMENT).build().run();

    assertThat(report.failedChecks()).as(report.toTable()).containsExactlyElementsOf(failing);
    assertThat(report.failed()).isTrue();
    assertThat(report.result(telling).evidence()).as("evidence of check %s", telling)
        .endsWith(evidence);
    assertThat(report.result(ProbeCheck.KEY_REQUIRED).verdict()).isEqualTo(Verdict.NOT_APPLICABLE);
    assertThat(report.result(ProbeCheck.RETENTION).verdict()).isEqualTo(Verdict.NOT_APPLICABLE);
    assertThat(server.stats().requests()).isEqualTo(report.requestsSent());
  }

  @Test
  void configuredExpectationsTheServerDoesNotMeetFail() throws Exception {
    FakeTimeSource time = new FakeTimeSource();
    // Keys are not required and never expire, though the probe was told otherwise.
    IdempotentTestServer server = start(IdempotentTestServer.builder().clock(time));

    ProbeReport report =
        IdempotencyProbe.builder(server.url("/payments"))
            .body(PAYMENT)
            .keyRequired(true)
            .retention(Duration.ofMinutes(10), AfterRetention.EXECUTED_AGAIN)
            .timeSource(time)
            .build()
            .run();

    assertThat(report.failedChecks())
        .containsExactly(ProbeCheck.KEY_REQUIRED, ProbeCheck.RETENTION);
    assertThat(report.result(ProbeCheck.KEY_REQUIRED).evidence())
        .isEqualTo("without a key: 201 id pay_5; SDK reads it as: final: executed without a key");
    assertThat(report.result(ProbeCheck.RETENTION).evidence())
        .isEqualTo("first 201 id pay_6; after PT10M: 201 id pay_6 Idempotent-Replayed: true; SDK"
            + " reads it as: replay: expected a new execution");
  }

  @Test
  void aServerThatRejectsTheFirstRequestFailsWithEvidenceAndTheProbeStops() throws Exception {
    IdempotentTestServer server =
        start(IdempotentTestServer.builder().handler((request, effect) ->
            io.github.resilienthttp.testkit.ServerResponse.json(401, "{\"error\":\"auth\"}")));

    ProbeReport report =
        IdempotencyProbe.builder(server.url("/payments")).body(PAYMENT).build().run();

    assertThat(report.result(ProbeCheck.REPLAY).evidence())
        .isEqualTo("first request 401: the probe needs a 2xx answer to a new request (check the"
            + " URL, body and headers)");
    assertThat(report.failed()).isTrue();
    assertThat(server.stats().requests()).isEqualTo(report.requestsSent());
  }

  @Test
  void theCapCoversTheWholeBatteryOrTheLowerMaxRequests() {
    HttpUrl url = HttpUrl.get("http://127.0.0.1:9/payments");

    assertThat(IdempotencyProbe.builder(url).build().plannedRequests()).isEqualTo(2 + 3 + 8 + 8);
    assertThat(IdempotencyProbe.builder(url).concurrency(2).inProgressRetries(0).build()
        .plannedRequests()).isEqualTo(2 + 3 + 2 + 3);
    // A lower cap is not refused: checks that would exceed it say "cannot tell within the cap".
    assertThat(IdempotencyProbe.builder(url).maxRequests(20).build().plannedRequests()).isEqualTo(20);
    assertThatThrownBy(() -> IdempotencyProbe.builder(url).concurrency(65).build())
        .hasMessage("concurrency must be in 2..64 but was 65");
    assertThatThrownBy(() -> IdempotencyProbe.builder(url).mismatchStatus(200).build())
        .hasMessage("mismatchStatus must be in 400..499 but was 200");
    assertThatThrownBy(() -> IdempotencyProbe.builder(url).body("{}").otherBody("{}").build())
        .hasMessage("otherBody must differ from body");
    assertThatThrownBy(() -> IdempotencyProbe.builder(HttpUrl.get("http://127.0.0.1:9/p"))
        .retention(Duration.ofHours(25), AfterRetention.REPLAYED).build())
        .hasMessage("retention must be in PT0.000000001S..PT24H but was PT25H");
  }

  @Test
  void anUnreachableServerFailsEveryCheckWithinTheCap() throws Exception {
    IdempotentTestServer gone = start(IdempotentTestServer.builder());
    HttpUrl url = gone.url("/payments");
    gone.close();

    ProbeReport report = IdempotencyProbe.builder(url).requestTimeout(Duration.ofSeconds(2))
        .inProgressRetries(0).build().run();

    assertThat(report.failedChecks()).containsExactly(ProbeCheck.REPLAY,
        ProbeCheck.KEY_REUSE_REJECTED, ProbeCheck.CONCURRENT_REQUESTS, ProbeCheck.LOST_RESPONSE);
    assertThat(report.requestsSent()).isLessThanOrEqualTo(report.requestCap());
  }

  @Test
  void resourceIdsComeFromAJsonMemberOrAHeader() {
    ProbeExchange created = new ProbeExchange(201, Headers.of("Location", "/payments/p1"),
        "{\"payment\":{\"id\":\"p\\\"1\"},\"amount\":1000,\"n\":42}", null);

    assertThat(ResourceIdExtractor.jsonField("id").resourceId(created)).contains("p\"1");
    assertThat(ResourceIdExtractor.jsonField("n").resourceId(created)).contains("42");
    assertThat(ResourceIdExtractor.jsonField("missing").resourceId(created)).isEqualTo(
        Optional.empty());
    assertThat(ResourceIdExtractor.header("Location").resourceId(created)).contains("/payments/p1");
  }

  @Test
  void theReportRendersAsATableAndAsJson() {
    ProbeReport report = new ProbeReport("POST", "http://127.0.0.1:1/p", "Idempotency-Key", 21,
        3, List.of(
            new CheckResult(ProbeCheck.REPLAY, Verdict.PASS, "first 201 id \"a\"", 2),
            new CheckResult(ProbeCheck.KEY_REQUIRED, Verdict.NOT_APPLICABLE, "not configured", 0),
            new CheckResult(ProbeCheck.RETENTION, Verdict.FAIL, "late 201", 1)));

    assertThat(report.toJson()).isEqualTo("{\"method\":\"POST\",\"url\":\"http://127.0.0.1:1/p\","
        + "\"keyHeader\":\"Idempotency-Key\",\"requestCap\":21,\"requestsSent\":3,\"passed\":false,"
        + "\"result\":\"FAIL\",\"checks\":[{\"number\":1,\"name\":\"REPLAY\",\"title\":\"retry with the same key and"
        + " body is replayed\",\"verdict\":\"PASS\",\"requests\":2,\"evidence\":\"first 201 id"
        + " \\\"a\\\"\"},{\"number\":5,\"name\":\"KEY_REQUIRED\",\"title\":\"request without a key"
        + " is rejected\",\"verdict\":\"NOT_APPLICABLE\",\"requests\":0,\"evidence\":\"not"
        + " configured\"},{\"number\":6,\"name\":\"RETENTION\",\"title\":\"retry after the"
        + " retention behaves as documented\",\"verdict\":\"FAIL\",\"requests\":1,"
        + "\"evidence\":\"late 201\"}]}\n");
    assertThat(report.toTable())
        .contains("sent 3 requests (at most 21), all to this URL")
        .contains("n/a")
        .endsWith("result: FAIL (1 failed, 1 passed, 0 cannot tell, 1 not applicable)\n");
  }

  @Test
  void theOtherBodyOfCheckTwoAddsAMember() {
    assertThat(IdempotencyProbe.variantOf("{\"a\":1}"))
        .isEqualTo("{\"probe_variant\":\"other\",\"a\":1}");
    assertThat(IdempotencyProbe.variantOf(" { } ")).isEqualTo("{\"probe_variant\":\"other\"} ");
    assertThat(IdempotencyProbe.variantOf("a=1")).isEqualTo("a=1\nprobe_variant=other");
  }
}
