package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.EngineAccess;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationResult;
import io.github.resilienthttp.OutcomeQuery;
import io.github.resilienthttp.OutcomeQueryPolicy;
import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.AsyncOperationPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.testkit.AsyncJobServer;
import io.github.resilienthttp.testkit.AsyncJobServer.JobScript;
import io.github.resilienthttp.testkit.LookupPaymentsServer;
import io.github.resilienthttp.testkit.LookupPaymentsServer.Submit;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One run, one owner (issue 21): the defects found in the layer above the retry loop, each on real
 * sockets, on the blocking and the non-blocking path, hedges over HTTP/1.1 and HTTP/2. Hedges
 * never re-send a body that may be sent once; a hedge whose start throws gives back its own
 * permits; an async outcome query holds no thread; whatever completes the returned future stops
 * the operation; a cancel and a returned response race cleanly; operationEnded follows
 * operationStarted; the dispatcher's queue is not taken for slowness; cancelled slow losers count
 * in the percentile delay.
 */
@Timeout(30)
class RunOwnershipTest {
  private static final MediaType TEXT = MediaType.get("text/plain");

  private MockWebServer server;
  private OkHttpClient okHttp;
  private final Events events = new Events();

  @AfterEach
  void tearDown() {
    if (okHttp != null) {
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }
    if (server != null) {
      server.close();
    }
  }

  static List<Arguments> protocolsAndPaths() {
    return Arrays.asList(Arguments.of(Protocol.HTTP_1_1, false), Arguments.of(Protocol.HTTP_1_1, true),
        Arguments.of(Protocol.H2_PRIOR_KNOWLEDGE, false),
        Arguments.of(Protocol.H2_PRIOR_KNOWLEDGE, true));
  }

  private void start(Protocol protocol, OkHttpClient.Builder okHttpBuilder) throws IOException {
    server = new MockWebServer();
    if (protocol == Protocol.H2_PRIOR_KNOWLEDGE) {
      server.setProtocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
      okHttpBuilder.protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
    }
    server.start();
    okHttp = okHttpBuilder.build();
  }

