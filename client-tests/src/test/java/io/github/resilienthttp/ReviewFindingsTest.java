package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Review of the one-object engine (issue 26): lifecycle and watchdog facts on real loopback
 * sockets, HTTP/1.1 and HTTP/2.
 */
class ReviewFindingsTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private MockWebServer server;
  private OkHttpClient okHttp;
  private final List<ResilientHttpClient> clients = new ArrayList<>();

  static List<Protocol> protocols() {
    return List.of(Protocol.HTTP_1_1, Protocol.H2_PRIOR_KNOWLEDGE);
  }

  static List<Arguments> asyncOrNotAndProtocols() {
    List<Arguments> all = new ArrayList<>();
    for (Protocol p : protocols()) {
      all.add(Arguments.of(false, p));
      all.add(Arguments.of(true, p));
    }
    return all;
  }

  private void start(Protocol protocol) throws IOException {
    server = new MockWebServer();
    OkHttpClient.Builder b = new OkHttpClient.Builder();
    if (protocol == Protocol.H2_PRIOR_KNOWLEDGE) {
      server.setProtocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
      b.protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
    }
    server.start();
    okHttp = b.build();
  }

  @AfterEach
  void tearDown() {
    clients.forEach(ResilientHttpClient::closeNow);
    if (okHttp != null) {
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }
    if (server != null) {
      server.close();
    }
  }

  private ResilientHttpClient client(ResilientHttpClient.Builder b) {
    ResilientHttpClient c = b.build();
    clients.add(c);
    return c;
  }

  private ResilientHttpClient.Builder builder() {
    return ResilientHttpClient.wrap(okHttp).retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(60)))
            .deadline(Duration.ofMinutes(5)).build());
  }

  private Request get() {
    return new Request.Builder().url(server.url("/orders/1")).build();
  }

  private Request charge() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"o-1\"}", JSON)).build();
  }

  private static Throwable failureOf(CompletableFuture<Response> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS).close();
      throw new AssertionError("expected a failure");
    } catch (ExecutionException e) {
      return e.getCause() instanceof CompletionException c ? c.getCause() : e.getCause();
    }
  }

  // ------------------------------------------------------------------ the watchdog forgets

  /**
   * A hedged operation whose winning answer has an empty body (a 204, or Content-Length 0): OkHttp
   * reports that call's end before the driver judges it, and {@code Execution.watchWinner} then
   * clears {@code watchedCallEnded} again, so the watchdog keeps the operation (and its calls)
   * until its deadline, 5 minutes here. The non-hedged twin is
   * DeadlineAndInterruptTest.operationsWhoseBodyEndsAtOnceAreForgottenLongBeforeTheirDeadline.
   */
  @ParameterizedTest(name = "async={0} on {1}")
  @MethodSource("asyncOrNotAndProtocols")
  void aHedgedOperationWhoseWinnerHasAnEmptyBodyIsForgottenLongBeforeItsDeadline(boolean async,
      Protocol protocol) throws Exception {
    start(protocol);
    ResilientHttpClient client = client(builder()
        .hedging(HedgingPolicy.fixedDelay(Duration.ofSeconds(30))));
    server.enqueue(new MockResponse.Builder().code(204).build());

    Operation op = client.operation(get());
    Response r = async ? op.executeAsync().get(10, TimeUnit.SECONDS) : op.execute();
    assertThat(r.code()).isEqualTo(204);
    r.close();

    assertThat(op.attempts()).isEqualTo(1);
    assertThat(server.getRequestCount()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(3))
        .until(() -> client.runtime().lifecycle().runningCount() == 0);
    await().atMost(Duration.ofSeconds(3))
        .until(() -> client.runtime().deadlineWatchdog().watchedCount() == 0);
  }

  /**
   * The same when the winner is not the latest copy: the first copy answers 204 after the hedge
   * went out; its call's end was reported while the hedge's call was the watched one (ignored),
   * and {@code watchWinner} then makes it the watched call as one not ended yet.
   */
  @ParameterizedTest(name = "async={0} on {1}")
  @MethodSource("asyncOrNotAndProtocols")
  void aHedgedOperationWhoseEarlierCopyWinsWithAnEmptyBodyIsForgottenLongBeforeItsDeadline(
      boolean async, Protocol protocol) throws Exception {
    start(protocol);
    ResilientHttpClient client = client(builder()
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50))));
    server.enqueue(new MockResponse.Builder().code(204)
        .headersDelay(600, TimeUnit.MILLISECONDS).build());
    server.enqueue(new MockResponse.Builder().code(200).body("late")
        .headersDelay(30, TimeUnit.SECONDS).build());

    Operation op = client.operation(get());
    Response r = async ? op.executeAsync().get(10, TimeUnit.SECONDS) : op.execute();
    assertThat(r.code()).isEqualTo(204);
    r.close();

    assertThat(op.attempts()).isEqualTo(2);
    assertThat(OperationResult.of(r).orElseThrow().winningAttempt()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(3))
        .until(() -> client.runtime().lifecycle().runningCount() == 0);
    await().atMost(Duration.ofSeconds(3))
        .until(() -> client.runtime().deadlineWatchdog().watchedCount() == 0);
  }

  // ------------------------------------------------------------------ plain calls cancelled

  /**
   * A plain call (execute or enqueue) that its caller cancels while it waits between attempts:
   * the wait wakes at once, nothing more is sent, and nothing is left registered or watched.
   */
  @ParameterizedTest(name = "enqueue={0} on {1}")
  @MethodSource("asyncOrNotAndProtocols")
  void aPlainCallCancelledByItsCallerInBackoffEndsAtOnceAndLeavesNothing(boolean enqueue,
      Protocol protocol) throws Exception {
    start(protocol);
    server.enqueue(new MockResponse.Builder().code(503).build());
    CountDownLatch waiting = new CountDownLatch(1);
    ResilientHttpClient client = client(builder().addListener(new OperationListener() {
      @Override
      public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
          boolean fromRetryAfter) {
        waiting.countDown();
      }
    }));
    Call call = client.okHttpClient().newCall(get());
    CompletableFuture<Response> f = new CompletableFuture<>();
    if (enqueue) {
      call.enqueue(new okhttp3.Callback() {
        @Override
        public void onFailure(Call c, IOException e) {
          f.completeExceptionally(e);
        }

        @Override
        public void onResponse(Call c, Response response) {
          f.complete(response);
        }
      });
    } else {
      CompletableFuture.runAsync(() -> {
        try {
          f.complete(call.execute());
        } catch (IOException e) {
          f.completeExceptionally(e);
        }
      });
    }
    assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(10))
        .until(() -> client.runtime().lifecycle().runningCount() == 1);

    long before = System.nanoTime();
    call.cancel();

    Throwable e = failureOf(f);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before)).isLessThan(5_000);
    assertThat(e).isInstanceOfSatisfying(ResilientHttpException.class, x -> {
      assertThat(x.reason()).isEqualTo("canceled");
      assertThat(x.attempts()).isEqualTo(1);
    });
    assertThat(server.getRequestCount()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(3))
        .until(() -> client.runtime().lifecycle().runningCount() == 0);
    await().atMost(Duration.ofSeconds(3))
        .until(() -> client.runtime().deadlineWatchdog().watchedCount() == 0);
  }

  // ------------------------------------------------------------------ pass-through plain calls

  /**
   * closeNow() cancels an attempt in flight, plain calls included (docs/lifecycle.md). A
   * pass-through plain call ({@code OperationOptions.passThrough()}) was registered with the
   * lifecycle before issue 26 ({@code ClientLifecycle.enterPlainCall}); now it registers nowhere
   * and its call is not watched ({@code RetryInterceptor.proceed} returns before
   * {@code watchPlainCall}), so closeNow() does not reach it: it goes on for the server's 30 s.
   */
  @ParameterizedTest(name = "enqueue={0} on {1}")
  @MethodSource("asyncOrNotAndProtocols")
  void closeNowCancelsAPassThroughPlainCallInFlight(boolean enqueue, Protocol protocol)
      throws Exception {
    start(protocol);
    server.enqueue(new MockResponse.Builder().body("late")
        .headersDelay(30, TimeUnit.SECONDS).build());
    ResilientHttpClient client = client(builder());
    Request request = get().newBuilder().tag(OperationOptions.class, OperationOptions.passThrough())
        .build();
    Call call = client.okHttpClient().newCall(request);
    CompletableFuture<Response> f = new CompletableFuture<>();
    if (enqueue) {
      call.enqueue(new okhttp3.Callback() {
        @Override
        public void onFailure(Call c, IOException e) {
          f.completeExceptionally(e);
        }

        @Override
        public void onResponse(Call c, Response response) {
          f.complete(response);
        }
      });
    } else {
      CompletableFuture.runAsync(() -> {
        try {
          f.complete(call.execute());
        } catch (IOException e) {
          f.completeExceptionally(e);
        }
      });
    }
    assertThat(server.takeRequest(10, TimeUnit.SECONDS)).isNotNull();

    client.closeNow();

    Throwable e;
    try {
      f.get(5, TimeUnit.SECONDS).close();
      throw new AssertionError("expected a failure");
    } catch (ExecutionException x) {
      e = x.getCause();
    }
    assertThat(e).isInstanceOf(IOException.class);
    assertThat(call.isCanceled()).isTrue();
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  // ------------------------------------------------------------------ 202 waits

  /**
   * A 202 wait between polls: registered (once), its submit's attempt no longer watched; close()
   * ends it with client-closed, and nothing is left.
   */
  @ParameterizedTest(name = "async={0} on {1}")
  @MethodSource("asyncOrNotAndProtocols")
  void a202WaitBetweenPollsIsRegisteredOnceWatchesNothingAndCloseNowEndsIt(boolean async,
      Protocol protocol) throws Exception {
    start(protocol);
    server.enqueue(new MockResponse.Builder().code(202)
        .addHeader("Operation-Location", server.url("/jobs/j1/status").toString())
        .addHeader("Retry-After", "60").build());
    CountDownLatch pollScheduled = new CountDownLatch(1);
    ResilientHttpClient client = client(builder().addListener(new OperationListener() {
      @Override
      public void pollScheduled(OperationInfo operation, int poll, Duration delay,
          boolean fromRetryAfter) {
        pollScheduled.countDown();
      }
    }));
    AsyncOperationPolicy policy = AsyncOperationPolicy.builder()
        .maxPollInterval(Duration.ofMinutes(2)).deadline(Duration.ofMinutes(5)).build();
    Operation op = client.operation(charge());
    CompletableFuture<Response> wait = async ? op.awaitCompletionAsync(policy)
        : CompletableFuture.supplyAsync(() -> {
          try {
            return op.awaitCompletion(policy);
          } catch (IOException e) {
            throw new CompletionException(e);
          }
        });
    assertThat(pollScheduled.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(client.runtime().lifecycle().runningCount()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(3))
        .until(() -> client.runtime().deadlineWatchdog().watchedCount() == 0);

    client.closeNow();

    assertThat(failureOf(wait)).isInstanceOfSatisfying(PollFailedException.class, p -> {
      assertThat(p.reason()).isEqualTo("client-closed");
      assertThat(p.resumeToken().idempotencyKey()).isEqualTo(op.idempotencyKey());
    });
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(client.runtime().lifecycle().runningCount()).isZero();
    assertThat(client.runtime().deadlineWatchdog().watchedCount()).isZero();
  }
}
