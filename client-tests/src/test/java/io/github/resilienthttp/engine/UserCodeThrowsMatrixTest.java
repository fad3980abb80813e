package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.AsyncOperationPolicy;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationResult;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.assertj.core.api.SoftAssertions;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * User code that throws, at every extension point, on every way of running a request: the operation
 * still ends (never hangs), and the bulkhead permit, the breaker and the connection pool are left as a
 * clean operation leaves them, so that the next operation runs normally.
 *
 * <p>Server script per case: the first request to {@code /flaky} answers 503 (so backoff, budget and
 * {@code retryScheduled} run), every later one 200. The throwing code is armed for the case and
 * disarmed for the follow-up operation.
 *
 * <p>Two things OkHttp itself does are not held against the SDK: its {@code AsyncCall} rethrows on
 * the dispatcher thread what an interceptor or listener threw (after failing the call), and
 * {@code enqueue()} calls {@code EventListener.callStart} on the caller's thread, so a throwing
 * {@code callStart} reaches the caller of a plain {@code enqueue()} as it would on any OkHttpClient.
 */
@Timeout(20)
class UserCodeThrowsMatrixTest {
  private static final Duration DEADLINE = Duration.ofSeconds(3);
  /** How long past the deadline an operation may take to end. */
  private static final Duration SLACK = Duration.ofSeconds(2);
  private static final HedgingPolicy HEDGE = HedgingPolicy.fixedDelay(Duration.ofMillis(50));
  private static final AsyncOperationPolicy WAIT = AsyncOperationPolicy.builder()
      .minPollInterval(Duration.ofMillis(5)).maxPollInterval(Duration.ofMillis(20)).jitter(0).build();

  enum Point {
    CLASSIFIER, LISTENER_ATTEMPT_STARTED, LISTENER_ATTEMPT_ENDED, LISTENER_RETRY_SCHEDULED,
    LISTENER_OPERATION_ENDED, BACKOFF, BUDGET, APP_INTERCEPTOR, NETWORK_INTERCEPTOR,
    EVENT_CALL_START, EVENT_RESPONSE_HEADERS_END,
    /** RUNTIME: a shut-down executor (RejectedExecutionException); ERROR: schedule throws. */
    SCHEDULER
  }

  enum Path {
    EXECUTE, EXECUTE_ASYNC, PLAIN_EXECUTE, PLAIN_ENQUEUE,
    /** Hedged (a copy after 50 ms; the 503 starts the next copy at once). */
    HEDGED_EXECUTE, HEDGED_ASYNC,
    /** A 202 wait: the submit, then polls of {@code /job/status} (the first poll a 503). */
    AWAIT, AWAIT_ASYNC;

    boolean polls() {
      return this == AWAIT || this == AWAIT_ASYNC;
    }
  }

  enum Kind { RUNTIME, ERROR, OUT_OF_MEMORY }

  /** An Error that user code throws: not a VirtualMachineError, so nothing may pass it through. */
  static final class UserCodeError extends Error {
    private static final long serialVersionUID = 1L;

    UserCodeError(String message) {
      super(message);
    }
  }

