package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilienthttp.testkit.Effect;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** executeAsync() and the plain OkHttp client: same guarantees as execute(), no thread held. */
class AsyncAndPlainOkHttpTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private IdempotentTestServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void setUp() throws IOException {
    server = IdempotentTestServer.builder().build().start();
    okHttp = new OkHttpClient();
  }

  @AfterEach
  void tearDown() {
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient.Builder client(Duration backoff) {
    return ResilientHttpClient.wrap(okHttp).retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(backoff))
            .deadline(Duration.ofSeconds(20)).build());
  }

  private Request charge(String order) {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"" + order + "\"}", JSON)).build();
  }

  private static final class Ends implements OperationListener {
    final List<OperationResult.Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void operationEnded(OperationInfo operation, OperationResult result) {
      outcomes.add(result.outcome());
    }
  }

  @Test
  void asyncRetriesWithTheSameKeyAndCompletesOffTheSchedulerThread() throws Exception {
    server.script(Fault.status(503), Fault.processThenDrop());
    ResilientHttpClient client = client(Duration.ofMillis(20)).build();
    Operation op = client.operation(charge("a-1"));
    AtomicReference<String> completionThread = new AtomicReference<>();
    CompletableFuture<Integer> status = op.executeAsync().thenApply(r -> {
      completionThread.set(Thread.currentThread().getName());
      try (r) {
        return r.code();
      }
    });
    assertThat(status.get(10, TimeUnit.SECONDS)).isEqualTo(201);
    assertThat(server.keysSeen()).containsExactly(op.idempotencyKey(), op.idempotencyKey(), op.idempotencyKey());
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(op.attempts()).isEqualTo(3).isEqualTo(op.networkRequests());
    assertThat(completionThread.get()).doesNotContain("resilient-http-scheduler");
  }

  @Test
  void asyncFailsWithTheSameExceptionsAsExecute() throws Exception {
    server.script(Fault.processThenDrop());
    Operation op = client(Duration.ofMillis(1)).build().operation(charge("a-2")).sendIdempotencyKey(false);
    assertThatThrownBy(() -> op.executeAsync().get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause().isInstanceOfSatisfying(OutcomeUnknownException.class,
            e -> assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey()));
    assertThat(server.stats().requests()).isEqualTo(1);
    assertThatThrownBy(op::executeAsync).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void twoThousandAsyncOperationsWaitingInBackoffHoldNoThreads() throws Exception {
    int n = 2000;
    Fault[] firstAttemptsFail = new Fault[n];
    java.util.Arrays.fill(firstAttemptsFail, Fault.status(503));
    server.script(firstAttemptsFail);
    ResilientHttpClient client = client(Duration.ofMillis(300)).build();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    // Warm up the pool, the dispatcher and the scheduler so that the baseline includes them.
    server.script(Fault.ok());
    client.operation(new Request.Builder().url(server.url("/warm")).build()).executeAsync()
        .get(10, TimeUnit.SECONDS).close();
    int baseline = threads.getThreadCount();
    AtomicInteger peak = new AtomicInteger(baseline);
    AtomicBoolean sampling = new AtomicBoolean(true);
    Thread sampler = new Thread(() -> {
      while (sampling.get()) {
        peak.accumulateAndGet(threads.getThreadCount(), Math::max);
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
    });
    sampler.start();

    List<CompletableFuture<Integer>> futures = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      // Close each response as it arrives: an unclosed response holds its pooled connection.
      futures.add(client.operation(charge("bulk-" + i)).executeAsync().thenApply(r -> {
        try (r) {
          return r.code();
        }
      }));
    }
    int ok = 0;
    for (CompletableFuture<Integer> f : futures) {
      if (f.get(60, TimeUnit.SECONDS) == 201) {
        ok++;
      }
    }
    sampling.set(false);
    sampler.join();

    assertThat(ok).isEqualTo(n);
    assertThat(server.stats().effects()).isEqualTo(n);
    assertThat(server.duplicateEffects(Effect::body)).isZero();
    // The sampler thread itself is one of them.
    assertThat(peak.get() - baseline).isLessThan(20);
  }

  @Test
  void cancellingDuringTheBackoffSendsNothingMore() throws Exception {
    server.script(Fault.status(503));
    Ends ends = new Ends();
    Operation op = client(Duration.ofMillis(400)).addListener(ends).build().operation(charge("c-1"));
    CompletableFuture<Response> future = op.executeAsync();
    await().atMost(Duration.ofSeconds(5)).until(() -> server.stats().requests() == 1 && op.attempts() == 1);
    assertThat(future.cancel(true)).isTrue();
    // Wait past the would-be retry time, then check that nothing else was sent.
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(700);
    await().atMost(Duration.ofSeconds(2)).until(() -> System.nanoTime() > until);
    assertThat(server.stats().requests()).isEqualTo(1);
    assertThat(op.attempts()).isEqualTo(1);
    assertThat(future).isCancelled();
    assertThatThrownBy(future::join).isInstanceOf(CancellationException.class);
    assertThat(ends.outcomes).containsExactly(OperationResult.Outcome.CANCELED);
  }

  @Test
  void cancellingDuringAnAttemptCancelsTheCallAndReleasesTheBreaker() throws Exception {
    server.script(Fault.delayHeaders(Duration.ofSeconds(3)));
    io.github.resilience4j.circuitbreaker.CircuitBreaker breaker =
        io.github.resilience4j.circuitbreaker.CircuitBreaker.ofDefaults("target");
    ResilientHttpClient client = client(Duration.ofMillis(10)).circuitBreaker(breaker).build();
    Operation op = client.operation(charge("c-2"));
    CompletableFuture<Response> future = op.executeAsync();
    await().atMost(Duration.ofSeconds(5)).until(() -> server.stats().requests() == 1);
    op.cancel();
    assertThat(future).isCancelled();
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
    await().atMost(Duration.ofSeconds(2)).until(() -> System.nanoTime() > until);
    assertThat(server.stats().requests()).isEqualTo(1);
    assertThat(op.attempts()).isEqualTo(1);
    // The cancelled attempt's permission was released, not recorded: the breaker saw no call.
    await().atMost(Duration.ofSeconds(2)).until(() -> breaker.getMetrics().getNumberOfBufferedCalls() == 0);
    assertThat(breaker.getState()).isEqualTo(io.github.resilience4j.circuitbreaker.CircuitBreaker.State.CLOSED);
  }

  @Test
  void deadlinePassingDuringTheWaitsEndsTheFutureWithDeadlineExceeded() {
    server.script(Fault.processThenDrop(), Fault.processThenDrop(), Fault.processThenDrop(),
        Fault.processThenDrop(), Fault.processThenDrop());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofMillis(200)))
            .deadline(Duration.ofMillis(500)).build()).build();
    long start = System.nanoTime();
    CompletableFuture<Response> future = client.operation(charge("d-1")).executeAsync();
    assertThatThrownBy(() -> future.get(5, TimeUnit.SECONDS)).cause()
        .isInstanceOf(DeadlineExceededException.class);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(380L, 2_000L);
    // Attempts at about 0, 200 and 400 ms; a slow machine may fit only two before the deadline.
    assertThat(server.stats().requests()).isBetween(2, 3);
    assertThat(server.stats().effects()).isEqualTo(1);
  }

  @Test
  void plainOkHttpCallsAreOperationsToo() throws Exception {
    server.script(Fault.status(503), Fault.processThenDrop());
    ResilientHttpClient client = client(Duration.ofMillis(10)).build();
    OkHttpClient plain = client.okHttpClient();
    try (Response r = plain.newCall(charge("p-1")).execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(server.keysSeen()).hasSize(3).doesNotContainNull().containsOnly(server.keysSeen().get(0));
    assertThat(server.stats().effects()).isEqualTo(1);
  }

  @Test
  void plainEnqueueAndPerCallOptions() throws Exception {
    server.script(Fault.status(503));
    ResilientHttpClient client = client(Duration.ofMillis(10)).build();
    Request withKey = charge("p-2").newBuilder()
        .tag(OperationOptions.class, OperationOptions.builder().idempotencyKey("order-p-2").build())
        .build();
    CountDownLatch done = new CountDownLatch(1);
    AtomicInteger code = new AtomicInteger();
    client.okHttpClient().newCall(withKey).enqueue(new Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        done.countDown();
      }

      @Override
      public void onResponse(Call call, Response response) {
        code.set(response.code());
        response.close();
        done.countDown();
      }
    });
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(code.get()).isEqualTo(201);
    assertThat(server.keysSeen()).containsExactly("order-p-2", "order-p-2");

    server.reset();
    server.script(Fault.status(503));
    Request optedOut = charge("p-3").newBuilder()
        .tag(OperationOptions.class, OperationOptions.passThrough()).build();
    try (Response r = client.okHttpClient().newCall(optedOut).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(server.keysSeen()).containsExactly((String) null);
  }
}
