package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationResult;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Configurations that look legal but nest or overflow: wrapping the SDK's own client, durations at the
 * edge of {@code long} nanoseconds, and the retry token of a retry that never ran.
 */
@Timeout(20)
class WrapAndOverflowTest {
  private final AtomicInteger requests = new AtomicInteger();
  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void startServer() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        int n = requests.incrementAndGet();
        return switch (request.getUrl().encodedPath()) {
          case "/always-503" -> new MockResponse.Builder().code(503).body("busy").build();
          case "/503-then-200" -> n == 1 ? new MockResponse.Builder().code(503).build()
              : new MockResponse.Builder().code(200).body("ok").build();
          case "/drop-then-200" -> n == 1 ? new MockResponse.Builder().code(200)
              .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build()
              : new MockResponse.Builder().code(200).body("ok").build();
          default -> new MockResponse.Builder().code(200).body("ok").build();
        };
      }
    });
    server.start();
    okHttp = new OkHttpClient();
  }

  @AfterEach
  void stop() {
    okHttp.dispatcher().cancelAll();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private Request get(String path) {
    return new Request.Builder().url(server.url(path)).build();
  }

  // (a) -------------------------------------------------------------------------------------------

  @Test
  void wrappingTheSdksOwnClientIsRejectedWithAMessageThatNamesTheFix() {
    ResilientHttpClient inner = ResilientHttpClient.wrap(okHttp).build();

    assertThatThrownBy(() -> ResilientHttpClient.wrap(inner.okHttpClient()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("wrappedClient()");
  }

  @Test
  void ifWrappingTheSdksClientWereAllowedItWouldNestTwoRetryLoops() throws Exception {
    AtomicInteger ended = new AtomicInteger();
    OperationListener ends = new OperationListener() {
      @Override
      public void operationEnded(OperationInfo operation, OperationResult result) {
        ended.incrementAndGet();
      }
    };
    RetryPolicy threeAttempts = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
        .deadline(Duration.ofSeconds(10)).build();
    ResilientHttpClient inner = ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited()).retryPolicy(threeAttempts).addListener(ends).build();
    ResilientHttpClient outer;
    try {
      outer = ResilientHttpClient.wrap(inner.okHttpClient()).noCircuitBreaker()
          .retryBudget(RetryBudget.unlimited()).retryPolicy(threeAttempts).addListener(ends).build();
    } catch (IllegalArgumentException rejected) {
      return; // the fix: see the test above
    }
    Operation op = outer.operation(get("/always-503"));
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    int serverRequests = requests.get();
    SoftAssertions.assertSoftly(softly -> {
      softly.assertThat(ended.get()).as("operationEnded events of one operation").isEqualTo(1);
      softly.assertThat(op.attempts()).as("attempts() for %d server requests", serverRequests)
          .isEqualTo(serverRequests);
    });
  }

  // (b) -------------------------------------------------------------------------------------------

  private ResilientHttpClient hugeBackoffClient() {
    Backoff forever = (retry, random) -> Duration.ofSeconds(Long.MAX_VALUE);
    return ResilientHttpClient.wrap(okHttp).noCircuitBreaker().retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(forever)
            .deadline(Duration.ofSeconds(2)).build())
        .build();
  }

  /**
   * After a 503 (a response to return) and after a dropped connection (an exception: the SDK then
   * throws, and describes the wait it would not make).
   */
  @ParameterizedTest(name = "{0}, async {1}")
  @CsvSource({"/503-then-200, false", "/503-then-200, true", "/drop-then-200, false",
      "/drop-then-200, true"})
  void aBackoffOfLongMaxValueSecondsEndsTheOperationNormally(String path, boolean async)
      throws Exception {
    ResilientHttpClient client = hugeBackoffClient();
    long start = System.nanoTime();
    Throwable thrown = null;
    int status = -1;
    try {
      Operation op = client.operation(get(path));
      try (Response r = async ? op.executeAsync().get(5, TimeUnit.SECONDS) : op.execute()) {
        status = r.code();
      }
    } catch (ExecutionException e) {
      thrown = e.getCause();
    } catch (Throwable t) {
      thrown = t;
    }
    assertNormalEnd(thrown);
    if (thrown == null) {
      assertThat(status).as("the last response, returned when the wait cannot fit").isEqualTo(503);
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    assertThat(requests.get()).as("no retry: the wait never fits the deadline").isEqualTo(1);
  }

  private static void assertNormalEnd(Throwable thrown) {
    if (thrown != null) {
      assertThat(thrown).as("a normal failure (e.g. deadline exceeded), not an overflow: %s", thrown)
          .isInstanceOf(OperationFailure.class)
          .isNotInstanceOf(ArithmeticException.class);
    }
  }

  // (c) -------------------------------------------------------------------------------------------

  @Test
  void aBulkheadWithAThreeHundredYearMaxWaitBuildsAndAdmits() throws Exception {
    BulkheadConfig config = BulkheadConfig.custom().maxConcurrentCalls(1)
        .maxWaitDuration(Duration.ofDays(365L * 300)).build();

    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).bulkhead(config).build();

    try (Response r = client.operation(get("/ok")).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
  }

  // (d) -------------------------------------------------------------------------------------------

  /** A bucket that starts full and refills from nothing: the first attempt's deposit is dropped. */
  private static RetryBudget fullBucket() {
    return RetryBudget.tokenBucketBuilder().maxTokens(10).minRetriesPerSecond(0).retryRatio(0.5)
        .build();
  }

  @Test
  void aRetryCancelledDuringItsBackoffGivesItsTokenBack() throws Exception {
    RetryBudget budget = fullBucket();
    double before = budget.availableTokens();
    CountDownLatch waiting = new CountDownLatch(1);
    AtomicReference<Double> whileWaiting = new AtomicReference<>();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .retryBudget(budget)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(500)))
            .deadline(Duration.ofSeconds(10)).build())
        .addListener(new OperationListener() {
          @Override
          public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
              boolean fromRetryAfter) {
            whileWaiting.set(budget.availableTokens());
            waiting.countDown();
          }
        })
        .build();
    CompletableFuture<Response> future = client.operation(get("/503-then-200")).executeAsync();
    assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
    future.cancel(true);

    await().atMost(Duration.ofSeconds(2)).until(future::isDone);
    Thread.sleep(700); // past the backoff: nothing more may happen
    assertThat(whileWaiting.get()).as("tokens while waiting: the retry holds one").isEqualTo(before - 1);
    assertThat(budget.availableTokens()).as("tokens after the cancelled retry").isEqualTo(before);
    assertThat(requests.get()).isEqualTo(1);
  }

  @Test
  void aBlockingRetryCancelledDuringItsBackoffGivesItsTokenBack() throws Exception {
    RetryBudget budget = fullBucket();
    double before = budget.availableTokens();
    AtomicReference<Operation> current = new AtomicReference<>();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .retryBudget(budget)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(300)))
            .deadline(Duration.ofSeconds(10)).build())
        .addListener(new OperationListener() {
          @Override
          public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
              boolean fromRetryAfter) {
            current.get().cancel(); // while the retry holds its token, before its wait
          }
        })
        .build();
    Operation op = client.operation(get("/503-then-200"));
    current.set(op);
    Throwable thrown = null;
    try (Response r = op.execute()) {
      thrown = new AssertionError("returned " + r.code());
    } catch (IOException e) {
      thrown = e;
    }

    assertThat(thrown).isInstanceOf(OperationFailure.class);
    assertThat(((OperationFailure) thrown).reason()).isEqualTo("canceled");
    assertThat(budget.availableTokens()).as("tokens after the cancelled retry").isEqualTo(before);
    assertThat(requests.get()).isEqualTo(1);
  }

  @Test
  void aRetryRejectedByAnOpenBreakerGivesItsTokenBack() throws Exception {
    RetryBudget budget = fullBucket();
    double before = budget.availableTokens();
    AtomicReference<ResilientHttpClient> self = new AtomicReference<>();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryBudget(budget)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(50)))
            .deadline(Duration.ofSeconds(10)).build())
        .addListener(new OperationListener() {
          @Override
          public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
              boolean fromRetryAfter) {
            // The breaker opens while the retry waits: the retry will be rejected before sending.
            self.get().circuitBreakerFor(server.url("/")).orElseThrow().transitionToForcedOpenState();
          }
        })
        .build();
    self.set(client);
    Throwable thrown = null;
    try (Response r = client.operation(get("/503-then-200")).execute()) {
      thrown = new AssertionError("returned " + r.code());
    } catch (IOException e) {
      thrown = e;
    }

    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/")).orElseThrow();
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.FORCED_OPEN);
    assertThat(thrown).as("the retry was rejected").isInstanceOf(OperationFailure.class);
    assertThat(((OperationFailure) thrown).reason()).isEqualTo("circuit-breaker-open");
    assertThat(budget.availableTokens()).as("tokens after the rejected retry").isEqualTo(before);
    assertThat(requests.get()).isEqualTo(1);
  }
}