  private ResilientHttpClient.Builder client(HedgingPolicy hedging) {
    ResilientHttpClient.Builder b = ResilientHttpClient.wrap(okHttp);
    if (hedging != null) {
      b.hedging(hedging);
    }
    return b.retryBudget(RetryBudget.unlimited()).addListener(events)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10)))
            .deadline(Duration.ofSeconds(10)).build());
  }

  private static Response run(Operation op, boolean async) throws Exception {
    if (!async) {
      return op.execute();
    }
    try {
      return op.executeAsync().get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }

  /** A body that may be read once (a stream), counting how often it was written. */
  static final class OneShotBody extends RequestBody {
    final AtomicInteger writes = new AtomicInteger();

    @Override
    public MediaType contentType() {
      return TEXT;
    }

    @Override
    public boolean isOneShot() {
      return true;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      writes.incrementAndGet();
      sink.writeUtf8("the only copy of this upload");
    }
  }

  // ---------------------------------------------------------------- hedges and bodies

  /** The first request is answered "stored" after 400 ms, a second one "copy" at once. */
  private void startWithASlowAnswerThenAFastOne(Protocol protocol) throws IOException {
    start(protocol, new OkHttpClient.Builder());
    server.enqueue(new MockResponse.Builder().headersDelay(400, TimeUnit.MILLISECONDS).body("stored")
        .build());
    server.enqueue(new MockResponse.Builder().body("copy").build());
  }

  @ParameterizedTest(name = "{0} async={1}")
  @MethodSource("protocolsAndPaths")
  void aOneShotBodyIsNeverHedged(Protocol protocol, boolean async) throws Exception {
    startWithASlowAnswerThenAFastOne(protocol);
    OneShotBody body = new OneShotBody();
    Request put = new Request.Builder().url(server.url("/files/a")).put(body).build();
    ResilientHttpClient client = client(HedgingPolicy.fixedDelay(Duration.ofMillis(50))).build();
    try (Response r = run(client.operation(put), async)) {
      assertThat(r.body().string()).isEqualTo("stored");
    }
    assertThat(body.writes).hasValue(1);
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST);
  }

  @ParameterizedTest(name = "{0} async={1}")
  @MethodSource("protocolsAndPaths")
  void aBodyAboveTheReplayBoundIsNeverHedged(Protocol protocol, boolean async) throws Exception {
    startWithASlowAnswerThenAFastOne(protocol);
    Request put = new Request.Builder().url(server.url("/files/a"))
        .put(RequestBody.create("x".repeat(100), TEXT)).build();
    ResilientHttpClient client = client(HedgingPolicy.fixedDelay(Duration.ofMillis(50)))
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).maxReplayableBodyBytes(10)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .build();
    try (Response r = run(client.operation(put), async)) {
      assertThat(r.body().string()).isEqualTo("stored");
    }
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST);
  }

  @ParameterizedTest(name = "{0} async={1}")
  @MethodSource("protocolsAndPaths")
  void aHedgeWhoseStartThrowsGivesBackItsOwnPermits(Protocol protocol, boolean async)
      throws Exception {
    AtomicInteger callStarts = new AtomicInteger();
    start(protocol, new OkHttpClient.Builder().eventListener(new EventListener() {
      @Override
      public void callStart(Call call) {
        if (callStarts.incrementAndGet() == 2) {
          throw new IllegalStateException("a user EventListener.callStart that throws");
        }
      }
    }));
    server.enqueue(new MockResponse.Builder().headersDelay(400, TimeUnit.MILLISECONDS).build());
    server.enqueue(new MockResponse.Builder().build());
    ResilientHttpClient client = client(HedgingPolicy.fixedDelay(Duration.ofMillis(50)))
        .bulkhead(BulkheadConfig.custom().maxConcurrentCalls(2).maxWaitDuration(Duration.ZERO)
            .build())
        .build();
    Operation op = client.operation(new Request.Builder().url(server.url("/item")).build());
    assertThatThrownBy(() -> run(op, async)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("callStart");
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
        client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls()).isEqualTo(2));
    assertThat(events.endedCount).hasValue(1);
  }

  // ---------------------------------------------------------------- hedges and the dispatcher

  @ParameterizedTest(name = "{0} async={1}")
  @MethodSource("protocolsAndPaths")
  void aHedgeTheDispatcherWouldQueueIsNotSentNorReported(Protocol protocol, boolean async)
      throws Exception {
    start(protocol, new OkHttpClient.Builder());
    okHttp.dispatcher().setMaxRequestsPerHost(1);
    server.enqueue(new MockResponse.Builder().headersDelay(400, TimeUnit.MILLISECONDS).body("slow")
        .build());
    server.enqueue(new MockResponse.Builder().body("fast").build());
    ResilientHttpClient client = client(HedgingPolicy.fixedDelay(Duration.ofMillis(50))).build();
    Operation op = client.operation(new Request.Builder().url(server.url("/item")).build());
    try (Response r = run(op, async)) {
      assertThat(r.body().string()).isEqualTo("slow");
    }
    assertThat(op.attempts()).isEqualTo(1);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} async={1}")
  @MethodSource("protocolsAndPaths")
  void aCopysHedgingDelayRunsFromWhenItIsOnTheWire(Protocol protocol, boolean async)
      throws Exception {
    start(protocol, new OkHttpClient.Builder());
    okHttp.dispatcher().setMaxRequestsPerHost(2);
    List<Long> hedgedArrivals = new CopyOnWriteArrayList<>();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        if (request.getUrl().encodedPath().equals("/busy")) {
          Thread.sleep(500);
          return new MockResponse.Builder().body("busy").build();
        }
        hedgedArrivals.add(System.nanoTime());
        return new MockResponse.Builder().headersDelay(300, TimeUnit.MILLISECONDS).body("item")
            .build();
      }
    });
    ResilientHttpClient client = client(HedgingPolicy.fixedDelay(Duration.ofMillis(100))).build();
    Request busy = new Request.Builder().url(server.url("/busy")).build();
    // Two unhedged operations take both of the host's slots for 500 ms.
    CompletableFuture<Response> b1 = client.operation(busy).hedging(null).executeAsync();
    CompletableFuture<Response> b2 = client.operation(busy).hedging(null).executeAsync();
    await().atMost(Duration.ofSeconds(5)).until(() -> okHttp.dispatcher().runningCallsCount() == 2);
    Operation op = client.operation(new Request.Builder().url(server.url("/item")).build());
    try (Response r = run(op, async)) {
      assertThat(r.body().string()).isEqualTo("item");
    }
    b1.get(5, TimeUnit.SECONDS).close();
    b2.get(5, TimeUnit.SECONDS).close();
    // Queued for about 500 ms, then on the wire: the hedge follows its copy by the hedging delay,
    // not at once (which is what a clock started at enqueue would do).
    assertThat(hedgedArrivals).hasSize(2);
    assertThat(TimeUnit.NANOSECONDS.toMillis(hedgedArrivals.get(1) - hedgedArrivals.get(0)))
        .isGreaterThanOrEqualTo(50);
  }

  @ParameterizedTest(name = "{0} async={1}")
  @MethodSource("protocolsAndPaths")
  void aCancelledSlowLoserCountsInThePercentileDelay(Protocol protocol, boolean async)
      throws Exception {
    start(protocol, new OkHttpClient.Builder());
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).body("slow").build());
    server.enqueue(new MockResponse.Builder().body("fast").build());
    ResilientHttpClient client = client(HedgingPolicy.fixedDelay(Duration.ofMillis(200))).build();
    Request get = new Request.Builder().url(server.url("/item")).build();
    try (Response r = run(client.operation(get), async)) {
      assertThat(r.body().string()).isEqualTo("fast");
    }
    // Two samples: the hedge's answer, and the first copy, cancelled after 200 ms and more without
    // one (its latency is at least that).
    long p99 = EngineAccess.percentile(client, get.url(), 99, 2);
    assertThat(p99).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
  }

  // ---------------------------------------------------------------- no thread held

  @Test
  void anAsyncOutcomeQueryHoldsNoThreadItsGetsAreEnqueuedAndItsWaitsScheduled() throws Exception {
    LookupPaymentsServer payments = new LookupPaymentsServer();
    List<Boolean> blockingLookups = new CopyOnWriteArrayList<>();
    List<Duration> sleeps = new CopyOnWriteArrayList<>();
    okHttp = new OkHttpClient.Builder().addInterceptor(chain -> {
      if (chain.request().url().encodedPath().contains("lookup")
          || chain.request().url().queryParameter("reference") != null) {
        blockingLookups.add(inBlockingExecute());
      }
      return chain.proceed(chain.request());
    }).build();
    TimeSource recording = new TimeSource() {
      @Override
      public long nanoTime() {
        return System.nanoTime();
      }

      @Override
      public java.time.Instant now() {
        return java.time.Instant.now();
      }

      @Override
      public void sleep(Duration d) throws InterruptedException {
        sleeps.add(d);
        TimeSource.system().sleep(d);
      }

      @Override
      public void sleep(Duration d, java.util.concurrent.Future<?> wakeUp)
          throws InterruptedException {
        sleeps.add(d);
        TimeSource.system().sleep(d, wakeUp);
      }
    };
    try {
      payments.script(Submit.CHARGE_THEN_DROP).lookupFaults(503);
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(recording)
          .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10))).build())
          .build();
      try (Response r = charge(client, payments, Duration.ofMillis(20)).executeAsync()
          .get(10, TimeUnit.SECONDS)) {
        assertThat(OutcomeQuery.foundByQuery(r)).isTrue();
      }
      assertThat(payments.lookups()).isEqualTo(2); // a 503, then the answer
      assertThat(blockingLookups).hasSize(2).containsOnly(false);
      assertThat(sleeps).isEmpty();
    } finally {
      payments.close();
    }
  }

  /** A keyless charge whose lost answer is settled by looking it up after {@code grace}. */
  private static Operation charge(ResilientHttpClient client, LookupPaymentsServer payments,
      Duration grace) {
    Request post = new Request.Builder().url(payments.url("/payments"))
        .post(RequestBody.create("{\"amount\":100,\"reference\":\"order-42\"}",
            MediaType.get("application/json"))).build();
    OutcomeQueryPolicy q = OutcomeQueryPolicy.builder(
        OutcomeQuery.lookup((request, key) -> payments.lookupUrl("order-42")))
        .graceDelay(grace).build();
    return client.operation(post).sendIdempotencyKey(false).outcomeQuery(q);
  }

  /** Whether the calling thread is inside OkHttp's blocking {@code Call.execute()}. */
  private static boolean inBlockingExecute() {
    for (StackTraceElement e : Thread.currentThread().getStackTrace()) {
      if (e.getClassName().equals("okhttp3.internal.connection.RealCall")
          && e.getMethodName().equals("execute")) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------- the returned future

  @Test
  void orTimeoutOnTheReturnedFutureStopsAnOutcomeQuery() throws Exception {
    LookupPaymentsServer payments = new LookupPaymentsServer();
    okHttp = new OkHttpClient();
    try {
      payments.script(Submit.CHARGE_THEN_DROP);
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
          .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10))).build())
          .build();
      CompletableFuture<Response> f = charge(client, payments, Duration.ofMillis(300))
          .executeAsync();
      await().atMost(Duration.ofSeconds(5)).until(() -> payments.submits() == 1);
      f.orTimeout(1, TimeUnit.MILLISECONDS);
      assertThat(f).failsWithin(Duration.ofSeconds(5));
      Thread.sleep(800); // past the grace delay: a query that still ran would have arrived
      assertThat(payments.lookups()).isZero();
      assertThat(payments.submits()).isEqualTo(1);
    } finally {
      payments.close();
    }
  }

  @Test
  void completeExceptionallyOnTheReturnedFutureStopsAnOperationWithAnOutbox() throws Exception {
    start(Protocol.HTTP_1_1, new OkHttpClient.Builder());
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return new MockResponse.Builder().code(503).build();
      }
    });
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(50).backoff(Backoff.fixed(Duration.ofMillis(50)))
            .deadline(Duration.ofSeconds(20)).build())
        .build();
    Outbox outbox = Outbox.inMemory();
    CompletableFuture<Response> f = client.operation(new Request.Builder().url(server.url("/x"))
        .build()).parkIndefiniteOutcomes(outbox).executeAsync();
    await().atMost(Duration.ofSeconds(5)).until(() -> server.getRequestCount() >= 2);
    f.completeExceptionally(new IOException("the caller gave up"));
    Thread.sleep(150); // an attempt in flight when it gave up may still arrive
    int after = server.getRequestCount();
    Thread.sleep(300);
    assertThat(server.getRequestCount()).isEqualTo(after);
  }

  @Test
  void orTimeoutOnAnAwaitCompletionAsyncStopsPolling() throws Exception {
    AsyncJobServer jobs = new AsyncJobServer(TimeSource.system())
        .script(JobScript.succeedsAfterPolls(1_000));
    okHttp = new OkHttpClient();
    try {
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).build();
      Request submit = new Request.Builder().url(jobs.url("/jobs"))
          .post(RequestBody.create("{}", MediaType.get("application/json"))).build();
      CompletableFuture<Response> f = client.operation(submit).awaitCompletionAsync(
          AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(5))
              .maxPollInterval(Duration.ofMillis(20)).deadline(Duration.ofSeconds(20)).build());
      await().atMost(Duration.ofSeconds(5)).until(() -> jobs.seen("GET", "/status").size() >= 2);
      f.orTimeout(1, TimeUnit.MILLISECONDS);
      assertThat(f).failsWithin(Duration.ofSeconds(5));
      Thread.sleep(100); // a poll in flight when it timed out may still arrive
      int after = jobs.seen("GET", "/status").size();
      Thread.sleep(300);
      assertThat(jobs.seen("GET", "/status")).hasSize(after);
    } finally {
      jobs.close();
    }
  }

  // ---------------------------------------------------------------- cancel and end

  @ParameterizedTest(name = "async={0}")
  @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
  void aCancelRacingAReturnedResponseNeverCancelsTheCallOfAResponseTheCallerHolds(boolean async)
      throws Exception {
    List<Call> canceledCalls = new CopyOnWriteArrayList<>();
    start(Protocol.HTTP_1_1, new OkHttpClient.Builder().eventListener(new EventListener() {
      @Override
      public void canceled(Call call) {
        canceledCalls.add(call);
      }
    }));
    server.enqueue(new MockResponse.Builder().body("x".repeat(64 * 1024)).build());
    AtomicReference<Operation> self = new AtomicReference<>();
    ResilientHttpClient client = client(null).addListener(new OperationListener() {
      @Override
      public void attemptEnded(OperationInfo operation, int attempt, AttemptKind kind, int status,
          IOException failure, io.github.resilienthttp.Decision decision, Duration duration) {
        self.get().cancel(); // the cancel lands between the final answer and its return
      }
    }).build();
    Operation op = client.operation(new Request.Builder().url(server.url("/item")).build());
    self.set(op);
    Response returned = null;
    Throwable thrown = null;
    try {
      returned = run(op, async);
    } catch (Exception e) {
      thrown = e;
    }
    if (returned != null) {
      // The response won: its call was left alone and its body is readable.
      try (Response r = returned) {
        assertThat(r.body().string()).hasSize(64 * 1024);
      }
      assertThat(canceledCalls).isEmpty();
      assertThat(events.ended.get().outcome()).isEqualTo(OperationResult.Outcome.SUCCESS);
    } else {
      // The cancel won: the caller is told so, and so are the listeners.
      await().atMost(Duration.ofSeconds(5)).until(() -> events.endedCount.get() == 1);
      assertThat(thrown).satisfiesAnyOf(
          t -> assertThat(t).isInstanceOf(java.util.concurrent.CancellationException.class),
          t -> assertThat(((OperationFailure) t).reason()).isEqualTo("canceled"));
      assertThat(events.ended.get().outcome()).isEqualTo(OperationResult.Outcome.CANCELED);
    }
  }

  static List<Arguments> paths() {
    return Arrays.asList(Arguments.of(false, false), Arguments.of(true, false),
        Arguments.of(false, true), Arguments.of(true, true));
  }

  @ParameterizedTest(name = "async={0} hedged={1}")
  @MethodSource("paths")
  void operationEndedIsNeverReportedWithoutOperationStarted(boolean async, boolean hedged)
      throws Exception {
    start(Protocol.HTTP_1_1, new OkHttpClient.Builder());
    ResilientHttpClient client =
        client(hedged ? HedgingPolicy.fixedDelay(Duration.ofMillis(50)) : null).build();
    Operation op = client.operation(new Request.Builder().url(server.url("/item")).build());
    op.cancel(); // before it runs: it ends at once, without sending anything
    assertThatThrownBy(() -> run(op, async)).isInstanceOfAny(IOException.class,
        java.util.concurrent.CancellationException.class);
    await().atMost(Duration.ofSeconds(5)).until(() -> events.endedCount.get() == 1);
    assertThat(events.sequence).containsExactly("started", "ended");
    assertThat(server.getRequestCount()).isZero();
  }

  /** Records the events the tests look at. */
  static final class Events implements OperationListener {
    final List<AttemptKind> kinds = new CopyOnWriteArrayList<>();
    final List<String> sequence = new CopyOnWriteArrayList<>();
    final AtomicReference<OperationResult> ended = new AtomicReference<>();
    final AtomicInteger endedCount = new AtomicInteger();

    @Override
    public void operationStarted(OperationInfo operation) {
      sequence.add("started");
    }

    @Override
    public void attemptStarted(OperationInfo operation, int attempt, AttemptKind kind) {
      kinds.add(kind);
    }

    @Override
    public void operationEnded(OperationInfo operation, OperationResult result) {
      sequence.add("ended");
      ended.set(result);
      endedCount.incrementAndGet();
    }
  }
}
