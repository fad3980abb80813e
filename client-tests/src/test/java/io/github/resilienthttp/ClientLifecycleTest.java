package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The client's lifecycle on real loopback sockets: {@code close()} (graceful) and
 * {@code closeNow()}, for waits between attempts, 202 waits, attempts in flight and plain calls,
 * blocking and async; what is refused after close; the SDK's threads gone; the wrapped client left
 * alone unless asked; and a shut-down OkHttp dispatcher reported at once.
 */
class ClientLifecycleTest {
  private static final MediaType JSON = MediaType.get("application/json");
  /** Long enough that an operation still waiting after close() would fail the 10 s await. */
  private static final Duration LONG_BACKOFF = Duration.ofSeconds(60);

  private MockWebServer server;
  private OkHttpClient okHttp;
  private final List<ResilientHttpClient> clients = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient();
  }

  @AfterEach
  void tearDown() {
    clients.forEach(ResilientHttpClient::closeNow);
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient.Builder builder(Duration backoff) {
    return ResilientHttpClient.wrap(okHttp).retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(backoff))
            .deadline(Duration.ofMinutes(5)).build());
  }

  private ResilientHttpClient client(Duration backoff, OperationListener... listeners) {
    ResilientHttpClient.Builder b = builder(backoff);
    for (OperationListener l : listeners) {
      b.addListener(l);
    }
    ResilientHttpClient c = b.build();
    clients.add(c);
    return c;
  }

  private Request get() {
    return new Request.Builder().url(server.url("/orders/1")).build();
  }

  private Request charge() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"o-1\"}", JSON)).build();
  }

  private static MockResponse status(int code) {
    return new MockResponse.Builder().code(code).build();
  }

  /** Counts retries scheduled: the operation is then in its backoff. */
  private static final class Retries implements OperationListener {
    final CountDownLatch scheduled = new CountDownLatch(1);

    @Override
    public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
        boolean fromRetryAfter) {
      scheduled.countDown();
    }
  }

  /** The SDK scheduler thread of {@code client}, made to run once so that it exists. */
  private static Thread schedulerThread(ResilientHttpClient client) throws Exception {
    return client.runtime().scheduler().submit(Thread::currentThread).get(5, TimeUnit.SECONDS);
  }

  private static void assertClosedFailure(Throwable e, int attempts) {
    assertThat(e).isInstanceOfSatisfying(ResilientHttpException.class, f -> {
      assertThat(f.reason()).isEqualTo("client-closed");
      assertThat(f.attempts()).isEqualTo(attempts);
    });
  }

  private static Throwable failureOf(CompletableFuture<Response> f) {
    try {
      f.get(10, TimeUnit.SECONDS).close();
      throw new AssertionError("expected a failure");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void closeDuringBackoffEndsABlockingOperationAtOnceWithNoFurtherAttempt() throws Exception {
    server.enqueue(status(503));
    Retries retries = new Retries();
    ResilientHttpClient client = client(LONG_BACKOFF, retries);
    CompletableFuture<Response> blocking = start(client, Ways.BLOCKING);
    assertThat(retries.scheduled.await(10, TimeUnit.SECONDS)).isTrue();

    client.close();

    assertClosedFailure(failureOf(blocking), 1);
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(client.runtime().lifecycle().runningCount()).isZero();
  }

  @Test
  void closeDuringBackoffEndsAnAsyncOperationOffTheSchedulerAndItsThreadEnds() throws Exception {
    server.enqueue(status(503));
    Retries retries = new Retries();
    ResilientHttpClient client = client(LONG_BACKOFF, retries);
    Thread scheduler = schedulerThread(client);
    CompletableFuture<Response> f = client.operation(charge()).executeAsync();
    AtomicReference<Thread> completedOn = new AtomicReference<>();
    CompletableFuture<Response> seen = f.whenComplete((r, e) -> completedOn.set(Thread.currentThread()));
    assertThat(retries.scheduled.await(10, TimeUnit.SECONDS)).isTrue();

    client.close();

    assertClosedFailure(failureOf(seen), 1);
    assertThat(completedOn.get()).isNotSameAs(scheduler);
    assertThat(completedOn.get().getName()).doesNotContain("resilient-http-scheduler");
    assertThat(server.getRequestCount()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> !scheduler.isAlive());
    assertThat(client.runtime().lifecycle().runningCount()).isZero();
    // The deadline's watchdog holds no thread of its own and stops sweeping once idle.
    await().atMost(Duration.ofSeconds(10))
        .until(() -> !client.runtime().deadlineWatchdog().isRunning());
  }

  @Test
  void closeDuringA202WaitStopsTheAsyncWaitWithItsResumeToken() throws Exception {
    server.enqueue(new MockResponse.Builder().code(202)
        .addHeader("Operation-Location", server.url("/jobs/j1/status").toString())
        .addHeader("Retry-After", "60").build());
    ResilientHttpClient client = client(Duration.ofMillis(10));
    CountDownLatch accepted = new CountDownLatch(1);
    CountDownLatch pollScheduled = new CountDownLatch(1);
    ResilientHttpClient watched = client.newBuilder().addListener(new OperationListener() {
      @Override
      public void asyncOperationAccepted(OperationInfo operation, ResumeToken token) {
        accepted.countDown();
      }

      @Override
      public void pollScheduled(OperationInfo operation, int poll, Duration delay,
          boolean fromRetryAfter) {
        pollScheduled.countDown();
      }
    }).build();
    clients.add(watched);
    Thread scheduler = schedulerThread(watched);
    AsyncOperationPolicy policy = WaitSignals.LONG_POLLS;
    CompletableFuture<Response> wait = watched.operation(charge()).awaitCompletionAsync(policy);
    assertThat(pollScheduled.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(accepted.getCount()).isZero();

    watched.close();

    Throwable e = failureOf(wait);
    assertThat(e).isInstanceOfSatisfying(PollFailedException.class, p -> {
      assertThat(p.reason()).isEqualTo("client-closed");
      assertThat(p.resumeToken().isAccepted()).isTrue();
    });
    assertThat(server.getRequestCount()).isEqualTo(1); // the submit; no poll
    await().atMost(Duration.ofSeconds(10)).until(() -> !scheduler.isAlive());
    // The run leaves the lifecycle in a dependent of its future, which may run just after the
    // waiter above saw the future fail.
    await().atMost(Duration.ofSeconds(5))
        .until(() -> watched.runtime().lifecycle().runningCount() == 0);
  }

  @Test
  void closeDuringABlocking202WaitStopsIt() throws Exception {
    server.enqueue(new MockResponse.Builder().code(202)
        .addHeader("Operation-Location", server.url("/jobs/j1/status").toString())
        .addHeader("Retry-After", "60").build());
    CountDownLatch pollScheduled = new CountDownLatch(1);
    ResilientHttpClient client =
        client(Duration.ofMillis(10), WaitSignals.pollScheduled(pollScheduled));
    AsyncOperationPolicy policy = WaitSignals.LONG_POLLS;
    CompletableFuture<Response> wait = CompletableFuture.supplyAsync(() -> {
      try {
        return client.operation(charge()).awaitCompletion(policy);
      } catch (IOException e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    });
    assertThat(pollScheduled.await(10, TimeUnit.SECONDS)).isTrue();

    client.close();

    assertThat(failureOf(wait)).isInstanceOfSatisfying(PollFailedException.class,
        p -> assertThat(p.reason()).isEqualTo("client-closed"));
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void afterCloseNewOperationsAndPlainCallsAreRefusedAndNothingIsSent() throws Exception {
    ResilientHttpClient client = client(Duration.ofMillis(10));
    Operation madeBefore = client.operation(get());
    Operation madeBeforeAsync = client.operation(get());

    client.close();

    assertThat(client.isClosed()).isTrue();
    assertThatThrownBy(() -> client.operation(get())).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("client closed");
    assertThatThrownBy(madeBefore::execute).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("client closed");
    assertThatThrownBy(madeBeforeAsync::executeAsync).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("client closed");
    assertThatThrownBy(() -> client.okHttpClient().newCall(get()).execute())
        .isInstanceOfSatisfying(ResilientHttpException.class, e -> {
          assertThat(e.reason()).isEqualTo("client-closed");
          assertThat(e.attempts()).isZero();
        });
    Request passThrough = get().newBuilder().tag(OperationOptions.class,
        OperationOptions.passThrough()).build();
    assertThatThrownBy(() -> client.okHttpClient().newCall(passThrough).execute())
        .isInstanceOf(ResilientHttpException.class).hasMessageContaining("client closed");
    assertThat(server.getRequestCount()).isZero();
  }

  @Test
  void closeIsIdempotentAndCloseNowMayFollowIt() {
    ResilientHttpClient client = client(Duration.ofMillis(10));
    assertThat(client.isClosed()).isFalse();

    assertThatCode(() -> {
      client.close();
      client.close();
      client.closeNow();
      client.closeNow();
      client.close();
    }).doesNotThrowAnyException();

    assertThat(client.isClosed()).isTrue();
  }

  @Test
  void closeFromManyThreadsAtOnceClosesOnce() throws Exception {
    ResilientHttpClient client = client(Duration.ofMillis(10));
    Thread scheduler = schedulerThread(client);
    List<CompletableFuture<Void>> closers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      closers.add(CompletableFuture.runAsync(i % 2 == 0 ? client::close : client::closeNow));
    }
    CompletableFuture.allOf(closers.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

    assertThat(client.isClosed()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> !scheduler.isAlive());
  }

  @Test
  void gracefulCloseLetsTheAttemptInFlightFinishAndReturnsItsAnswer() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(500, TimeUnit.MILLISECONDS)
        .body("done").build());
    ResilientHttpClient client = client(Duration.ofMillis(10));
    CompletableFuture<Response> f = client.operation(get()).executeAsync();
    server.takeRequest(10, TimeUnit.SECONDS);

    client.close();

    try (Response r = f.get(10, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.body().string()).isEqualTo("done");
    }
  }

  @Test
  void gracefulCloseEndsAnOperationWhoseAttemptInFlightNeedsARetry() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(500, TimeUnit.MILLISECONDS).code(503)
        .build());
    ResilientHttpClient client = client(Duration.ofMillis(10));
    CompletableFuture<Response> f = client.operation(get()).executeAsync();
    server.takeRequest(10, TimeUnit.SECONDS);

    client.close();

    assertClosedFailure(failureOf(f), 1);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void closeNowCancelsTheAttemptInFlightAsync() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(30, TimeUnit.SECONDS).build());
    ResilientHttpClient client = client(Duration.ofMillis(10));
    CompletableFuture<Response> f = client.operation(charge()).executeAsync();
    server.takeRequest(10, TimeUnit.SECONDS);

    client.closeNow();

    Throwable e = failureOf(f);
    // The POST reached the server: whether it acted is unknown, and the failure says so.
    assertThat(e).isInstanceOfSatisfying(OutcomeUnknownException.class,
        u -> assertThat(u.reason()).isEqualTo("client-closed"));
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void closeNowCancelsTheAttemptInFlightBlocking() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(30, TimeUnit.SECONDS).build());
    ResilientHttpClient client = client(Duration.ofMillis(10));
    CompletableFuture<Response> blocking = start(client, Ways.BLOCKING);
    server.takeRequest(10, TimeUnit.SECONDS);

    client.closeNow();

    assertThat(failureOf(blocking)).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> assertThat(e.reason()).isEqualTo("client-closed"));
  }

  @Test
  void closeDuringAPlainCallsBackoffEndsItAtOnce() throws Exception {
    server.enqueue(status(503));
    Retries retries = new Retries();
    ResilientHttpClient client = client(LONG_BACKOFF, retries);
    CompletableFuture<Response> plain = start(client, Ways.PLAIN_CALL);
    assertThat(retries.scheduled.await(10, TimeUnit.SECONDS)).isTrue();

    client.close();

    assertClosedFailure(failureOf(plain), 1);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void theWrappedClientStillWorksAfterCloseUnlessAsked() throws Exception {
    server.enqueue(status(200));
    server.enqueue(status(200));
    ResilientHttpClient client = client(Duration.ofMillis(10));
    client.close();

    try (Response r = okHttp.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    CompletableFuture<Integer> async = new CompletableFuture<>();
    okHttp.newCall(get()).enqueue(new okhttp3.Callback() {
      @Override
      public void onFailure(okhttp3.Call call, IOException e) {
        async.completeExceptionally(e);
      }

      @Override
      public void onResponse(okhttp3.Call call, Response response) {
        response.close();
        async.complete(response.code());
      }
    });
    assertThat(async.get(10, TimeUnit.SECONDS)).isEqualTo(200);
    assertThat(okHttp.dispatcher().executorService().isShutdown()).isFalse();
  }

  @Test
  void closeOkHttpClientOnCloseReleasesTheWrappedClient() throws Exception {
    server.enqueue(status(200));
    ResilientHttpClient client = builder(Duration.ofMillis(10)).closeOkHttpClientOnClose(true).build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(okHttp.connectionPool().connectionCount()).isEqualTo(1);

    client.close();

    assertThat(okHttp.dispatcher().executorService().isShutdown()).isTrue();
    assertThat(okHttp.connectionPool().connectionCount()).isZero();
    // A client derived with newBuilder() does not inherit the ownership.
    assertThat(client.newBuilder().build()).satisfies(ResilientHttpClient::close);
  }

  @Test
  void aShutDownDispatcherFailsAnAsyncOperationAtOnceOnTheCallingThread() throws Exception {
    ResilientHttpClient client = client(Duration.ofMillis(10));
    okHttp.dispatcher().executorService().shutdown();

    CompletableFuture<Response> f = client.operation(get()).executeAsync();

    assertThat(f).isCompletedExceptionally(); // completed before executeAsync returned
    assertThat(failureOf(f)).isInstanceOfSatisfying(ResilientHttpException.class, e -> {
      assertThat(e).isNotInstanceOf(RetriesExhaustedException.class);
      assertThat(e.reason()).isEqualTo("dispatcher-shut-down");
      assertThat(e.attempts()).isEqualTo(1);
      assertThat(e.getMessage()).contains("dispatcher is shut down");
    });
    assertThat(server.getRequestCount()).isZero();
  }

  @Test
  void aDispatcherShutDownDuringBackoffFailsTheRetryOffTheSchedulerThread() throws Exception {
    server.enqueue(status(503));
    Retries retries = new Retries();
    ResilientHttpClient client = client(Duration.ofMillis(300), retries);
    Thread scheduler = schedulerThread(client);
    CompletableFuture<Response> f = client.operation(get()).executeAsync();
    AtomicReference<Thread> completedOn = new AtomicReference<>();
    CompletableFuture<Response> seen = f.whenComplete((r, e) -> completedOn.set(Thread.currentThread()));
    assertThat(retries.scheduled.await(10, TimeUnit.SECONDS)).isTrue();
    okHttp.dispatcher().executorService().shutdown();

    assertThat(failureOf(seen)).isInstanceOfSatisfying(ResilientHttpException.class, e -> {
      assertThat(e.reason()).isEqualTo("dispatcher-shut-down");
      assertThat(e.attempts()).isEqualTo(2);
    });
    assertThat(completedOn.get()).isNotSameAs(scheduler);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void aBlockingOperationStillRunsOnAShutDownDispatcher() throws Exception {
    // OkHttp's execute() runs on the caller's thread, without the dispatcher's executor.
    server.enqueue(status(503));
    server.enqueue(status(200));
    ResilientHttpClient client = client(Duration.ofMillis(10));
    okHttp.dispatcher().executorService().shutdown();

    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  private CompletableFuture<Response> start(ResilientHttpClient client, Ways way) {
    return way.run(client, get());
  }

  @ParameterizedTest(name = "{0}: listeners throw {1} while the close ends operations")
  @EnumSource(Ways.class)
  void userCodeThatThrowsDuringCloseDoesNotStopItOnAnyWay(Ways way) throws Exception {
    for (boolean error : new boolean[] {false, true}) {
      server.enqueue(status(503));
      server.enqueue(status(503));
      CountDownLatch retries = new CountDownLatch(2);
      AtomicInteger ended = new AtomicInteger();
      ResilientHttpClient client = client(LONG_BACKOFF, new OperationListener() {
        @Override
        public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
            boolean fromRetryAfter) {
          retries.countDown();
        }

        @Override
        public void operationEnded(OperationInfo operation, OperationResult result) {
          ended.incrementAndGet();
          if (error) {
            throw new AssertionError("listener bug");
          }
          throw new IllegalStateException("listener bug");
        }
      });
      int before = server.getRequestCount();
      List<CompletableFuture<Response>> running = List.of(start(client, way), start(client, way));
      assertThat(retries.await(10, TimeUnit.SECONDS)).isTrue();

      assertThatCode(client::close).doesNotThrowAnyException();

      for (CompletableFuture<Response> f : running) {
        assertClosedFailure(failureOf(f), 1);
      }
      assertThat(ended.get()).isEqualTo(2);
      assertThat(server.getRequestCount() - before).isEqualTo(2);
      await().atMost(Duration.ofSeconds(10))
          .until(() -> client.runtime().lifecycle().runningCount() == 0);
    }
  }

  @Test
  void closeNowEndsAHedgedOperationWithTheCloseFailureAndGracefulCloseSendsNoHedge()
      throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(30, TimeUnit.SECONDS).build());
    ResilientHttpClient hedged = builder(Duration.ofMillis(10))
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(100))).build();
    clients.add(hedged);
    CompletableFuture<Response> f = hedged.operation(get()).executeAsync();
    server.takeRequest(10, TimeUnit.SECONDS);

    hedged.close(); // graceful: the copy in flight goes on, the hedge timer sends no copy
    assertThat(server.takeRequest(500, TimeUnit.MILLISECONDS)).isNull();
    assertThat(f).isNotDone();
    hedged.closeNow();

    assertThat(failureOf(f)).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> assertThat(e.reason()).isEqualTo("client-closed"));
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void noThreadOfTheSdkIsLeftAfterClose() throws Exception {
    java.util.Set<Thread> before = Thread.getAllStackTraces().keySet();
    server.enqueue(status(503));
    Retries retries = new Retries();
    ResilientHttpClient client = client(LONG_BACKOFF, retries);
    CompletableFuture<Response> f = client.operation(get()).executeAsync();
    assertThat(retries.scheduled.await(10, TimeUnit.SECONDS)).isTrue();
    // The retry is scheduled right after the event: the scheduler's thread starts for it.
    List<Thread> sdk = await().atMost(Duration.ofSeconds(10)).until(() -> {
      List<Thread> started = new ArrayList<>(Thread.getAllStackTraces().keySet());
      started.removeAll(before);
      return started.stream().filter(t -> t.getName().startsWith("resilient-http")).toList();
    }, threads -> !threads.isEmpty());
    assertThat(sdk).extracting(Thread::getName).containsExactly("resilient-http-scheduler");

    client.close();

    assertClosedFailure(failureOf(f), 1);
    await().atMost(Duration.ofSeconds(10)).until(() -> sdk.stream().noneMatch(Thread::isAlive));
  }

  @Test
  void anOperationTheCloseLeftUnknownStartsNoOutcomeQuery() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(30, TimeUnit.SECONDS).build());
    // The user's scheduler outlives the close: the query's grace delay could still run on it.
    java.util.concurrent.ScheduledExecutorService own =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    ResilientHttpClient client = builder(Duration.ofMillis(10)).scheduler(own).build();
    clients.add(client);
    OutcomeQueryPolicy query = OutcomeQueryPolicy.builder(OutcomeQuery.lookup(
        (request, key) -> server.url("/payments/by-key/" + key))).graceDelay(Duration.ZERO).build();
    CompletableFuture<Response> f = client.operation(charge()).outcomeQuery(query).executeAsync();
    server.takeRequest(10, TimeUnit.SECONDS);

    client.closeNow();

    assertThat(failureOf(f)).isInstanceOfSatisfying(OutcomeUnknownException.class,
        u -> assertThat(u.reason()).isEqualTo("client-closed"));
    assertThat(server.getRequestCount()).isEqualTo(1); // no query GET
    assertThat(own.isShutdown()).isFalse(); // the user's scheduler is the user's
    own.shutdown();
  }
}
