package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import okhttp3.Call;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Edge cases of the one-object engine (issue 26), found by a review: what the deadline watchdog
 * forgets (hedged winners with an empty body), what a close reaches (pass-through plain calls, a
 * 202 wait between polls) and a plain call cancelled by its caller in backoff; on real loopback
 * sockets, HTTP/1.1 and HTTP/2.
 */
class EngineEdgeCasesTest {

  private ProtocolServer loop;

  static List<Arguments> asyncOrNotAndProtocols() {
    return ProtocolServer.withEachProtocol(false, true);
  }

  @AfterEach
  void tearDown() {
    if (loop != null) {
      loop.close();
    }
  }

  // ------------------------------------------------------------------ the watchdog forgets

  /**
   * A hedged operation whose winning answer has an empty body (a 204, or Content-Length 0) is
   * forgotten by the deadline watchdog once it ends, not at its deadline (5 minutes here): OkHttp
   * reports that call's end before the driver judges it, so {@code Execution.watchWinner} must keep
   * an end already reported. The non-hedged twin is
   * DeadlineAndInterruptTest.operationsWhoseBodyEndsAtOnceAreForgottenLongBeforeTheirDeadline.
   */
  @ParameterizedTest(name = "async={0} on {1}")
  @MethodSource("asyncOrNotAndProtocols")
  void aHedgedOperationWhoseWinnerHasAnEmptyBodyIsForgottenLongBeforeItsDeadline(boolean async,
      Protocol protocol) throws Exception {
    loop = ProtocolServer.started(protocol);
    ResilientHttpClient client = loop.client(loop.builder()
        .hedging(HedgingPolicy.fixedDelay(Duration.ofSeconds(30))));
    loop.server.enqueue(new MockResponse.Builder().code(204).build());

    Operation op = client.operation(loop.get());
    Response r = async ? op.executeAsync().get(10, TimeUnit.SECONDS) : op.execute();
    assertThat(r.code()).isEqualTo(204);
    r.close();

    assertThat(op.attempts()).isEqualTo(1);
    assertThat(loop.server.getRequestCount()).isEqualTo(1);
    ProtocolServer.awaitNothingLeft(client);
  }

  /**
   * The same when the winner is not the latest copy: the first copy answers 204 after the hedge
   * went out, so its call's end was reported while the hedge's call was the watched one, and
   * {@code watchWinner} must make it the watched call with that end.
   */
  @ParameterizedTest(name = "async={0} on {1}")
  @MethodSource("asyncOrNotAndProtocols")
  void aHedgedOperationWhoseEarlierCopyWinsWithAnEmptyBodyIsForgottenLongBeforeItsDeadline(
      boolean async, Protocol protocol) throws Exception {
    loop = ProtocolServer.started(protocol);
    ResilientHttpClient client = loop.client(loop.builder()
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50))));
    loop.server.enqueue(new MockResponse.Builder().code(204)
        .headersDelay(600, TimeUnit.MILLISECONDS).build());
    loop.server.enqueue(new MockResponse.Builder().code(200).body("late")
        .headersDelay(30, TimeUnit.SECONDS).build());

    Operation op = client.operation(loop.get());
    Response r = async ? op.executeAsync().get(10, TimeUnit.SECONDS) : op.execute();
    assertThat(r.code()).isEqualTo(204);
    r.close();

    assertThat(op.attempts()).isEqualTo(2);
    assertThat(OperationResult.of(r).orElseThrow().winningAttempt()).isEqualTo(1);
    ProtocolServer.awaitNothingLeft(client);
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
    loop = ProtocolServer.started(protocol);
    loop.server.enqueue(new MockResponse.Builder().code(503).build());
    CountDownLatch waiting = new CountDownLatch(1);
    ResilientHttpClient client =
        loop.client(loop.builder().addListener(WaitSignals.retryScheduled(waiting)));
    Call call = client.okHttpClient().newCall(loop.get());
    CompletableFuture<Response> f = Ways.start(call, enqueue);
    assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(10))
        .until(() -> client.runtime().lifecycle().runningCount() == 1);

    long before = System.nanoTime();
    call.cancel();

    Throwable e = ProtocolServer.failureOf(f);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before)).isLessThan(5_000);
    assertThat(e).isInstanceOfSatisfying(ResilientHttpException.class, x -> {
      assertThat(x.reason()).isEqualTo("canceled");
      assertThat(x.attempts()).isEqualTo(1);
    });
    assertThat(loop.server.getRequestCount()).isEqualTo(1);
    ProtocolServer.awaitNothingLeft(client);
  }

  // ------------------------------------------------------------------ pass-through plain calls

  /**
   * closeNow() cancels an attempt in flight, plain calls included (docs/lifecycle.md), and a
   * pass-through plain call ({@code OperationOptions.passThrough()}) too: the deadline watchdog,
   * through which closeNow() reaches other attempts in flight, does not watch it, so it registers
   * with the lifecycle while it runs. Unreached, it would go on for the server's 30 s.
   */
  @ParameterizedTest(name = "enqueue={0} on {1}")
  @MethodSource("asyncOrNotAndProtocols")
  void closeNowCancelsAPassThroughPlainCallInFlight(boolean enqueue, Protocol protocol)
      throws Exception {
    loop = ProtocolServer.started(protocol);
    loop.server.enqueue(new MockResponse.Builder().body("late")
        .headersDelay(30, TimeUnit.SECONDS).build());
    ResilientHttpClient client = loop.client(loop.builder());
    Request request = loop.get().newBuilder()
        .tag(OperationOptions.class, OperationOptions.passThrough())
        .build();
    Call call = client.okHttpClient().newCall(request);
    CompletableFuture<Response> f = Ways.start(call, enqueue);
    assertThat(loop.server.takeRequest(10, TimeUnit.SECONDS)).isNotNull();

    client.closeNow();

    assertThat(ProtocolServer.failureOf(f)).isInstanceOf(IOException.class);
    assertThat(call.isCanceled()).isTrue();
    assertThat(loop.server.getRequestCount()).isEqualTo(1);
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
    loop = ProtocolServer.started(protocol);
    loop.server.enqueue(new MockResponse.Builder().code(202)
        .addHeader("Operation-Location", loop.server.url("/jobs/j1/status").toString())
        .addHeader("Retry-After", "60").build());
    CountDownLatch pollScheduled = new CountDownLatch(1);
    ResilientHttpClient client =
        loop.client(loop.builder().addListener(WaitSignals.pollScheduled(pollScheduled)));
    AsyncOperationPolicy policy = WaitSignals.LONG_POLLS;
    Operation op = client.operation(loop.charge());
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

    Throwable failure = ProtocolServer.failureOf(wait);
    assertThat(failure).isInstanceOfSatisfying(PollFailedException.class, p -> {
      assertThat(p.reason()).isEqualTo("client-closed");
      assertThat(p.resumeToken().idempotencyKey()).isEqualTo(op.idempotencyKey());
    });
    assertThat(loop.server.getRequestCount()).isEqualTo(1);
    ProtocolServer.awaitNothingLeft(client);
  }
}