  private final AtomicBoolean armed = new AtomicBoolean();
  private final AtomicInteger flakyRequests = new AtomicInteger();
  private final AtomicInteger operationsStarted = new AtomicInteger();
  private final AtomicInteger operationsEnded = new AtomicInteger();
  private final ExecutorService callers = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "matrix-caller");
    t.setDaemon(true);
    return t;
  });
  private final ScheduledThreadPoolExecutor working = new ScheduledThreadPoolExecutor(1);
  private final ScheduledThreadPoolExecutor dead = new ScheduledThreadPoolExecutor(1);
  private MockWebServer server;
  private OkHttpClient okHttp;

  private Point point;
  private Kind kind;

  @BeforeEach
  void startServer() throws IOException {
    // OkHttp's AsyncCall rethrows what an interceptor or listener threw on its dispatcher thread, after
    // failing the call: that is OkHttp's behaviour, not the SDK's, so it must not fail the awaits.
    Awaitility.doNotCatchUncaughtExceptionsByDefault();
    Awaitility.setDefaultPollDelay(Duration.ZERO);
    Awaitility.setDefaultPollInterval(Duration.ofMillis(5));
    dead.shutdown();
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getUrl().encodedPath();
        if (path.equals("/job")) {
          return new MockResponse.Builder().code(202).setHeader("Operation-Location", "/job/status")
              .build();
        }
        if (path.equals("/job/status")) {
          return flakyRequests.getAndIncrement() == 0
              ? new MockResponse.Builder().code(503).body("busy").build()
              : new MockResponse.Builder().code(200).body("{\"status\":\"succeeded\"}").build();
        }
        if (path.equals("/flaky") && flakyRequests.getAndIncrement() == 0) {
          return new MockResponse.Builder().code(503).body("busy").build();
        }
        return new MockResponse.Builder().code(200).body("ok").build();
      }
    });
    server.start();
  }

  @AfterEach
  void stop() {
    Awaitility.reset();
    armed.set(false);
    callers.shutdownNow();
    working.shutdownNow();
    if (okHttp != null) {
      okHttp.dispatcher().cancelAll();
      okHttp.connectionPool().evictAll();
    }
    server.close();
  }

  static Stream<Arguments> cases() {
    List<Arguments> all = new ArrayList<>();
    for (Point p : Point.values()) {
      for (Path path : Path.values()) {
        all.add(Arguments.of(p, path, Kind.RUNTIME));
        all.add(Arguments.of(p, path, Kind.ERROR));
      }
    }
    all.add(Arguments.of(Point.LISTENER_OPERATION_ENDED, Path.EXECUTE_ASYNC, Kind.OUT_OF_MEMORY));
    return all.stream();
  }

  /** The same points with the breaker forced HALF_OPEN (one permitted call) and a 200 at once. */
  static Stream<Arguments> halfOpenCases() {
    List<Arguments> all = new ArrayList<>();
    for (Point p : Point.values()) {
      if (p == Point.BACKOFF || p == Point.BUDGET || p == Point.LISTENER_RETRY_SCHEDULED
          || p == Point.SCHEDULER) {
        continue; // they run only between attempts: a 200 at once never reaches them
      }
      for (Path path : Path.values()) {
        all.add(Arguments.of(p, path, Kind.RUNTIME));
        all.add(Arguments.of(p, path, Kind.ERROR));
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0} throws {2} on {1}")
  @MethodSource("cases")
  void userCodeThatThrowsNeverHangsTheOperationNorLeaksAPermitABreakerCallOrAConnection(
      Point point, Path path, Kind kind) throws Exception {
    Assumptions.assumeTrue(point != Point.SCHEDULER || path == Path.EXECUTE_ASYNC
            || path == Path.HEDGED_ASYNC || path == Path.AWAIT_ASYNC,
        "the scheduler is used by the non-blocking paths only");
    ResilientHttpClient client = client(point, kind, breakers(false));
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/")).orElseThrow();

    armed.set(true);
    String outcome = runToTheEnd(client, path, urlFor(path));
    armed.set(false);

    assertCleanAfterwards(client, breaker, outcome, point, path);
  }

  @ParameterizedTest(name = "half-open breaker: {0} throws {2} on {1}")
  @MethodSource("halfOpenCases")
  void userCodeThatThrowsDoesNotLeakTheOnlyHalfOpenPermission(Point point, Path path, Kind kind)
      throws Exception {
    flakyRequests.set(1); // no 503: the first attempt gets a 200
    ResilientHttpClient client = client(point, kind, breakers(true));
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/")).orElseThrow();
    breaker.transitionToOpenState();
    breaker.transitionToHalfOpenState();

    armed.set(true);
    String outcome = runToTheEnd(client, path, urlFor(path));
    armed.set(false);

    assertEnded(outcome, point, path);
    // The one permitted call was either recorded (CLOSED or OPEN) or given back (still available).
    if (breaker.getState() == CircuitBreaker.State.HALF_OPEN) {
      boolean available = breaker.tryAcquirePermission();
      if (available) {
        breaker.releasePermission();
      }
      assertThat(available).as("HALF_OPEN breaker after %s (%s on %s): its only permission leaked",
          outcome, point, path).isTrue();
    }
    awaitPermitsBackAndPoolClean(client, outcome);
  }

  // ------------------------------------------------------------------------------------- fixtures

  private static CircuitBreakerRegistry breakers(boolean halfOpenProbe) {
    return CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        .slidingWindowSize(20)
        .minimumNumberOfCalls(halfOpenProbe ? 1 : 20)
        .failureRateThreshold(50)
        .permittedNumberOfCallsInHalfOpenState(1)
        .waitDurationInOpenState(Duration.ofMinutes(1))
        .build());
  }

  /** Throws this case's throwable when {@code here} is the armed point. */
  private void maybeThrow(Point here) {
    if (!armed.get() || point != here) {
      return;
    }
    switch (kind) {
      case RUNTIME -> throw new IllegalStateException("user code failed in " + here);
      case ERROR -> throw new UserCodeError("user code failed in " + here);
      case OUT_OF_MEMORY -> throw new OutOfMemoryError("user code ran out of memory in " + here);
      default -> throw new AssertionError(kind);
    }
  }

  private ResilientHttpClient client(Point point, Kind kind, CircuitBreakerRegistry registry) {
    this.point = point;
    this.kind = kind;
    okHttp = new OkHttpClient.Builder()
        .addInterceptor(chain -> {
          maybeThrow(Point.APP_INTERCEPTOR);
          return chain.proceed(chain.request());
        })
        .addNetworkInterceptor(chain -> {
          maybeThrow(Point.NETWORK_INTERCEPTOR);
          return chain.proceed(chain.request());
        })
        .eventListener(new EventListener() {
          @Override
          public void callStart(Call call) {
            maybeThrow(Point.EVENT_CALL_START);
          }

          @Override
          public void responseHeadersEnd(Call call, Response response) {
            maybeThrow(Point.EVENT_RESPONSE_HEADERS_END);
          }
        })
        .build();
    ResponseClassifier classifier = outcome -> {
      maybeThrow(Point.CLASSIFIER);
      return ResponseClassifier.defaults().classify(outcome);
    };
    Backoff backoff = (retry, random) -> {
      maybeThrow(Point.BACKOFF);
      return Duration.ofMillis(20);
    };
    RetryBudget budget = new RetryBudget() {
      @Override
      public void onFirstAttempt() {}

      @Override
      public boolean tryAcquireRetry() {
        maybeThrow(Point.BUDGET);
        return true;
      }

      @Override
      public double availableTokens() {
        return Double.POSITIVE_INFINITY;
      }
    };
    OperationListener counting = new OperationListener() {
      @Override
      public void operationStarted(OperationInfo operation) {
        operationsStarted.incrementAndGet();
      }

      @Override
      public void operationEnded(OperationInfo operation, OperationResult result) {
        operationsEnded.incrementAndGet();
      }
    };
    OperationListener throwing = new OperationListener() {
      @Override
      public void attemptStarted(OperationInfo operation, int attempt) {
        maybeThrow(Point.LISTENER_ATTEMPT_STARTED);
      }

      @Override
      public void attemptEnded(OperationInfo operation, int attempt, int statusCode,
          IOException failure, Decision decision, Duration duration) {
        maybeThrow(Point.LISTENER_ATTEMPT_ENDED);
      }

      @Override
      public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
          boolean fromRetryAfter) {
        maybeThrow(Point.LISTENER_RETRY_SCHEDULED);
      }

      @Override
      public void operationEnded(OperationInfo operation, OperationResult result) {
        maybeThrow(Point.LISTENER_OPERATION_ENDED);
      }
    };
    ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1) {
      @Override
      public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        if (armed.get() && UserCodeThrowsMatrixTest.this.point == Point.SCHEDULER) {
          if (UserCodeThrowsMatrixTest.this.kind == Kind.RUNTIME) {
            return dead.schedule(command, delay, unit); // RejectedExecutionException
          }
          throw new UserCodeError("schedule failed");
        }
        return working.schedule(command, delay, unit);
      }

      @Override
      public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        if (armed.get() && UserCodeThrowsMatrixTest.this.point == Point.SCHEDULER) {
          if (UserCodeThrowsMatrixTest.this.kind == Kind.RUNTIME) {
            return dead.schedule(callable, delay, unit);
          }
          throw new UserCodeError("schedule failed");
        }
        return working.schedule(callable, delay, unit);
      }
    };
    return ResilientHttpClient.wrap(okHttp)
        .classifier(classifier)
        .retryBudget(budget)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(backoff).deadline(DEADLINE).build())
        .circuitBreakerRegistry(registry)
        .bulkhead(BulkheadConfig.custom().maxConcurrentCalls(1).maxWaitDuration(Duration.ofSeconds(2))
            .build())
        .scheduler(scheduler)
        .addListener(counting)
        .addListener(throwing)
        .build();
  }

  /**
   * Runs one request on {@code path} and waits for its end, bounded by the deadline plus slack.
   * Closes whatever response the caller got.
   *
   * @return how it ended, for messages: "status 200", "threw X", or "HUNG"
   */
  private String runToTheEnd(ResilientHttpClient client, Path path, String url) throws Exception {
    Request request = new Request.Builder().url(url).build();
    CompletableFuture<Response> ended;
    switch (path) {
      case EXECUTE -> ended = CompletableFuture.supplyAsync(
          () -> call(() -> client.operation(request).execute()), callers);
      case HEDGED_EXECUTE -> ended = CompletableFuture.supplyAsync(
          () -> call(() -> client.operation(request).hedging(HEDGE).execute()), callers);
      case HEDGED_ASYNC -> {
        try {
          ended = client.operation(request).hedging(HEDGE).executeAsync();
        } catch (Throwable t) {
          return fail("executeAsync() threw synchronously instead of completing its future", t);
        }
      }
      case AWAIT -> ended = CompletableFuture.supplyAsync(
          () -> call(() -> client.operation(submit(url)).awaitCompletion(WAIT)), callers);
      case AWAIT_ASYNC -> {
        try {
          ended = client.operation(submit(url)).awaitCompletionAsync(WAIT);
        } catch (Throwable t) {
          return fail("awaitCompletionAsync() threw synchronously instead of completing its future",
              t);
        }
      }
      case PLAIN_EXECUTE -> ended = CompletableFuture.supplyAsync(
          () -> call(() -> client.okHttpClient().newCall(request).execute()), callers);
      case EXECUTE_ASYNC -> {
        try {
          ended = client.operation(request).executeAsync();
        } catch (Throwable t) {
          return fail("executeAsync() threw synchronously instead of completing its future", t);
        }
      }
      case PLAIN_ENQUEUE -> {
        CompletableFuture<Response> f = new CompletableFuture<>();
        try {
          client.okHttpClient().newCall(request).enqueue(new Callback() {
            @Override
            public void onFailure(Call call, IOException e) {
              f.completeExceptionally(e);
            }

            @Override
            public void onResponse(Call call, Response response) {
              if (!f.complete(response)) {
                response.close();
              }
            }
          });
        } catch (RuntimeException | Error t) {
          // OkHttp itself calls EventListener.callStart inside enqueue(): what it throws reaches
          // the caller of any OkHttpClient's enqueue(). The call has ended; what it leaves is checked.
          return "enqueue() threw " + t;
        }
        ended = f;
      }
      default -> throw new AssertionError(path);
    }
    try (Response r = ended.get(DEADLINE.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS)) {
      r.body().string();
      return "status " + r.code();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof WrappedFailure w ? w.getCause() : e.getCause();
      return "threw " + cause;
    } catch (IOException | RuntimeException | Error e) {
      return "threw while reading " + e;
    } catch (TimeoutException e) {
      return "HUNG";
    }
  }

  private String urlFor(Path path) {
    return server.url(path.polls() ? "/job" : "/flaky").toString();
  }

  private static Request submit(String url) {
    return new Request.Builder().url(url)
        .post(okhttp3.RequestBody.create("{}", okhttp3.MediaType.get("application/json"))).build();
  }

  private interface Blocking {
    Response run() throws IOException;
  }

  /** Carries a checked or unchecked throwable out of supplyAsync unchanged. */
  private static final class WrappedFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WrappedFailure(Throwable cause) {
      super(cause);
    }
  }

  private static Response call(Blocking b) {
    try {
      return b.run();
    } catch (Throwable t) {
      throw new WrappedFailure(t);
    }
  }

  private static void assertEnded(String outcome, Point point, Path path) {
    assertThat(outcome).as("%s on %s: the operation must end within deadline + slack", point, path)
        .isNotEqualTo("HUNG");
  }

  /**
   * Every fact about what the case left behind, reported together: whether it ended, the permit, the
   * pool, the events, the follow-up and the breaker.
   */
  private void assertCleanAfterwards(ResilientHttpClient client, CircuitBreaker breaker, String outcome,
      Point point, Path path) throws Exception {
    String which = point + " threw " + kind + " on " + path + " (" + outcome + ")";
    boolean permitBack = within2s(() -> availablePermits(client) == 1);
    boolean poolClean = within2s(this::poolClean);
    // An operation that started ends exactly once. (A plain call whose own callStart threw never
    // reached the SDK's interceptor: no operation started, none ends.)
    within2s(() -> operationsEnded.get() >= operationsStarted.get());
    int started = operationsStarted.get();
    int ended = operationsEnded.get();

    // The follow-up, with nothing armed, runs normally through the same bulkhead and breaker.
    String followUp = runToTheEnd(client, Path.EXECUTE, server.url("/clean").toString());
    boolean poolCleanAfterFollowUp = within2s(this::poolClean);

    SoftAssertions.assertSoftly(softly -> {
      softly.assertThat(outcome).as("%s: must end within deadline + slack", which)
          .isNotEqualTo("HUNG");
      softly.assertThat(permitBack).as("%s: bulkhead permit back within 2 s (available %d)", which,
          availablePermits(client)).isTrue();
      softly.assertThat(poolClean).as("%s: no connection left in use within 2 s (%d of %d idle)",
          which, okHttp.connectionPool().idleConnectionCount(),
          okHttp.connectionPool().connectionCount()).isTrue();
      if (!path.polls()) { // a wait runs the submit and each poll as operations of their own
        softly.assertThat(started).as("%s: operationStarted events", which).isLessThanOrEqualTo(1);
      }
      softly.assertThat(ended).as("%s: operationEnded events", which).isEqualTo(started);
      softly.assertThat(followUp).as("%s: the follow-up operation", which).isEqualTo("status 200");
      softly.assertThat(poolCleanAfterFollowUp).as("%s: pool clean after the follow-up", which)
          .isTrue();
      softly.assertThat(breaker.getState()).as("%s: breaker state", which)
          .isEqualTo(CircuitBreaker.State.CLOSED);
      softly.assertThat(breaker.getMetrics().getNumberOfBufferedCalls())
          .as("%s: the follow-up's call is recorded", which).isGreaterThanOrEqualTo(1);
    });
  }

  private static int availablePermits(ResilientHttpClient client) {
    return client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls();
  }

  private boolean poolClean() {
    return okHttp.connectionPool().connectionCount() == okHttp.connectionPool().idleConnectionCount();
  }

  /** Polls {@code condition} for up to 2 s; whether it became true. */
  private static boolean within2s(BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - until > 0) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  private void awaitPermitsBackAndPoolClean(ResilientHttpClient client, String after) {
    await("bulkhead permit back after " + after).atMost(Duration.ofSeconds(2))
        .until(() -> availablePermits(client) == 1);
    await("no connection left in use after " + after).atMost(Duration.ofSeconds(2))
        .until(this::poolClean);
  }
}
