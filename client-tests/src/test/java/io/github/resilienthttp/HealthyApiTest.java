package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A healthy API's client-side answers (ordinary 409 conflicts, 422 validation errors, 429 rate
 * limiting) are final or retried as they say, and never open the breaker for the whole host.
 * On HTTP/1.1 and HTTP/2.
 */
class HealthyApiTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private MockWebServer server;
  private OkHttpClient okHttp;
  private final AtomicInteger posts = new AtomicInteger();

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient start(String protocol, MockResponse answerToPost) throws IOException {
    Protocol p = Protocol.get(protocol);
    server = new MockWebServer();
    server.setProtocols(List.of(p));
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        if (request.getUrl().encodedPath().equals("/health")) {
          return new MockResponse.Builder().code(200).body("ok").build();
        }
        posts.incrementAndGet();
        return answerToPost;
      }
    });
    server.start();
    okHttp = new OkHttpClient.Builder().protocols(List.of(p)).build();
    return ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
        .random(new SplittableRandom(1))
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .retryBudget(RetryBudget.unlimited())
        .build();
  }

  private Request signUp(int i) {
    return new Request.Builder().url(server.url("/users"))
        .post(RequestBody.create("{\"email\":\"a" + i + "@example.com\"}", JSON)).build();
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void ordinaryConflictsAreFinalAndNeverOpenTheBreaker(String protocol) throws Exception {
    ResilientHttpClient client = start(protocol, new MockResponse.Builder().code(409)
        .addHeader("Content-Type", "application/json")
        .body("{\"error\":\"email already taken\"}").build());
    for (int i = 0; i < 100; i++) {
      Operation op = client.operation(signUp(i));
      try (Response r = op.execute()) {
        assertThat(r.code()).isEqualTo(409);
        assertThat(r.body().string()).isEqualTo("{\"error\":\"email already taken\"}");
      }
      assertThat(op.attempts()).as("operation %d", i).isEqualTo(1);
      assertThat(op.idempotencyKeySent()).isTrue();
    }
    assertThat(posts.get()).isEqualTo(100);
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/")).orElseThrow();
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
    try (Response health = client.operation(
        new Request.Builder().url(server.url("/health")).build()).execute()) {
      assertThat(health.code()).isEqualTo(200);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void validationErrorsAreFinalAndNotAKeyMismatch(String protocol) throws Exception {
    ResilientHttpClient client = start(protocol, new MockResponse.Builder().code(422)
        .addHeader("Content-Type", "application/problem+json")
        .body("{\"type\":\"https://api.example/validation\",\"title\":\"email is invalid\"}")
        .build());
    AtomicInteger mismatches = new AtomicInteger();
    ResilientHttpClient listening = client.newBuilder().addListener(new OperationListener() {
      @Override
      public void attemptEnded(OperationInfo operation, int attempt, int statusCode,
          IOException failure, Decision decision, Duration duration) {
        if (decision.reason().equals("idempotency-key-mismatch")) {
          mismatches.incrementAndGet();
        }
      }
    }).build();
    for (int i = 0; i < 30; i++) {
      try (Response r = listening.operation(signUp(i)).execute()) {
        assertThat(r.code()).isEqualTo(422);
      }
    }
    assertThat(mismatches.get()).isZero();
    assertThat(listening.circuitBreakerFor(server.url("/")).orElseThrow().getState())
        .isEqualTo(CircuitBreaker.State.CLOSED);
  }

  /**
   * 429 is the server protecting itself from this client, not the server failing: it is retried
   * (after {@code Retry-After}) but is not a breaker failure, so one client's rate limit does not
   * cut off its calls to every other endpoint of the host.
   */
  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void rateLimitingIsRetriedButNeverOpensTheBreaker(String protocol) throws Exception {
    ResilientHttpClient client = start(protocol, new MockResponse.Builder().code(429)
        .addHeader("Retry-After", "1").body("slow down").build());
    for (int i = 0; i < 30; i++) {
      Operation op = client.operation(signUp(i));
      try (Response r = op.execute()) {
        assertThat(r.code()).isEqualTo(429);
      }
      assertThat(op.attempts()).isEqualTo(3);
    }
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/")).orElseThrow();
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void conflictThatSaysTheKeyIsInUseIsRetried(String protocol) throws Exception {
    ResilientHttpClient client = start(protocol, new MockResponse.Builder().code(409)
        .addHeader("Content-Type", "application/json")
        .body("{\"error\":{\"code\":\"idempotency_key_in_use\",\"type\":\"invalid_request_error\"}}")
        .build());
    Operation op = client.operation(signUp(1));
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(409);
    }
    assertThat(op.attempts()).isEqualTo(3);
    assertThat(client.circuitBreakerFor(server.url("/")).orElseThrow().getMetrics()
        .getNumberOfFailedCalls()).isZero();
  }
}
