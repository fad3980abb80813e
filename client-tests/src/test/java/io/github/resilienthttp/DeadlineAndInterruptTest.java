package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilienthttp.internal.deadline.DeadlineWatchdog;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.Dispatcher;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import okio.Okio;
import okio.Throttler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The total deadline and interrupts, on real time where the point is real time (OkHttp's own timeouts
 * must be shrunk to the deadline). Elapsed-time bounds are generous: they prove "stopped near the
 * deadline", not speed.
 */
class DeadlineAndInterruptTest {
  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(30)).build();
  }

  @AfterEach
  void tearDown() {
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private Request get() {
    return new Request.Builder().url(server.url("/slow")).build();
  }

  @Test
  void slowHeadersPastTheDeadlineEndInDeadlineExceeded() {
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).body("late").build());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofMillis(400)).build()).build();
    Operation op = client.operation(get());

    long start = System.nanoTime();
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(DeadlineExceededException.class, e -> {
      assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
      assertThat(e.attempts()).isEqualTo(1);
      assertThat(e.reason()).isEqualTo("deadline");
      assertThat(e).isInstanceOf(InterruptedIOException.class);
    });
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(elapsedMs).isBetween(380L, 2_000L);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void deadlineOvershootIsBounded() {
    int n = 20;
    for (int i = 0; i < n; i++) {
      server.enqueue(new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS).build());
    }
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofMillis(200)).build()).build();
    long[] overshootMs = new long[n];
    for (int i = 0; i < n; i++) {
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.operation(get()).execute())
          .isInstanceOf(DeadlineExceededException.class);
      overshootMs[i] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) - 200;
    }
    java.util.Arrays.sort(overshootMs);
    System.out.printf("deadline overshoot over %d operations (deadline 200 ms): min %d ms, median %d ms,"
        + " max %d ms%n", n, overshootMs[0], overshootMs[n / 2], overshootMs[n - 1]);
    // Generous: proves "stopped at the deadline", not speed (which belongs to BENCHMARKS.md).
    assertThat(overshootMs[0]).isGreaterThanOrEqualTo(-5);
    assertThat(overshootMs[n - 1]).isLessThan(1_000);
  }

  @Test
  void perOperationDeadlineOverridesThePolicy() {
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).build());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofSeconds(20)).build()).build();
    long start = System.nanoTime();
    assertThatThrownBy(() -> client.operation(get()).deadline(Duration.ofMillis(300)).execute())
        .isInstanceOf(DeadlineExceededException.class);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000L);
  }

  @Test
  void attemptTimeoutEndsASlowAttemptAndTheNextOneSucceeds() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(3, TimeUnit.SECONDS).build());
    server.enqueue(new MockResponse.Builder().code(200).body("ok").build());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().attemptTimeout(Duration.ofMillis(300))
            .backoff(Backoff.none()).deadline(Duration.ofSeconds(10)).build()).build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.body().string()).isEqualTo("ok");
    }
    assertThat(op.attempts()).isEqualTo(2);
  }

  @Test
  void throttledBodyIsBoundedByTheDeadlineToo() throws Exception {
    server.enqueue(new MockResponse.Builder().body("x".repeat(10_000))
        .throttleBody(10, 100, TimeUnit.MILLISECONDS).build());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofMillis(500)).build()).build();
    long start = System.nanoTime();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThatThrownBy(() -> r.body().string()).isInstanceOf(InterruptedIOException.class);
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3_000L);
  }

  @Test
  void aTrickledUploadIsStoppedAtTheDeadline() {
    // Each write is quick, so no write timeout fires: only the deadline's backstop can stop it.
    server.enqueue(new MockResponse.Builder().code(201).build());
    RequestBody trickle = new RequestBody() {
      @Override
      public MediaType contentType() {
        return MediaType.get("application/octet-stream");
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        // 200 bytes at 50 bytes/s, in 1-byte writes: 4 s, each write quick.
        Throttler throttler = new Throttler();
        throttler.bytesPerSecond(50, 1, 1);
        BufferedSink slow = Okio.buffer(throttler.sink(sink));
        for (int i = 0; i < 200; i++) {
          slow.writeByte('x').flush(); // through to the socket
        }
      }
    };
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofMillis(300)).build()).build();
    Operation op = client.operation(new Request.Builder().url(server.url("/upload")).put(trickle).build());

    long start = System.nanoTime();
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(DeadlineExceededException.class, e -> {
      assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
      assertThat(e.attempts()).isEqualTo(1);
    });
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(290L, 2_500L);
    assertThat(op.attempts()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(5)).until(() -> client.runtime().deadlineWatchdog().watchedCount() == 0);
  }

  @Test
  void theDeadlineReplacesTheWrappedClientsCallTimeout() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(600, TimeUnit.MILLISECONDS).body("ok").build());
    OkHttpClient withCallTimeout = okHttp.newBuilder().callTimeout(Duration.ofMillis(200)).build();
    ResilientHttpClient client = ResilientHttpClient.wrap(withCallTimeout)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofSeconds(10)).build()).build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.body().string()).isEqualTo("ok");
    }
    assertThat(op.attempts()).isEqualTo(1);
  }

  @Test
  void finishedOperationsAreForgottenAndAnUnclosedBodyAtItsDeadline() throws Exception {
    for (int i = 0; i < 20; i++) {
      server.enqueue(new MockResponse.Builder().body("ok " + i).build());
    }
    server.enqueue(new MockResponse.Builder().code(404).build());
    server.enqueue(new MockResponse.Builder().body("never read").build());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofMillis(800)).build()).build();
    DeadlineWatchdog watchdog = client.runtime().deadlineWatchdog();
    for (int i = 0; i < 20; i++) {
      try (Response r = client.operation(get()).execute()) {
        assertThat(r.body().string()).isEqualTo("ok " + i);
      }
    }
    client.operation(get()).execute().close(); // a 404, closed unread
    Response leaked = client.operation(get()).execute(); // never closed by the caller

    // Read or closed: forgotten at the next sweep. The unclosed one stays until its deadline...
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.watchedCount() == 1);
    // ...when its call is cancelled, which also frees its connection.
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.watchedCount() == 0);
    assertThatThrownBy(() -> leaked.body().string()).isInstanceOf(InterruptedIOException.class);
    leaked.close();
    await().atMost(Duration.ofSeconds(5)).until(() -> !watchdog.isRunning());
  }

  @Test
  void operationsWhoseBodyEndsAtOnceAreForgottenLongBeforeTheirDeadline() throws Exception {
    // An empty body (204, or Content-Length 0) ends OkHttp's call before execute() returns, so
    // the call's end comes before the operation's: the watchdog must still forget it at the next
    // sweep, not keep it (with its call) until the deadline.
    for (int i = 0; i < 40; i++) {
      server.enqueue(new MockResponse.Builder().code(i % 2 == 0 ? 204 : 200).build());
    }
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofSeconds(60)).build()).build();
    for (int i = 0; i < 20; i++) {
      client.operation(get()).execute().close();
      client.operation(get()).executeAsync().get(5, TimeUnit.SECONDS).close();
    }
    await().atMost(Duration.ofSeconds(2))
        .until(() -> client.runtime().deadlineWatchdog().watchedCount() == 0);
  }

  @Test
  void anAsyncAttemptQueuedInOkHttpsDispatcherPastItsDeadlineFailsAndFreesTheDispatcher()
      throws Exception {
    // One request per host at a time: the second operation's call waits in OkHttp's queue, behind
    // a slow first one, until after its own deadline.
    server.enqueue(new MockResponse.Builder().headersDelay(1_500, TimeUnit.MILLISECONDS).body("slow").build());
    server.enqueue(new MockResponse.Builder().body("later").build());
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequestsPerHost(1);
    OkHttpClient oneAtATime = okHttp.newBuilder().dispatcher(dispatcher).build();
    ResilientHttpClient client = ResilientHttpClient.wrap(oneAtATime).build();

    CompletableFuture<Response> slow = client.operation(get()).deadline(Duration.ofSeconds(10)).executeAsync();
    await().atMost(Duration.ofSeconds(5)).until(() -> server.getRequestCount() == 1);
    Operation queued = client.operation(get()).deadline(Duration.ofMillis(300));
    long start = System.nanoTime();
    CompletableFuture<Response> late = queued.executeAsync();

    assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(DeadlineExceededException.class);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3_000L);
    try (Response r = slow.get(5, TimeUnit.SECONDS)) {
      assertThat(r.body().string()).isEqualTo("slow");
    }
    // Nothing is stuck in OkHttp's dispatcher, and the host is usable again.
    await().atMost(Duration.ofSeconds(5)).until(() -> dispatcher.runningCallsCount() == 0
        && dispatcher.queuedCallsCount() == 0);
    try (Response r = client.operation(get()).executeAsync().get(5, TimeUnit.SECONDS)) {
      assertThat(r.body().string()).isEqualTo("later");
    }
    assertThat(server.getRequestCount()).isEqualTo(2); // the late operation sent nothing
  }

  @Test
  void executeStartsNoThreadOfItsOwn() throws Exception {
    // The deadline's sweeps run on Okio's watchdog thread, which OkHttp uses anyway: clients that
    // only run blocking operations start no SDK thread, however many there are.
    for (int i = 0; i < 10; i++) {
      server.enqueue(new MockResponse.Builder().body("ok").build());
    }
    long before = sdkThreads();
    for (int i = 0; i < 10; i++) {
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).build();
      try (Response r = client.operation(get()).execute()) {
        assertThat(r.body().string()).isEqualTo("ok");
      }
    }
    assertThat(sdkThreads()).isLessThanOrEqualTo(before);
  }

  private static long sdkThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("resilient-http")).count();
  }

  @Test
  void noWaitPassesTheDeadline() throws Exception {
    for (int i = 0; i < 10; i++) {
      server.enqueue(new MockResponse.Builder().code(503).build());
    }
    FakeTimeSource time = new FakeTimeSource();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(time)
        .retryPolicy(RetryPolicy.builder().maxAttempts(10).backoff(Backoff.fixed(Duration.ofSeconds(3)))
            .deadline(Duration.ofSeconds(10)).build()).build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    // 3 s + 3 s + 3 s = 9 s; a fourth wait would end at 12 s, after the 10 s deadline.
    assertThat(time.sleeps()).containsExactly(Duration.ofSeconds(3), Duration.ofSeconds(3), Duration.ofSeconds(3));
    assertThat(op.attempts()).isEqualTo(4);
    assertThat(time.elapsed()).isLessThanOrEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void interruptDuringTheWaitStopsPromptlyAndKeepsTheFlag() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofSeconds(20)))
            .deadline(Duration.ofSeconds(60)).build()).build();
    CountDownLatch started = new CountDownLatch(1);
    AtomicBoolean flagKept = new AtomicBoolean();
    Thread[] worker = new Thread[1];
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    worker[0] = new Thread(() -> {
      started.countDown();
      try {
        client.operation(get()).execute().close();
        thrown.complete(null);
      } catch (Throwable t) {
        flagKept.set(Thread.currentThread().isInterrupted());
        thrown.complete(t);
      }
    });
    worker[0].start();
    started.await();
    await().atMost(Duration.ofSeconds(5)).until(() -> server.getRequestCount() == 1
        && worker[0].getState() == Thread.State.TIMED_WAITING);
    long start = System.nanoTime();
    worker[0].interrupt();
    Throwable t = thrown.get(5, TimeUnit.SECONDS);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000L);
    assertThat(t).isInstanceOfSatisfying(OperationInterruptedException.class, e -> {
      assertThat(e.attempts()).isEqualTo(1);
      assertThat(e.reason()).isEqualTo("interrupted");
    });
    assertThat(flagKept).isTrue();
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void cancelDuringABlockingBackoffStopsBeforeTheNextAttempt() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(300))).build()).build();
    Operation op = client.operation(get());
    CompletableFuture<Throwable> thrown = CompletableFuture.supplyAsync(() -> {
      try {
        op.execute().close();
        return null;
      } catch (Throwable e) {
        return e;
      }
    });
    await().atMost(Duration.ofSeconds(5)).until(() -> server.getRequestCount() == 1);
    op.cancel();
    assertThat(thrown.get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> assertThat(e.reason()).isEqualTo("canceled"));
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void cancelBeforeExecuteSendsNothing() {
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).build();
    Operation op = client.operation(get());
    op.cancel();
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> assertThat(e.reason()).isEqualTo("canceled"));
    assertThat(server.getRequestCount()).isZero();
  }

  @Test
  void aThreadInterruptedBeforeExecuteSendsNothing() throws InterruptedException, ExecutionException {
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).build();
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      Thread.currentThread().interrupt();
      try {
        client.operation(get()).execute().close();
        thrown.complete(null);
      } catch (Throwable e) {
        thrown.complete(e);
      }
    });
    t.start();
    assertThat(thrown.get()).isInstanceOf(OperationInterruptedException.class);
    assertThat(server.getRequestCount()).isZero();
  }

  @Test
  void lostResponsesAndDeadlineOnAnIdempotentOperation() {
    for (int i = 0; i < 40; i++) {
      server.enqueue(new MockResponse.Builder().onResponseStart(new SocketEffect.CloseSocket()).build());
    }
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().maxAttempts(100).backoff(Backoff.fixed(Duration.ofMillis(50)))
            .deadline(Duration.ofMillis(700)).build()).build();
    long start = System.nanoTime();
    Operation op = client.operation(get());
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(DeadlineExceededException.class,
        e -> assertThat(e.getCause()).isInstanceOf(IOException.class));
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    // Every 50 ms wait fits until the last one would pass the deadline: stop between 650 and 700 ms.
    assertThat(elapsedMs).isBetween(600L, 2_500L);
    assertThat(op.attempts()).isGreaterThan(5);
    // The last attempt may be cut by the deadline before it was written (a connect cut short) or
    // before the server had read all of it; every earlier one reached the server.
    assertThat(op.networkRequests()).isBetween(op.attempts() - 1, op.attempts());
    assertThat(server.getRequestCount()).isBetween(op.attempts() - 1, op.networkRequests());
  }
}
