package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Answers read in the operation's context, on real sockets: a 409 to a retry after an attempt that may
 * have reached the server is about that attempt; a replay is never retried; mismatches in other words.
 */
class AnswerInContextTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private MockWebServer server;
  private OkHttpClient okHttp;
  private final List<String> reasons = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient.Builder().build();
  }

  @AfterEach
  void tearDown() {
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client(int maxAttempts, ResponseClassifier classifier) {
    return ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource()).random(new SplittableRandom(1))
        .retryBudget(RetryBudget.unlimited()).noCircuitBreaker().classifier(classifier)
        .acceptUnsignedResumeTokens(List.of(server.url("/"))) // the resume test's hand-made token
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofMillis(100))).build())
        .addListener(new OperationListener() {
          @Override
          public void attemptEnded(OperationInfo op, int attempt, int status, IOException failure,
              Decision decision, Duration duration) {
            reasons.add(status + " " + decision.reason());
          }
        }).build();
  }

  private ResilientHttpClient client(int maxAttempts) {
    return client(maxAttempts, ResponseClassifier.defaults());
  }

  private Request charge() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  private static MockResponse lostAfterProcessing() {
    return new MockResponse.Builder().onResponseStart(new SocketEffect.CloseSocket()).build();
  }

  private static MockResponse bareConflict() {
    return new MockResponse.Builder().code(409).setHeader("Content-Type", "text/html")
        .body("<pre>Conflict</pre>").build();
  }

  @Test
  void aFirstAttemptsBare409StaysFinal() throws Exception {
    server.enqueue(bareConflict());
    try (Response r = client(3).operation(charge()).execute()) {
      assertThat(r.code()).isEqualTo(409);
    }
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(reasons).containsExactly("409 status-409");
  }

  @Test
  void aBare409AfterANotProcessedAnswerStaysFinal() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build()); // refused: not processed
    server.enqueue(bareConflict());
    try (Response r = client(3).operation(charge()).execute()) {
      assertThat(r.code()).isEqualTo(409);
    }
    assertThat(reasons).containsExactly("503 status-503", "409 status-409");
  }

  @Test
  void aBare409ToARetryAfterALostResponseIsTheFirstAttemptInProgressAndIsRetried() throws Exception {
    server.enqueue(lostAfterProcessing());
    server.enqueue(bareConflict());
    server.enqueue(new MockResponse.Builder().code(201).body("{\"id\":\"pay_1\"}").build());
    Operation op = client(4).operation(charge());
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(op.attempts()).isEqualTo(3);
    assertThat(reasons).containsExactly("-1 outcome-unknown", "409 idempotency-key-in-progress-or-replay",
        "201 status-201");
    String key = server.takeRequest().getHeaders().get("Idempotency-Key");
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(key);
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(key);
  }

  @Test
  void endingOnA409ReplayOfTheOriginalSuccessIsOutcomeUnknownWithTheAnswerAttached() throws Exception {
    server.enqueue(lostAfterProcessing());
    // A middleware that answers every replay with 409 and the original body.
    for (int i = 0; i < 2; i++) {
      server.enqueue(new MockResponse.Builder().code(409).setHeader("Content-Type", "application/json")
          .body("{\"id\":\"pay_1\"}").build());
    }
    Operation op = client(3).operation(charge());
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(OutcomeUnknownAnswerException.class, e -> {
      assertThat(e.answerStatus()).isEqualTo(409);
      assertThat(new String(e.answerBody(), StandardCharsets.UTF_8)).isEqualTo("{\"id\":\"pay_1\"}");
      assertThat(e.answerHeaders().get("Content-Type")).isEqualTo("application/json");
      assertThat(e.reason()).isEqualTo("attempts-exhausted");
      assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
    });
    assertThat(server.getRequestCount()).isEqualTo(3);
  }

  @Test
  void anInProgress409WithRetryAfterThatOutlastsTheAttemptsAfterALostResponseIsOutcomeUnknown() throws Exception {
    server.enqueue(lostAfterProcessing());
    server.enqueue(new MockResponse.Builder().code(409).setHeader("Retry-After", "1").build());
    assertThatThrownBy(() -> client(2).operation(charge()).execute())
        .isInstanceOf(OutcomeUnknownAnswerException.class);
    assertThat(reasons).containsExactly("-1 outcome-unknown", "409 idempotency-key-in-progress");
  }

  @Test
  void aReplayedServerErrorIsTheRecordedOutcomeAndIsNeverRetried() throws Exception {
    server.enqueue(new MockResponse.Builder().code(500).setHeader("Idempotent-Replayed", "true").body("boom").build());
    server.enqueue(new MockResponse.Builder().code(502).setHeader("X-Idempotency-Replayed", "true").build());
    try (Response r = client(4).operation(charge()).execute()) {
      assertThat(r.code()).isEqualTo(500);
      assertThat(r.body().string()).isEqualTo("boom");
    }
    try (Response r = client(4).operation(charge()).execute()) {
      assertThat(r.code()).isEqualTo(502);
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(reasons).containsExactly("500 idempotent-replay", "502 idempotent-replay");
  }

  @Test
  void aReplayedServerErrorIsNotRetriedOnResumeEither() throws Exception {
    // A token saved before acceptance was seen: resume re-submits with its key, and the server's
    // recorded 500 for that key is the outcome, not a reason to submit again.
    server.enqueue(new MockResponse.Builder().code(500).setHeader("Idempotent-Replayed", "true").body("boom").build());
    server.enqueue(new MockResponse.Builder().code(201).body("{\"id\":\"second\"}").build());
    ResumeToken token = ResumeToken.forSubmit("POST", server.url("/payments"), "order-7", true,
        new FakeTimeSource().now()); // the client's clock: a fresh key
    AsyncOperationPolicy policy = AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(100)).jitter(0)
        .deadline(Duration.ofSeconds(30)).build();
    try (Response r = client(4).resume(token, charge(), policy)) {
      assertThat(r.code()).isEqualTo(500);
      assertThat(r.header("Idempotent-Replayed")).isEqualTo("true");
      assertThat(r.body().string()).isEqualTo("boom");
    }
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo("order-7");
    assertThat(reasons).containsExactly("500 idempotent-replay");
  }

  @Test
  void mismatchesIn417OrAPlain422AreReadAsKeyMismatchAndOtherStatusesWhenConfigured() throws Exception {
    server.enqueue(new MockResponse.Builder().code(417).setHeader("Content-Type", "text/plain")
        .body("Idempotency key reused with a different payload").build());
    server.enqueue(new MockResponse.Builder().code(422).setHeader("Content-Type", "text/plain")
        .body("This idempotency key was already used").build());
    server.enqueue(new MockResponse.Builder().code(422).setHeader("Content-Type", "text/plain")
        .body("amount must be positive").build());
    server.enqueue(new MockResponse.Builder().code(400).setHeader("Content-Type", "text/plain")
        .body("idempotency key already used for another request").build());
    for (int i = 0; i < 3; i++) {
      try (Response r = client(3).operation(charge()).execute()) {
        assertThat(r.code()).isBetween(417, 422);
      }
    }
    try (Response r = client(3, KeyMismatchClassifier.statuses(400)).operation(charge()).execute()) {
      assertThat(r.code()).isEqualTo(400);
    }
    assertThat(reasons).containsExactly("417 idempotency-key-mismatch", "422 idempotency-key-mismatch",
        "422 status-422", "400 idempotency-key-mismatch");
    assertThatThrownBy(() -> KeyMismatchClassifier.statuses(500)).hasMessage("statuses must be in 400..499 but was 500");
  }
}
