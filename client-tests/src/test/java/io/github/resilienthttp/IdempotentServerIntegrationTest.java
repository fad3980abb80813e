package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.Effect;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.FaultMix;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The SDK against the testkit's idempotent payments server: effects, replays, in-progress, leaks. */
class IdempotentServerIntegrationTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private IdempotentTestServer server;
  private OkHttpClient okHttp;
  private FakeTimeSource time;

  @BeforeEach
  void setUp() throws IOException {
    server = IdempotentTestServer.builder().build().start();
    okHttp = new OkHttpClient.Builder().build();
    time = new FakeTimeSource();
  }

  @AfterEach
  void tearDown() {
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client(int maxAttempts) {
    return ResilientHttpClient.wrap(okHttp).timeSource(time).random(new SplittableRandom(3))
        .retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts)
            .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(10), Duration.ofMillis(200)))
            .maxRetryAfter(Duration.ofSeconds(5)).build())
        .build();
  }

  private Request charge(String order) {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"" + order + "\",\"amount\":1000}", JSON)).build();
  }

  @Test
  void lostResponseIsRetriedAndTheServerReplaysTheRecordedResultWithOneEffect() throws Exception {
    server.script(Fault.processThenDrop());
    ResilientHttpClient client = client(3);
    Operation op = client.operation(charge("order-1"));
    String firstBody;
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(r.header("Idempotent-Replayed")).isEqualTo("true");
      firstBody = r.body().string();
    }
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.effectCountForKey(op.idempotencyKey())).isEqualTo(1);
    assertThat(server.stats().replays()).isEqualTo(1);
    assertThat(server.keysSeen()).containsExactly(op.idempotencyKey(), op.idempotencyKey());
    assertThat(firstBody).contains("\"effect\":1");
    assertThat(op.attempts()).isEqualTo(2).isEqualTo(server.stats().requests());
  }

  @Test
  void withoutAKeyTheSameFaultIsOutcomeUnknownNotADuplicateCharge() throws Exception {
    server.script(Fault.processThenDrop());
    Operation op = client(3).operation(charge("order-1")).sendIdempotencyKey(false);
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(OutcomeUnknownException.class, e -> {
      assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
      assertThat(e.idempotencyKeySent()).isFalse();
    });
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(1);
  }

  @Test
  void resumingWithTheSavedKeyAfterOutcomeUnknownDoesNotChargeTwice() throws Exception {
    server.script(Fault.processThenDrop(), Fault.processThenDrop(), Fault.processThenDrop());
    Operation first = client(3).operation(charge("order-9"));
    assertThatThrownBy(first::execute).isInstanceOf(OutcomeUnknownException.class);
    String saved = first.idempotencyKey();

    try (Response r = client(3).operation(charge("order-9")).idempotencyKey(saved).execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(r.header("Idempotent-Replayed")).isEqualTo("true");
    }
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.keysSeen()).containsOnly(saved).hasSize(4);
  }

  @Test
  void inProgressConflictIsRetriedAndReportedToListeners() throws Exception {
    server.processingTime(Duration.ofMillis(300));
    List<String> events = new ArrayList<>();
    ResilientHttpClient client = client(20).newBuilder()
        .timeSource(TimeSource.system())
        .addListener(new OperationListener() {
          @Override
          public void inProgress(OperationInfo operation, int attempt) {
            synchronized (events) {
              events.add("in-progress#" + attempt);
            }
          }

          @Override
          public void replayDetected(OperationInfo operation, int attempt) {
            synchronized (events) {
              events.add("replay#" + attempt);
            }
          }
        }).build();
    String key = IdempotencyKeyPolicy.newKey();
    // A first request with the key is still being processed when a second one arrives.
    Thread first = new Thread(() -> {
      try {
        okHttp.newCall(charge("order-5").newBuilder().header("Idempotency-Key", key).build())
            .execute().close();
      } catch (IOException ignored) {
        // the assertion below is about the second operation
      }
    });
    first.start();
    org.awaitility.Awaitility.await().until(() -> server.stats().inFlight() == 1);
    Operation second = client.operation(charge("order-5")).idempotencyKey(key);
    try (Response r = second.execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(r.header("Idempotent-Replayed")).isEqualTo("true");
    }
    first.join();
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().inProgress()).isGreaterThanOrEqualTo(1);
    assertThat(events).contains("in-progress#1").last().asString().startsWith("replay#");
  }

  @Test
  void aNotSentFailureAfterAnAttemptThatReachedTheServerIsStillOutcomeUnknown() throws Exception {
    server.script(Fault.processThenDrop());
    AtomicInteger calls = new AtomicInteger();
    // From the second attempt on, every connection fails before anything is written.
    OkHttpClient refusing = okHttp.newBuilder().addInterceptor(chain -> {
      if (calls.incrementAndGet() > 1) {
        throw new java.net.ConnectException("refused");
      }
      return chain.proceed(chain.request());
    }).build();
    ResilientHttpClient client = ResilientHttpClient.wrap(refusing).timeSource(time)
        .retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build()).build();
    Operation op = client.operation(charge("order-d1"));
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(OutcomeUnknownException.class, e -> {
      assertThat(e.reason()).isEqualTo("attempts-exhausted");
      assertThat(e.attempts()).isEqualTo(3);
      assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
    });
    assertThat(server.stats().effects()).isEqualTo(1);
  }

  @Test
  void aBreakerOpeningAfterAnAttemptThatReachedTheServerReportsOutcomeUnknown() throws Exception {
    server.script(Fault.processThenDrop());
    io.github.resilience4j.circuitbreaker.CircuitBreaker breaker =
        io.github.resilience4j.circuitbreaker.CircuitBreaker.of("one-strike",
            io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.custom()
                .slidingWindowSize(1).minimumNumberOfCalls(1).failureRateThreshold(50)
                .waitDurationInOpenState(Duration.ofMinutes(1)).build());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(time)
        .retryBudget(RetryBudget.unlimited()).circuitBreaker(breaker)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build()).build();
    Operation op = client.operation(charge("order-d1b"));
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(OutcomeUnknownException.class, e -> {
      assertThat(e.reason()).isEqualTo("circuit-breaker-open");
      assertThat(e.getSuppressed()).singleElement().isInstanceOf(CircuitBreakerOpenException.class);
    });
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(1);
  }

  @Test
  void aStructuredStringKeyOnTheRequestResumesAsTheSameKey() throws Exception {
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(time)
        .idempotencyKeys(IdempotencyKeyPolicy.builder()
            .format(IdempotencyKeyPolicy.Format.STRUCTURED_STRING).build()).build();
    Operation first = client.operation(charge("order-sf").newBuilder()
        .header("Idempotency-Key", "\"abc\"").build());
    assertThat(first.idempotencyKey()).isEqualTo("abc");
    first.execute().close();
    client.operation(charge("order-sf")).idempotencyKey(first.idempotencyKey()).execute().close();
    assertThat(server.keysSeen()).containsExactly("\"abc\"", "\"abc\"");
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().replays()).isEqualTo(1);
  }

  @Test
  void cancelAfterExecuteReturnedLeavesTheBodyReadable() throws Exception {
    server.script(Fault.throttleBody(2048, Duration.ofMillis(10)));
    Operation op = client(3).operation(charge("order-read"));
    try (Response r = op.execute()) {
      op.cancel();
      assertThat(r.body().string()).contains("\"effect\":1");
    }
  }

  @Test
  void aListenerThrowingAnErrorBreaksNeitherTheOperationNorThePool() throws Exception {
    server.script(Fault.status(503));
    ResilientHttpClient client = client(3).newBuilder().addListener(new OperationListener() {
      @Override
      public void attemptEnded(OperationInfo operation, int attempt, int statusCode,
          IOException failure, Decision decision, Duration duration) {
        throw new AssertionError("a test listener failing");
      }
    }).build();
    try (Response r = client.operation(charge("order-listener")).execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    try (Response r = client.operation(charge("order-listener-2")).executeAsync()
        .get(10, java.util.concurrent.TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(okHttp.connectionPool().connectionCount())
        .isEqualTo(okHttp.connectionPool().idleConnectionCount());
  }

  @Test
  void theDefaultBreakerIgnoresPartialFailureAndOpensInAnOutage() throws Exception {
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(time)
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build()).build();
    io.github.resilience4j.circuitbreaker.CircuitBreaker breaker =
        client.circuitBreakerFor(server.url("/")).orElseThrow();
    assertThat(breaker.getCircuitBreakerConfig().getFailureRateThreshold()).isEqualTo(80f);
    assertThat(breaker.getCircuitBreakerConfig().getSlidingWindowSize()).isEqualTo(50);

    // A steady 20 % of 503s: retries absorb them, and the breaker stays closed.
    server.randomFaults(11, FaultMix.builder().status503(0.2).build());
    for (int i = 0; i < 400; i++) {
      try (Response r = client.operation(charge("partial-" + i)).execute()) {
        assertThat(r.code()).isIn(201, 503);
      }
    }
    assertThat(breaker.getState()).isEqualTo(io.github.resilience4j.circuitbreaker.CircuitBreaker.State.CLOSED);

    // A total outage: it opens after its window, and then nothing more is sent.
    server.reset();
    server.randomFaults(12, FaultMix.builder().status503(1.0).build());
    int rejected = 0;
    for (int i = 0; i < 40; i++) {
      try (Response r = client.operation(charge("outage-" + i)).execute()) {
        assertThat(r.code()).isEqualTo(503);
      } catch (CircuitBreakerOpenException e) {
        rejected++;
      }
    }
    assertThat(breaker.getState()).isEqualTo(io.github.resilience4j.circuitbreaker.CircuitBreaker.State.OPEN);
    assertThat(rejected).isGreaterThan(0);
    assertThat(server.stats().requests()).isLessThanOrEqualTo(50);
  }

  @Test
  void keyReusedWithAnotherPayloadIsPermanent() throws Exception {
    ResilientHttpClient client = client(3);
    Operation op = client.operation(charge("order-1"));
    op.execute().close();
    try (Response r = client.operation(charge("order-2")).idempotencyKey(op.idempotencyKey()).execute()) {
      assertThat(r.code()).isEqualTo(422);
    }
    assertThat(server.stats().mismatches()).isEqualTo(1);
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(2);
  }

  @Test
  void hundredsOfFaultedOperationsLeakNoConnectionAndChargeEachOrderOnce() throws Exception {
    server.randomFaults(7, FaultMix.builder().lostResponse(0.15).status503(0.15).status429(0.05)
        .status500(0.1).dropBeforeProcessing(0.1).build());
    AtomicInteger attemptsByListener = new AtomicInteger();
    ResilientHttpClient client = client(6).newBuilder().addListener(new OperationListener() {
      @Override
      public void attemptStarted(OperationInfo operation, int attempt) {
        attemptsByListener.incrementAndGet();
      }
    }).build();
    int succeeded = 0;
    int n = 300;
    for (int i = 0; i < n; i++) {
      try (Response r = client.operation(charge("order-" + i)).execute()) {
        if (r.code() == 201) {
          succeeded++;
        }
      } catch (OutcomeUnknownException e) {
        assertThat(e.idempotencyKeySent()).isTrue();
      }
    }
    assertThat(server.duplicateEffects(Effect::body)).isZero();
    assertThat(succeeded).isGreaterThan(n * 9 / 10);
    assertThat(server.stats().requests()).isEqualTo(attemptsByListener.get());
    assertThat(okHttp.connectionPool().connectionCount())
        .isEqualTo(okHttp.connectionPool().idleConnectionCount());
  }
}
