package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Decision;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link Operation#cancel()}: from any thread, at any point, it stops the operation at once. */
@Timeout(30)
class CancelTest {
  private final AtomicInteger requests = new AtomicInteger();
  /** Requests per race iteration (query parameter {@code i}). */
  private final java.util.Map<String, AtomicInteger> perIteration =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final CountDownLatch slowArrived = new CountDownLatch(1);
  private final CountDownLatch releaseSlow = new CountDownLatch(1);
  private final ExecutorService callers = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "cancel-caller");
    t.setDaemon(true);
    return t;
  });
  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void startServer() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        int n = requests.incrementAndGet();
        String iteration = request.getUrl().queryParameter("i");
        if (iteration != null) {
          perIteration.computeIfAbsent(iteration, k -> new AtomicInteger()).incrementAndGet();
        }
        String path = request.getUrl().encodedPath();
        switch (path) {
          case "/always-503":
            return new MockResponse.Builder().code(503).body("busy").build();
          case "/retry-after-30":
            return n == 1
                ? new MockResponse.Builder().code(503).addHeader("Retry-After", "30").build()
                : new MockResponse.Builder().code(200).body("ok").build();
          case "/slow":
            slowArrived.countDown();
            releaseSlow.await(30, TimeUnit.SECONDS);
            return new MockResponse.Builder().code(200).body("slow").build();
          case "/503-then-200":
            return n == 1 ? new MockResponse.Builder().code(503).build()
                : new MockResponse.Builder().code(200).body("ok").build();
          default:
            return new MockResponse.Builder().code(200).body("ok").build();
        }
      }
    });
    server.start();
    okHttp = new OkHttpClient();
  }

  @AfterEach
  void stop() {
    releaseSlow.countDown();
    callers.shutdownNow();
    okHttp.dispatcher().cancelAll();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private Request get(String path) {
    return new Request.Builder().url(server.url(path)).build();
  }

  // (a) -------------------------------------------------------------------------------------------

  enum Path { EXECUTE, EXECUTE_ASYNC, PLAIN_EXECUTE }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Path.class)
  void noAttemptStartsAfterCancelReturnsEvenWhenCancelRacesTheOperation(Path path) throws Exception {
    AtomicBoolean cancelReturned = new AtomicBoolean();
    AtomicInteger lateAttempts = new AtomicInteger();
    OkHttpClient counting = okHttp.newBuilder().addNetworkInterceptor(chain -> {
      // A call that reaches the wire after cancel() returned and is not itself cancelled is a new
      // attempt that cancel() did not stop (an in-flight one was cancelled by cancel()).
      if (cancelReturned.get() && !chain.call().isCanceled()) {
        lateAttempts.incrementAndGet();
      }
      return chain.proceed(chain.request());
    }).build();
    ResilientHttpClient client = ResilientHttpClient.wrap(counting)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(100).backoff(Backoff.fixed(Duration.ofMillis(1)))
            .deadline(Duration.ofSeconds(10)).build())
        .build();
    int iterations = Integer.getInteger("cancelRaceIterations", 300);
    List<String> late = new ArrayList<>();
    int[] seenAtCancel = new int[iterations];
    for (int i = 0; i < iterations; i++) {
      cancelReturned.set(false);
      int lateBefore = lateAttempts.get();
      Request request = get("/always-503?i=" + i);
      Operation op = client.operation(request);
      Call plain = client.okHttpClient().newCall(request);
      Runnable cancel = path == Path.PLAIN_EXECUTE ? plain::cancel : op::cancel;
      CyclicBarrier start = new CyclicBarrier(2);
      Future<Integer> running = callers.submit(() -> {
        start.await();
        try (Response r = switch (path) {
          case EXECUTE -> op.execute();
          case PLAIN_EXECUTE -> plain.execute();
          case EXECUTE_ASYNC -> op.executeAsync().get(5, TimeUnit.SECONDS);
        }) {
          return r.code();
        } catch (IOException | ExecutionException | java.util.concurrent.CancellationException e) {
          return -1;
        } catch (TimeoutException e) {
          return -2;
        }
      });
      start.await();
      if (i % 3 != 0) {
        java.util.concurrent.locks.LockSupport.parkNanos(200_000L * (i % 7)); // other points
      }
      cancel.run();
      cancelReturned.set(true);
      AtomicInteger seen = perIteration.computeIfAbsent(Integer.toString(i), k -> new AtomicInteger());
      int atCancel = seen.get();
      seenAtCancel[i] = atCancel;
      try {
        assertThat(running.get(6, TimeUnit.SECONDS)).as("iteration %d: the future never completed", i)
            .isNotEqualTo(-2);
      } catch (TimeoutException e) {
        fail("iteration " + i + ": still running 6 s after cancel()");
      }
      Thread.sleep(2); // a retry scheduled anyway (1 ms backoff) would start by now
      if (lateAttempts.get() != lateBefore) {
        late.add("iteration " + i + ": " + (lateAttempts.get() - lateBefore) + " attempt(s) on the wire");
      }
      if (seen.get() - atCancel > 1) { // one may have been in flight when cancel() ran
        late.add("iteration " + i + ": the server saw " + (seen.get() - atCancel)
            + " requests of this operation after cancel() returned");
      }
    }
    // An operation that kept retrying in the background after its caller saw it end shows up later.
    Thread.sleep(300);
    for (int i = 0; i < iterations; i++) {
      int after = perIteration.get(Integer.toString(i)).get() - seenAtCancel[i];
      if (after > 1) {
        late.add("iteration " + i + ": in the end, the server saw " + after
            + " requests of this operation after cancel() returned");
      }
    }
    assertThat(late).as("attempts that started after cancel() returned, of %d races", iterations)
        .isEmpty();
  }

  // (b) -------------------------------------------------------------------------------------------

  @Test
  void cancelEndsABlockingExecuteThatWaitsThirtySecondsBeforeItsRetry() throws Exception {
    CountDownLatch retryScheduled = new CountDownLatch(1);
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10)))
            .maxRetryAfter(Duration.ofSeconds(60)).deadline(Duration.ofSeconds(60)).build())
        .addListener(new OperationListener() {
          @Override
          public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
              boolean fromRetryAfter) {
            retryScheduled.countDown();
          }
        })
        .build();
    Operation op = client.operation(get("/retry-after-30"));
    Future<Response> running = callers.submit(op::execute);
    assertThat(retryScheduled.await(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(100); // well into the 30 s wait

    long cancelledAt = System.nanoTime();
    op.cancel();
    assertCanceledWithinOneSecond(running, cancelledAt);
    assertThat(requests.get()).as("requests: the 503 only").isEqualTo(1);
  }

  // (c) -------------------------------------------------------------------------------------------

  @Test
  void cancelWakesABlockingExecuteThatWaitsForABulkheadPermit() throws Exception {
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(60)).build())
        .bulkhead(BulkheadConfig.custom().maxConcurrentCalls(1).maxWaitDuration(Duration.ofSeconds(30))
            .build())
        .build();
    CompletableFuture<Response> slow = client.operation(get("/slow")).executeAsync();
    assertThat(slowArrived.await(10, TimeUnit.SECONDS)).isTrue();
    Operation waiting = client.operation(get("/after-slow"));
    Future<Response> running = callers.submit(waiting::execute);
    Thread.sleep(300); // now waiting for the permit

    long cancelledAt = System.nanoTime();
    waiting.cancel();
    assertCanceledWithinOneSecond(running, cancelledAt);

    releaseSlow.countDown();
    slow.get(10, TimeUnit.SECONDS).close();
    assertThat(requests.get()).as("requests: the slow one only").isEqualTo(1);
    await().atMost(Duration.ofSeconds(2))
        .until(() -> client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls() == 1);
  }

  private static void assertCanceledWithinOneSecond(Future<Response> running, long cancelledAt)
      throws Exception {
    Throwable thrown;
    try {
      Response r = running.get(1500, TimeUnit.MILLISECONDS);
      r.close();
      throw new AssertionError("execute() returned " + r.code() + " after cancel()");
    } catch (TimeoutException e) {
      running.cancel(true); // interrupts the caller so that it does not linger
      throw new AssertionError("execute() still running 1.5 s after cancel()");
    } catch (ExecutionException e) {
      thrown = e.getCause();
    }
    Duration took = Duration.ofNanos(System.nanoTime() - cancelledAt);
    assertThat(took).as("from cancel() to the end of execute()").isLessThan(Duration.ofSeconds(1));
    assertThat(thrown).isInstanceOf(OperationFailure.class);
    assertThat(((OperationFailure) thrown).reason()).as("reason of %s", thrown).isEqualTo("canceled");
  }

  // (d) -------------------------------------------------------------------------------------------

  @Test
  void cancelBeforeExecuteAsyncGivesACancelledFutureAndSendsNothing() throws Exception {
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).noCircuitBreaker().build();
    Operation op = client.operation(get("/never"));
    op.cancel();
    CompletableFuture<Response> future = op.executeAsync();

    await().atMost(Duration.ofSeconds(2)).until(future::isDone);
    Throwable how = future.handle((r, t) -> t).join();
    assertThat(future.isCancelled()).as("future completed with %s", how).isTrue();
    Thread.sleep(100);
    assertThat(requests.get()).isZero();
    assertThat(op.attempts()).isZero();
  }

  // (e) -------------------------------------------------------------------------------------------

  /** Events of one operation, in order, as names: "attemptEnded:1", "retryScheduled:2", ... */
  private static class Events implements OperationListener {
    final List<String> seen = new CopyOnWriteArrayList<>();
    final AtomicReference<Operation> cancelInAttemptEnded = new AtomicReference<>();

    @Override
    public void attemptStarted(OperationInfo operation, int attempt) {
      seen.add("attemptStarted:" + attempt);
    }

    @Override
    public void attemptEnded(OperationInfo operation, int attempt, int statusCode,
        IOException failure, Decision decision, Duration duration) {
      seen.add("attemptEnded:" + attempt);
      Operation op = cancelInAttemptEnded.get();
      if (op != null && attempt == 1) {
        op.cancel();
      }
    }

    @Override
    public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
        boolean fromRetryAfter) {
      seen.add("retryScheduled:" + nextAttempt);
    }

    @Override
    public void operationEnded(OperationInfo operation, OperationResult result) {
      seen.add("operationEnded:" + result.outcome());
    }
  }

  @Test
  void asyncCancelFromAttemptEndedEndsTheOperationLastAndSpendsNoRetryToken() throws Exception {
    Events events = new Events();
    RetryBudget budget = RetryBudget.tokenBucketBuilder()
        .maxTokens(10).minRetriesPerSecond(0).retryRatio(0.5).build();
    double before = budget.availableTokens(); // full: the first attempt's deposit is dropped
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(budget)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(200)))
            .deadline(Duration.ofSeconds(10)).build())
        .addListener(events)
        .build();
    Operation op = client.operation(get("/503-then-200"));
    events.cancelInAttemptEnded.set(op);
    CompletableFuture<Response> future = op.executeAsync();

    await().atMost(Duration.ofSeconds(5)).until(future::isDone);
    await("operationEnded reported").atMost(Duration.ofSeconds(2))
        .until(() -> events.seen.stream().anyMatch(e -> e.startsWith("operationEnded")));
    Thread.sleep(400); // longer than the backoff: a retry scheduled anyway would have run by now

    List<String> seen = List.copyOf(events.seen);
    int serverRequests = requests.get();
    double after = budget.availableTokens();
    SoftAssertions.assertSoftly(softly -> {
      softly.assertThat(seen.stream().filter(e -> e.startsWith("operationEnded")).count())
          .as("operationEnded events in %s", seen).isEqualTo(1);
      softly.assertThat(seen.get(seen.size() - 1)).as("last event of %s", seen)
          .startsWith("operationEnded");
      softly.assertThat(seen).as("events").doesNotContain("attemptStarted:2");
      softly.assertThat(serverRequests).as("requests: the first 503 only").isEqualTo(1);
      softly.assertThat(after).as("tokens after a retry that was cancelled (events %s)", seen)
          .isEqualTo(before);
    });
  }

  /**
   * A cancel that lands while the async retry's scheduled step is already running (held in the
   * retry's attemptStarted, on the scheduler's thread) must not run the step a second time on the
   * cancelling thread: the running step sees the cancel, ends its attempt and then the operation,
   * once. ({@code ScheduledFuture.cancel(false)} returns true while its task runs; taken for "the
   * retry never runs", the cancelling thread ended the operation while attempt 2 was still
   * starting, which then ended after it.)
   */
  @Test
  void asyncCancelWhileTheScheduledRetryRunsEndsTheOperationOnceAndLast() throws Exception {
    CountDownLatch retryStarting = new CountDownLatch(1);
    CountDownLatch releaseRetry = new CountDownLatch(1);
    Events events = new Events() {
      @Override
      public void attemptStarted(OperationInfo operation, int attempt) {
        super.attemptStarted(operation, attempt);
        if (attempt == 2) {
          retryStarting.countDown();
          try {
            releaseRetry.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    // The calls' starts go in the same list: the retry's call starts after its step was released.
    OkHttpClient calls = okHttp.newBuilder().eventListener(new okhttp3.EventListener() {
      @Override
      public void callStart(Call call) {
        events.seen.add("callStart");
      }
    }).build();
    ResilientHttpClient client = ResilientHttpClient.wrap(calls)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(1)))
            .deadline(Duration.ofSeconds(10)).build())
        .addListener(events)
        .build();
    Operation op = client.operation(get("/503-then-200"));
    CompletableFuture<Response> future = op.executeAsync();
    assertThat(retryStarting.await(10, TimeUnit.SECONDS)).as("the retry's step started").isTrue();

    op.cancel();
    assertThat(future.isCancelled()).isTrue();
    releaseRetry.countDown();
    await("operationEnded reported").atMost(Duration.ofSeconds(5))
        .until(() -> events.seen.stream().anyMatch(e -> e.startsWith("operationEnded")));
    // Nothing more for 100 ms: a call starting after the operation ended would show by then.
    int count = events.seen.size();
    await().during(Duration.ofMillis(100)).atMost(Duration.ofSeconds(2))
        .until(() -> events.seen.size() == count);

    List<String> seen = List.copyOf(events.seen);
    SoftAssertions.assertSoftly(softly -> {
      softly.assertThat(seen.stream().filter(e -> e.startsWith("operationEnded")).count())
          .as("operationEnded events in %s", seen).isEqualTo(1);
      softly.assertThat(seen.get(seen.size() - 1)).as("last event of %s", seen)
          .startsWith("operationEnded");
      softly.assertThat(seen.stream().filter("callStart"::equals).count())
          .as("calls started in %s: the 503's and the retry's (cancelled before the wire)", seen)
          .isEqualTo(2);
      softly.assertThat(requests.get()).as("requests: the first 503 only").isEqualTo(1);
    });
  }
}
