package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hedged requests on real sockets: a slow attempt beaten by a copy, losers closed and the pool
 * clean, a budget refusal that stops new copies only, deadline and cancel that stop everything, a
 * 409 from a hedged keyed POST, and the async path.
 */
@Timeout(30)
class HedgingTest {
  private static final HedgingPolicy HEDGE_AFTER_100_MS =
      HedgingPolicy.fixedDelay(Duration.ofMillis(100));

  private MockWebServer server;
  private OkHttpClient okHttp;
  private final Events events = new Events();

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient();
  }

  @AfterEach
  void tearDown() {
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient.Builder client() {
    return ResilientHttpClient.wrap(okHttp).retryBudget(RetryBudget.unlimited())
        .hedging(HEDGE_AFTER_100_MS).addListener(events)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10)))
            .deadline(Duration.ofSeconds(10)).build());
  }

  private Request get() {
    return new Request.Builder().url(server.url("/item")).build();
  }

  /** Answers by arrival order: the first request is held {@code firstDelayMs}, later ones at once. */
  private void firstSlowThenFast(long firstDelayMs, int fastCode) {
    server.enqueue(new MockResponse.Builder().headersDelay(firstDelayMs, TimeUnit.MILLISECONDS)
        .body("slow").build());
    for (int i = 0; i < 4; i++) {
      server.enqueue(new MockResponse.Builder().code(fastCode).body("fast").build());
    }
  }

  private void awaitPoolClean() {
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
        okHttp.connectionPool().connectionCount()).isEqualTo(okHttp.connectionPool().idleConnectionCount()));
  }

  @Test
  void aSlowFirstAttemptIsBeatenByAHedgeAndTheLoserIsCancelled() throws Exception {
    firstSlowThenFast(5_000, 200);
    ResilientHttpClient client = client().build();
    Operation op = client.operation(get());
    long start = System.nanoTime();
    try (Response r = op.execute()) {
      assertThat(r.body().string()).isEqualTo("fast");
    }
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(elapsedMs).isBetween(90L, 3_000L);
    assertThat(op.attempts()).isEqualTo(2);
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.HEDGE);
    OperationResult result = events.ended.get();
    assertThat(result.outcome()).isEqualTo(OperationResult.Outcome.SUCCESS);
    assertThat(result.winningAttempt()).isEqualTo(2);
    assertThat(result.winningKind()).contains(AttemptKind.HEDGE);
    awaitPoolClean();
  }

  @Test
  void metricsTellHedgesFromRetriesAndRecordWhichCopyWon() throws Exception {
    firstSlowThenFast(5_000, 200);
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    ResilientHttpClient client = client()
        .addListener(new io.github.resilienthttp.micrometer.MicrometerOperationMetrics(registry))
        .build();
    client.operation(get()).execute().close();
    // The slow first attempt was cancelled after the hedge won: only the hedge was classified.
    assertThat(registry.get("http.client.attempts").tag("attempt.kind", "hedge").counter().count())
        .isEqualTo(1);
    assertThat(registry.find("http.client.attempts").tag("attempt.kind", "retry").counters()).isEmpty();
    assertThat(registry.get("http.client.operations").tag("winner.kind", "hedge").counter().count())
        .isEqualTo(1);
    awaitPoolClean();
  }

  @Test
  void theDeadlineStillBoundsReadingTheWinnersBody() throws Exception {
    // The first copy is slow; the hedge answers at once with a body that trickles for 4 s.
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).build());
    server.enqueue(new MockResponse.Builder().body("x".repeat(40))
        .throttleBody(1, 100, TimeUnit.MILLISECONDS).build());
    ResilientHttpClient client = client().build();
    Operation op = client.operation(get()).deadline(Duration.ofMillis(800));
    long start = System.nanoTime();
    try (Response r = op.execute()) {
      assertThat(events.ended.get().winningKind()).contains(AttemptKind.HEDGE);
      assertThatThrownBy(() -> r.body().string()).isInstanceOf(IOException.class);
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_500);
    awaitPoolClean();
  }

  @Test
  void overHttp2TheHedgeIsAStreamBesideTheSlowOneAndTheLoserIsReset() throws Exception {
    server.close();
    server = new MockWebServer();
    server.setProtocols(List.of(okhttp3.Protocol.H2_PRIOR_KNOWLEDGE));
    server.start();
    okHttp = new OkHttpClient.Builder().protocols(List.of(okhttp3.Protocol.H2_PRIOR_KNOWLEDGE))
        .build();
    firstSlowThenFast(5_000, 200);
    Operation op = client().build().operation(get());
    long start = System.nanoTime();
    try (Response r = op.execute()) {
      assertThat(r.protocol()).isEqualTo(okhttp3.Protocol.H2_PRIOR_KNOWLEDGE);
      assertThat(r.body().string()).isEqualTo("fast");
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3_000);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.HEDGE);
    assertThat(events.ended.get().winningKind()).contains(AttemptKind.HEDGE);
    assertThat(server.getRequestCount()).isEqualTo(2);
    awaitPoolClean();
  }

  @Test
  void plainCallsAreNotHedgedEvenWhenTheClientHedges() throws Exception {
    firstSlowThenFast(400, 200);
    ResilientHttpClient client = client().build();
    try (Response r = client.okHttpClient().newCall(get()).execute()) {
      assertThat(r.body().string()).isEqualTo("slow");
    }
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void aFastFirstAttemptSendsNoHedge() throws Exception {
    server.enqueue(new MockResponse.Builder().body("fast").build());
    ResilientHttpClient client = client().build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.body().string()).isEqualTo("fast");
    }
    assertThat(op.attempts()).isEqualTo(1);
    assertThat(events.ended.get().winningKind()).contains(AttemptKind.FIRST);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void aNonFatalAnswerStartsTheNextCopyAtOnceNotAfterTheDelay() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    ResilientHttpClient client = client().hedging(HedgingPolicy.fixedDelay(Duration.ofSeconds(5)))
        .build();
    Operation op = client.operation(get());
    long start = System.nanoTime();
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.HEDGE);
  }

  @Test
  void aBudgetRefusalStopsNewHedgesButNotTheAttemptInFlight() throws Exception {
    firstSlowThenFast(600, 200);
    ResilientHttpClient client = client().retryBudget(RetryBudget.none()).build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.body().string()).isEqualTo("slow");
    }
    assertThat(op.attempts()).isEqualTo(1);
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(events.budgetRefused).isEqualTo(1);
  }

  @Test
  void theDeadlineStopsEveryCopyAndThePoolIsClean() {
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).build());
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).build());
    ResilientHttpClient client = client().build();
    Operation op = client.operation(get()).deadline(Duration.ofMillis(400));
    long start = System.nanoTime();
    assertThatThrownBy(op::execute).isInstanceOf(DeadlineExceededException.class);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(350L, 3_000L);
    assertThat(op.attempts()).isEqualTo(2);
    assertThat(events.endedCount).isEqualTo(1);
    awaitPoolClean();
  }

  @Test
  void cancelStopsEveryCopy() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).build());
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).build());
    ResilientHttpClient client = client().build();
    Operation op = client.operation(get());
    CompletableFuture<Response> future = op.executeAsync();
    await().atMost(Duration.ofSeconds(5)).until(() -> op.attempts() == 2);
    op.cancel();
    assertThat(future).isCancelled();
    await().atMost(Duration.ofSeconds(5)).until(() -> events.endedCount == 1);
    assertThat(events.ended.get().outcome()).isEqualTo(OperationResult.Outcome.CANCELED);
    awaitPoolClean();
  }

  @Test
  void asyncASlowFirstAttemptIsBeatenByAHedge() throws Exception {
    firstSlowThenFast(5_000, 200);
    ResilientHttpClient client = client().build();
    Operation op = client.operation(get());
    try (Response r = op.executeAsync().get(5, TimeUnit.SECONDS)) {
      assertThat(r.body().string()).isEqualTo("fast");
    }
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.HEDGE);
    awaitPoolClean();
  }

  @Test
  void aKeyedPostIsHedgedOnlyWhenOptedInAndA409FromTheHedgeWaitsForTheOriginal() throws Exception {
    AtomicReference<String> firstKey = new AtomicReference<>();
    List<String> keys = new CopyOnWriteArrayList<>();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String key = request.getHeaders().get("Idempotency-Key");
        keys.add(key);
        if (firstKey.compareAndSet(null, key)) {
          return new MockResponse.Builder().headersDelay(600, TimeUnit.MILLISECONDS).code(201)
              .body("charged").build();
        }
        // The draft's answer to a concurrent request with a key still in progress.
        return new MockResponse.Builder().code(409).setHeader("Retry-After", "1")
            .setHeader("Content-Type", "application/problem+json")
            .body("{\"type\":\"https://iana.org/assignments/http-problem-types#conflict\"}").build();
      }
    });
    RequestBody body = RequestBody.create("{\"amount\":5}", MediaType.get("application/json"));
    Request post = new Request.Builder().url(server.url("/payments")).post(body).build();

    // Not opted in: a keyed POST is not hedged.
    ResilientHttpClient plain = client().build();
    Operation notHedged = plain.operation(post);
    try (Response r = notHedged.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(notHedged.attempts()).isEqualTo(1);

    firstKey.set(null);
    keys.clear();
    events.kinds.clear();
    ResilientHttpClient opted = client()
        .hedging(HedgingPolicy.builder().delay(Duration.ofMillis(100)).keyedPosts(true).build())
        .build();
    Operation hedged = opted.operation(post);
    try (Response r = hedged.execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(r.body().string()).isEqualTo("charged");
    }
    assertThat(hedged.attempts()).isEqualTo(2);
    assertThat(keys).hasSize(2).containsOnly(hedged.idempotencyKey());
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.HEDGE);
    assertThat(events.ended.get().winningKind()).contains(AttemptKind.FIRST);
  }

  @Test
  void aKeylessPostIsNeverHedged() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(300, TimeUnit.MILLISECONDS).code(201).build());
    ResilientHttpClient client = client()
        .hedging(HedgingPolicy.builder().delay(Duration.ofMillis(10)).keyedPosts(true).build())
        .build();
    Request post = new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{}", MediaType.get("application/json"))).build();
    Operation op = client.operation(post).sendIdempotencyKey(false);
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(op.attempts()).isEqualTo(1);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void everyCopyFailingEndsLikeTheLastAttemptOfARetryLoop() throws Exception {
    for (int i = 0; i < 3; i++) {
      server.enqueue(new MockResponse.Builder().code(503).build());
    }
    ResilientHttpClient client = client().build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    // One hedge: two copies, then no retry.
    assertThat(op.attempts()).isEqualTo(2);
    assertThat(events.ended.get().reason()).isEqualTo("attempts-exhausted");
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  @Test
  void anOperationCanTurnHedgingOff() throws Exception {
    firstSlowThenFast(300, 200);
    ResilientHttpClient client = client().build();
    Operation op = client.operation(get()).hedging(null);
    try (Response r = op.execute()) {
      assertThat(r.body().string()).isEqualTo("slow");
    }
    assertThat(op.attempts()).isEqualTo(1);
  }

  @Test
  void aBulkheadWithoutAFreePermitSendsNoHedge() throws Exception {
    firstSlowThenFast(500, 200);
    ResilientHttpClient client = client().bulkhead(io.github.resilience4j.bulkhead.BulkheadConfig
        .custom().maxConcurrentCalls(1).maxWaitDuration(Duration.ofSeconds(5)).build()).build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.body().string()).isEqualTo("slow");
    }
    assertThat(op.attempts()).isEqualTo(1);
    assertThat(events.bulkheadRejected).isEqualTo(1);
    assertThat(client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls()).isEqualTo(1);
  }

  @Test
  void aPercentileDelayWaitsItsMaximumUntilLatenciesAreKnownThenFollowsThem() throws Exception {
    HedgingPolicy p95 = HedgingPolicy.builder()
        .percentileDelay(95, Duration.ofMillis(5), Duration.ofSeconds(3)).build();
    ResilientHttpClient client = client().hedging(p95).build();
    // Too few latencies known: the delay is the maximum, so a 400 ms answer is not hedged.
    server.enqueue(new MockResponse.Builder().headersDelay(400, TimeUnit.MILLISECONDS).build());
    Operation cold = client.operation(get());
    cold.execute().close();
    assertThat(cold.attempts()).isEqualTo(1);
    // Fast answers teach the client the target's p95 (a few ms)...
    for (int i = 0; i < HedgingPolicy.MIN_SAMPLES; i++) {
      server.enqueue(new MockResponse.Builder().body("fast").build());
      client.operation(get()).execute().close();
    }
    // ...so a slow one is now hedged within well under the 3 s maximum.
    firstSlowThenFast(5_000, 200);
    events.kinds.clear();
    Operation warm = client.operation(get());
    long start = System.nanoTime();
    try (Response r = warm.execute()) {
      assertThat(r.body().string()).isEqualTo("fast");
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.HEDGE);
    awaitPoolClean();
  }

  @Test
  void policiesAreValidatedAtBuild() {
    assertThatThrownBy(() -> HedgingPolicy.builder().build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delay");
    assertThatThrownBy(() -> HedgingPolicy.builder().delay(Duration.ofMillis(1)).maxHedges(5).build())
        .hasMessage("maxHedges must be in 1..4 but was 5");
    assertThatThrownBy(() -> HedgingPolicy.builder()
        .percentileDelay(100, Duration.ZERO, Duration.ofSeconds(1)).build())
        .hasMessage("percentile must be in 50..99.9 but was 100.0");
    assertThatThrownBy(() -> HedgingPolicy.builder()
        .percentileDelay(95, Duration.ofSeconds(2), Duration.ofSeconds(1)).build())
        .hasMessageContaining("maxDelay");
  }

  /** Records the events the tests look at. */
  static final class Events implements OperationListener {
    final List<AttemptKind> kinds = new CopyOnWriteArrayList<>();
    final AtomicReference<OperationResult> ended = new AtomicReference<>();
    volatile int endedCount;
    volatile int budgetRefused;
    volatile int bulkheadRejected;

    @Override
    public void attemptStarted(OperationInfo operation, int attempt, AttemptKind kind) {
      kinds.add(kind);
    }

    @Override
    public void retryBudgetRefused(OperationInfo operation, int attempt) {
      budgetRefused++;
    }

    @Override
    public void bulkheadRejected(OperationInfo operation, int attempt) {
      bulkheadRejected++;
    }

    @Override
    public synchronized void operationEnded(OperationInfo operation, OperationResult result) {
      ended.set(result);
      endedCount++;
    }
  }

  static <T> T join(CompletableFuture<T> f) throws Exception {
    try {
      return f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }
}
