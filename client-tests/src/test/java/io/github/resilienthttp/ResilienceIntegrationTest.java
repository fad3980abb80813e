package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.FaultMix;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The retry budget, the per-target circuit breaker and the bulkhead, on real loopback sockets against
 * the testkit's idempotent server. Where a bound depends on time, the time is injected (the budget's
 * clock is frozen, so its time floor adds nothing); resilience4j's breaker runs on real time, so its
 * open-state wait is kept short and awaited, never slept.
 */
class ResilienceIntegrationTest {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final Duration OPEN_WAIT = Duration.ofMillis(500);

  private IdempotentTestServer server;
  private OkHttpClient okHttp;
  private final List<Thread> started = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    server = IdempotentTestServer.builder().build().start();
    okHttp = new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(20)).build();
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    server.close();
    for (Thread t : started) {
      t.join(5_000);
    }
    okHttp.connectionPool().evictAll();
  }

  // ------------------------------------------------------------------------------- retry budget

  @Test
  void duringATotalOutageTheBudgetCapsRetriesAtTenPercentOfTrafficPlusTheBucket() throws Exception {
    server.randomFaults(1, FaultMix.builder().status503(1.0).build());
    FakeTimeSource frozen = new FakeTimeSource(); // never advanced: the 3/s floor adds nothing
    RetryBudget budget = RetryBudget.tokenBucketBuilder().timeSource(frozen).build();
    Events events = new Events();
    ResilientHttpClient client = outageClient(budget, frozen, events);

    List<Result> results = inParallel(8, 1_000, i -> run(client.operation(charge("order-" + i))));

    // RetryBudget's guarantee with T = 0: retries <= 0.1 x 1000 first attempts + maxTokens (30).
    int retries = server.stats().requests() - 1_000;
    assertThat(retries).isLessThanOrEqualTo(100 + 30).isGreaterThanOrEqualTo(100);
    assertThat(server.stats().requests()).isLessThanOrEqualTo(1_130);
    assertThat(events.attemptsStarted.get()).isEqualTo(server.stats().requests());
    assertThat(budget.availableTokens()).isLessThan(1.0);
    // A refused retry returns the last answer: every operation ended with the 503 it last got.
    assertThat(results).allSatisfy(r -> assertThat(r.status).isEqualTo(503));
    assertThat(events.budgetRefused.get()).isGreaterThan(0);
    List<OperationResult> ended = List.copyOf(events.ended);
    assertThat(ended).hasSize(1_000);
    assertThat(ended.stream().filter(e -> e.reason().equals("retry-budget-exhausted")))
        .hasSize(events.budgetRefused.get())
        .allSatisfy(e -> {
          assertThat(e.outcome()).isEqualTo(OperationResult.Outcome.FAILED_RESPONSE);
          assertThat(e.statusCode()).isEqualTo(503);
          assertThat(e.attempts()).isLessThan(5);
        });
    assertThat(ended.stream().filter(e -> e.attempts() == 5))
        .hasSize(1_000 - events.budgetRefused.get());
  }

  @Test
  void withoutABudgetTheSameOutageCostsMaxAttemptsRequestsPerOperation() throws Exception {
    server.randomFaults(1, FaultMix.builder().status503(1.0).build());
    Events events = new Events();
    ResilientHttpClient client = outageClient(RetryBudget.unlimited(), new FakeTimeSource(), events);

    List<Result> results = inParallel(8, 1_000, i -> run(client.operation(charge("order-" + i))));

    assertThat(server.stats().requests()).isEqualTo(5_000);
    assertThat(results).allSatisfy(r -> assertThat(r.status).isEqualTo(503));
    assertThat(events.budgetRefused.get()).isZero();
  }

  private ResilientHttpClient outageClient(RetryBudget budget, FakeTimeSource time, Events events) {
    return ResilientHttpClient.wrap(okHttp).timeSource(time).random(new SplittableRandom(5))
        .retryBudget(budget).noCircuitBreaker().addListener(events)
        .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.none()).build())
        .build();
  }

  // ----------------------------------------------------------------------------- circuit breaker

  @Test
  void failingAttemptsOpenTheBreakerWhichRejectsWithoutSendingThenProbesCloseIt() throws Exception {
    Events events = new Events();
    ResilientHttpClient client = breakerClient(smallBreakers(2), 3, events);
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/payments")).orElseThrow();
    server.randomFaults(2, FaultMix.builder().status503(1.0).build());

    // 3 + 3 + 3 failing attempts, then the 10th opens the breaker and stops its own operation.
    for (int i = 0; i < 3; i++) {
      assertThat(run(client.operation(charge("a" + i))).status).isEqualTo(503);
    }
    Result fourth = run(client.operation(charge("a3")));
    assertThat(fourth.status).isEqualTo(503);
    assertThat(fourth.op.attempts()).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(10);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThat(events.lastEnded().reason()).isEqualTo("circuit-breaker-open");

    Operation rejected = client.operation(charge("b"));
    Result r = run(rejected);
    assertThat(r.failure).isInstanceOfSatisfying(CircuitBreakerOpenException.class, e -> {
      assertThat(e.breakerName()).isEqualTo("http://127.0.0.1:" + server.port());
      assertThat(e.waitLeft()).isPositive().isLessThanOrEqualTo(OPEN_WAIT);
      assertThat(e.idempotencyKey()).isEqualTo(rejected.idempotencyKey());
      assertThat(e.idempotencyKeySent()).isTrue();
      assertThat(e.attempts()).isZero();
      assertThat(e.reason()).isEqualTo("circuit-breaker-open");
    });
    for (int i = 0; i < 20; i++) {
      assertThat(run(client.operation(charge("c" + i))).failure)
          .isInstanceOf(CircuitBreakerOpenException.class);
    }
    assertThat(server.stats().requests()).isEqualTo(10);

    server.stopRandomFaults();
    // While open, each poll is rejected locally; after the wait the first poll is a probe.
    await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
        .until(() -> run(client.operation(charge("probe"))).status == 201);
    assertThat(server.stats().requests()).isEqualTo(11);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
    assertThat(run(client.operation(charge("probe-2"))).status).isEqualTo(201);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    for (int i = 0; i < 10; i++) {
      assertThat(run(client.operation(charge("d" + i))).status).isEqualTo(201);
    }
    assertThat(server.stats().requests()).isEqualTo(22);
    assertThat(events.breakerRejected.get()).isGreaterThan(21);
  }

  @Test
  void clientErrorsNeverOpenTheBreaker() throws Exception {
    Events events = new Events();
    ResilientHttpClient client = breakerClient(smallBreakers(2), 3, events);
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/payments")).orElseThrow();
    int[] codes = {404, 400, 422};
    for (int i = 0; i < 200; i++) {
      server.script(Fault.status(codes[i % 3]));
    }

    for (int i = 0; i < 200; i++) {
      assertThat(run(client.operation(charge("order-" + i))).status).isEqualTo(codes[i % 3]);
    }

    assertThat(server.stats().requests()).isEqualTo(200);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    CircuitBreaker.Metrics m = breaker.getMetrics();
    assertThat(m.getFailureRate()).isZero();
    assertThat(m.getNumberOfFailedCalls()).isZero();
    assertThat(m.getNumberOfSuccessfulCalls()).isEqualTo(10); // the whole window
    assertThat(events.breakerRejected.get()).isZero();
  }

  @Test
  void aBurstAgainstAHalfOpenBreakerSendsOnlyThePermittedProbes() throws Exception {
    Events events = new Events();
    ResilientHttpClient client = breakerClient(smallBreakers(2), 1, events);
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/payments")).orElseThrow();
    AtomicReference<Instant> openedAt = watchOpening(breaker);
    openBreaker(client, breaker);

    server.reset();
    server.processingTime(Duration.ofSeconds(1)); // probes stay in flight while the burst arrives
    awaitOpenWaitOver(openedAt);
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(20);
    List<Future<Result>> futures = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      Operation op = client.operation(charge("burst-" + i));
      futures.add(pool.submit(() -> {
        go.await();
        return run(op);
      }));
    }
    go.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> events.breakerRejected.get() == 18);
    // The rejections are made in memory; the two probes may still be on their way to the server.
    await().atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(server.stats().requests()).isEqualTo(2));
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);

    List<Result> results = new ArrayList<>();
    for (Future<Result> f : futures) {
      results.add(f.get(10, TimeUnit.SECONDS));
    }
    pool.shutdown();
    assertThat(results.stream().filter(r -> r.status == 201)).hasSize(2);
    assertThat(results.stream().filter(r -> r.failure instanceof CircuitBreakerOpenException))
        .hasSize(18)
        .allSatisfy(r -> assertThat(((CircuitBreakerOpenException) r.failure).attempts()).isZero());
    assertThat(server.stats().requests()).isEqualTo(2);
    assertThat(server.stats().maxConcurrent()).isEqualTo(2);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void anInterruptedProbeKeepsTheServersAnswerAndItsPermissionIsRecorded() throws Exception {
    Events events = new Events();
    ResilientHttpClient client = breakerClient(smallBreakers(1), 1, events);
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/payments")).orElseThrow();
    AtomicReference<Instant> openedAt = watchOpening(breaker);
    openBreaker(client, breaker);

    server.reset();
    server.processingTime(Duration.ofMillis(800));
    awaitOpenWaitOver(openedAt);
    AtomicReference<Result> probe = new AtomicReference<>();
    AtomicReference<Boolean> flagKept = new AtomicReference<>();
    Thread prober = start(() -> {
      probe.set(run(client.operation(charge("probe"))));
      flagKept.set(Thread.currentThread().isInterrupted());
    });
    await().atMost(Duration.ofSeconds(5)).until(() -> server.stats().inFlight() == 1);
    // The only permitted probe is taken: anyone else is rejected without sending.
    assertThat(run(client.operation(charge("other"))).failure)
        .isInstanceOf(CircuitBreakerOpenException.class);

    prober.interrupt();
    prober.join(5_000);
    // The server charged: the caller gets the 201, with its interrupt flag kept, rather than an
    // exception that would invite a retry with a new key. The probe's success is recorded.
    assertThat(probe.get().failure).isNull();
    assertThat(probe.get().status).isEqualTo(201);
    assertThat(probe.get().op.attempts()).isEqualTo(1);
    assertThat(flagKept.get()).isTrue();
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);

    server.processingTime(Duration.ZERO);
    assertThat(run(client.operation(charge("next"))).status).isEqualTo(201);
    assertThat(server.stats().requests()).isEqualTo(2);
    assertThat(server.duplicateEffects()).isZero();
  }

  @Test
  void aProbeCutByTheDeadlineCountsAsAFailureAndReopensTheBreaker() throws Exception {
    Events events = new Events();
    ResilientHttpClient client = breakerClient(smallBreakers(1), 1, events);
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/payments")).orElseThrow();
    AtomicReference<Instant> openedAt = watchOpening(breaker);
    openBreaker(client, breaker);

    server.reset();
    server.processingTime(Duration.ofSeconds(2));
    awaitOpenWaitOver(openedAt);
    Result probe = run(client.operation(charge("probe")).deadline(Duration.ofMillis(300)));
    assertThat(probe.failure).isInstanceOf(DeadlineExceededException.class);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);

    server.processingTime(Duration.ZERO);
    awaitOpenWaitOver(openedAt);
    assertThat(run(client.operation(charge("probe-2"))).status).isEqualTo(201);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  private static CircuitBreakerRegistry smallBreakers(int probes) {
    return CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        .slidingWindowSize(10)
        .minimumNumberOfCalls(10)
        .failureRateThreshold(50)
        .waitDurationInOpenState(OPEN_WAIT)
        .permittedNumberOfCallsInHalfOpenState(probes)
        .automaticTransitionFromOpenToHalfOpenEnabled(false)
        .build());
  }

  private ResilientHttpClient breakerClient(CircuitBreakerRegistry registry, int maxAttempts,
      Events events) {
    return ResilientHttpClient.wrap(okHttp).random(new SplittableRandom(9))
        .retryBudget(RetryBudget.unlimited()).circuitBreakerRegistry(registry).addListener(events)
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.none()).build())
        .build();
  }

  /** Ten failing single attempts: exactly the window, all failures. */
  private void openBreaker(ResilientHttpClient client, CircuitBreaker breaker) throws IOException {
    server.randomFaults(3, FaultMix.builder().status503(1.0).build());
    int before = server.stats().requests();
    while (breaker.getState() != CircuitBreaker.State.OPEN) {
      assertThat(run(client.operation(charge("fail"))).status).isEqualTo(503);
    }
    assertThat(server.stats().requests() - before).isEqualTo(10);
  }

  private static AtomicReference<Instant> watchOpening(CircuitBreaker breaker) {
    AtomicReference<Instant> openedAt = new AtomicReference<>();
    breaker.getEventPublisher().onStateTransition(e -> {
      if (e.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
        openedAt.set(e.getCreationTime().toInstant());
      }
    });
    return openedAt;
  }

  /** resilience4j lets a probe through once its own clock is past the open-state wait. */
  private static void awaitOpenWaitOver(AtomicReference<Instant> openedAt) {
    await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
        .until(() -> Instant.now().isAfter(openedAt.get().plus(OPEN_WAIT).plusMillis(5)));
  }

  // ------------------------------------------------------------------------------------ bulkhead

  @Test
  void theBulkheadCapsConcurrentAttemptsAndReturnsEveryPermit() throws Exception {
    server.processingTime(Duration.ofMillis(20));
    Events events = new Events();
    ResilientHttpClient client = bulkheadClient(4, Duration.ofSeconds(2), 1, events);

    List<Result> results = inParallel(50, 150, i -> run(client.operation(charge("order-" + i))));

    assertThat(results).allSatisfy(r -> assertThat(r.status).isEqualTo(201));
    assertThat(server.stats().maxConcurrent()).isEqualTo(4);
    assertThat(server.stats().effects()).isEqualTo(150);
    assertThat(events.bulkheadRejected.get()).isZero();
    assertThat(client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls()).isEqualTo(4);
  }

  @Test
  void aFullBulkheadWithoutWaitRejectsWithTheKeyAndLeaksNothing() throws Exception {
    server.processingTime(Duration.ofMillis(500));
    Events events = new Events();
    ResilientHttpClient client = bulkheadClient(2, Duration.ZERO, 1, events);
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      ops.add(client.operation(charge("order-" + i)));
    }

    List<Result> results = inParallel(10, 10, i -> run(ops.get(i)));

    List<Result> rejected = results.stream()
        .filter(r -> r.failure instanceof BulkheadFullException).toList();
    assertThat(rejected).hasSize(8).allSatisfy(r -> {
      BulkheadFullException e = (BulkheadFullException) r.failure;
      assertThat(e.idempotencyKey()).isEqualTo(r.op.idempotencyKey());
      assertThat(e.idempotencyKeySent()).isTrue();
      assertThat(e.attempts()).isZero();
      assertThat(e.reason()).isEqualTo("bulkhead-full");
      assertThat(e.waited()).isLessThan(Duration.ofMillis(100));
    });
    assertThat(results.stream().filter(r -> r.status == 201)).hasSize(2);
    assertThat(server.stats().requests()).isEqualTo(2);
    assertThat(events.bulkheadRejected.get()).isEqualTo(8);
    assertThat(events.ended.stream().filter(e -> e.outcome() == OperationResult.Outcome.BULKHEAD_FULL))
        .hasSize(8);
    assertThat(client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls()).isEqualTo(2);
  }

  @Test
  void permitsComeBackAfter503sAndLostResponses() throws Exception {
    server.randomFaults(11, FaultMix.builder().status503(0.3).lostResponse(0.2)
        .dropBeforeProcessing(0.1).build());
    Events events = new Events();
    ResilientHttpClient client = bulkheadClient(2, Duration.ofSeconds(5), 4, events);

    List<Result> results = inParallel(6, 60, i -> run(client.operation(charge("order-" + i))));

    assertThat(server.stats().faulted()).isGreaterThan(20);
    assertThat(events.attemptsStarted.get()).isEqualTo(server.stats().requests());
    assertThat(results).allSatisfy(r -> assertThat(r.failure)
        .satisfiesAnyOf(f -> assertThat(f).isNull(), f -> assertThat(f).isInstanceOf(OutcomeUnknownException.class)));
    assertThat(server.stats().maxConcurrent()).isLessThanOrEqualTo(2);
    assertThat(server.duplicateEffects()).isZero();
    assertThat(client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls()).isEqualTo(2);
  }

  @Test
  void permitsComeBackAfterInterruptsWhileWaitingAndWhileSending() throws Exception {
    server.processingTime(Duration.ofMillis(800));
    Events events = new Events();
    ResilientHttpClient client = bulkheadClient(1, Duration.ofSeconds(10), 1, events);
    AtomicReference<Result> sending = new AtomicReference<>();
    AtomicReference<Result> waiting = new AtomicReference<>();
    Thread holder = start(() -> sending.set(run(client.operation(charge("holder")))));
    await().atMost(Duration.ofSeconds(5)).until(() -> server.stats().inFlight() == 1);
    Thread waiter = start(() -> waiting.set(run(client.operation(charge("waiter")))));
    await().atMost(Duration.ofSeconds(5)).until(() -> waiter.getState() == Thread.State.TIMED_WAITING);

    long interruptedAt = System.nanoTime();
    waiter.interrupt();
    waiter.join(5_000);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - interruptedAt)).isLessThan(500);
    assertThat(waiting.get().failure).isInstanceOfSatisfying(OperationInterruptedException.class,
        e -> assertThat(e.attempts()).isZero());
    holder.interrupt();
    holder.join(5_000);
    // Interrupted while the server charged: the answer is final, so the caller gets it.
    assertThat(sending.get().failure).isNull();
    assertThat(sending.get().status).isEqualTo(201);

    assertThat(server.stats().requests()).isEqualTo(1);
    assertThat(client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls()).isEqualTo(1);
    server.processingTime(Duration.ZERO);
    assertThat(run(client.operation(charge("after"))).status).isEqualTo(201);
  }

  /**
   * The wait is cut just before the deadline, not at the 10 s maximum: the operation failed because
   * of its deadline, so the caller (and the listener) get {@link DeadlineExceededException} caused
   * by the bulkhead's {@link BulkheadFullException}.
   */
  @Test
  void theBulkheadWaitNeverOutlivesTheOperationDeadline() throws Exception {
    server.processingTime(Duration.ofMillis(1500));
    Events events = new Events();
    ResilientHttpClient client = bulkheadClient(1, Duration.ofSeconds(10), 1, events);
    AtomicReference<Result> slow = new AtomicReference<>();
    Thread holder = start(() -> slow.set(run(client.operation(charge("slow")))));
    await().atMost(Duration.ofSeconds(5)).until(() -> server.stats().inFlight() == 1);

    Operation op = client.operation(charge("late")).deadline(Duration.ofMillis(300));
    long start = System.nanoTime();
    Result late = run(op);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(elapsedMs).isBetween(250L, 1_000L);
    assertThat(late.failure).isInstanceOf(DeadlineExceededException.class);
    assertThat(late.failure.getCause()).isInstanceOf(BulkheadFullException.class);
    BulkheadFullException full = (BulkheadFullException) late.failure.getCause();
    assertThat(full.waited()).isBetween(Duration.ofMillis(250), Duration.ofMillis(1_000));
    for (OperationFailure e : List.of((OperationFailure) late.failure, full)) {
      assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
      assertThat(e.attempts()).isZero();
    }
    assertThat(events.lastEnded().outcome()).isEqualTo(OperationResult.Outcome.DEADLINE_EXCEEDED);
    holder.join(5_000);
    assertThat(slow.get().status).isEqualTo(201);
    assertThat(server.stats().requests()).isEqualTo(1);
    assertThat(client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls()).isEqualTo(1);
  }

  private ResilientHttpClient bulkheadClient(int permits, Duration maxWait, int maxAttempts,
      Events events) {
    return ResilientHttpClient.wrap(okHttp).random(new SplittableRandom(13))
        .retryBudget(RetryBudget.unlimited()).noCircuitBreaker().addListener(events)
        .bulkhead(BulkheadConfig.custom().maxConcurrentCalls(permits).maxWaitDuration(maxWait).build())
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.none()).build())
        .build();
  }

  // ------------------------------------------------------------------------------------- helpers

  private Request charge(String order) {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"" + order + "\",\"amount\":1000}", JSON)).build();
  }

  /** What the caller of one operation got: a status (response closed here) or an exception. */
  private record Result(Operation op, int status, IOException failure) {}

  private static Result run(Operation op) {
    try (Response r = op.execute()) {
      return new Result(op, r.code(), null);
    } catch (IOException e) {
      return new Result(op, -1, e);
    }
  }

  /** Runs {@code total} tasks on {@code threads} threads, all released at once; in task order. */
  private static <T> List<T> inParallel(int threads, int total, IntFunction<T> task)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<T>> futures = new ArrayList<>();
      for (int i = 0; i < total; i++) {
        int n = i;
        futures.add(pool.submit(() -> {
          go.await();
          return task.apply(n);
        }));
      }
      go.countDown();
      List<T> out = new ArrayList<>();
      for (Future<T> f : futures) {
        out.add(f.get(30, TimeUnit.SECONDS));
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  private Thread start(Runnable body) {
    Thread t = new Thread(body, "resilience-test-" + started.size());
    started.add(t);
    t.start();
    return t;
  }

  /** Counts what the retry loop reports. */
  private static final class Events implements OperationListener {
    final AtomicInteger attemptsStarted = new AtomicInteger();
    final AtomicInteger budgetRefused = new AtomicInteger();
    final AtomicInteger breakerRejected = new AtomicInteger();
    final AtomicInteger bulkheadRejected = new AtomicInteger();
    final ConcurrentLinkedQueue<OperationResult> ended = new ConcurrentLinkedQueue<>();
    final AtomicReference<OperationResult> last = new AtomicReference<>();

    @Override
    public void attemptStarted(OperationInfo operation, int attempt) {
      attemptsStarted.incrementAndGet();
    }

    @Override
    public void retryBudgetRefused(OperationInfo operation, int attempt) {
      budgetRefused.incrementAndGet();
    }

    @Override
    public void circuitBreakerRejected(OperationInfo operation, String breakerName, int attempt) {
      breakerRejected.incrementAndGet();
    }

    @Override
    public void bulkheadRejected(OperationInfo operation, int attempt) {
      bulkheadRejected.incrementAndGet();
    }

    @Override
    public void operationEnded(OperationInfo operation, OperationResult result) {
      ended.add(result);
      last.set(result);
    }

    OperationResult lastEnded() {
      return last.get();
    }
  }
}
