package io.github.resilienthttp.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.BulkheadFullException;
import io.github.resilienthttp.ConcurrencyLimitExceededException;
import io.github.resilienthttp.ConcurrencyLimitPolicy;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The adaptive concurrency limit on real sockets: an attempt beyond the limit is refused at once and
 * never sent; a refusal (even with a listener that throws) leaves no permit behind; and the limit
 * follows the server's latency, shrinking when answers slow down and growing back when they are
 * fast again (read through {@link ResilientHttpClient#currentConcurrencyLimit}, not timed).
 */
@Timeout(60)
class ConcurrencyLimitTest {
  private final AtomicInteger serverRequests = new AtomicInteger();
  private final AtomicInteger limitedEvents = new AtomicInteger();
  private final CountDownLatch slowArrived = new CountDownLatch(1);
  private final CountDownLatch releaseSlow = new CountDownLatch(1);
  private volatile long delayMillis;
  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        serverRequests.incrementAndGet();
        if (request.getUrl().encodedPath().equals("/slow")) {
          slowArrived.countDown();
          releaseSlow.await(30, TimeUnit.SECONDS);
        }
        return new MockResponse.Builder().code(200).body("ok")
            .headersDelay(delayMillis, TimeUnit.MILLISECONDS).build();
      }
    });
    server.start();
    okHttp = new OkHttpClient();
    okHttp.dispatcher().setMaxRequests(128);
    okHttp.dispatcher().setMaxRequestsPerHost(128); // the limit is the SDK's, not OkHttp's queue
  }

  @AfterEach
  void stop() {
    releaseSlow.countDown();
    okHttp.dispatcher().cancelAll();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client(ConcurrencyLimitPolicy policy, OperationListener listener) {
    return ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).backoff(Backoff.none())
            .deadline(Duration.ofSeconds(30)).build())
        .concurrencyLimit(policy)
        .addListener(listener)
        .build();
  }

  private static ConcurrencyLimitPolicy fixedAtOne() {
    return ConcurrencyLimitPolicy.builder(ConcurrencyLimitPolicy.Algorithm.VEGAS)
        .initialLimit(1).minLimit(1).maxLimit(1).build();
  }

  private Request get(String path) {
    return new Request.Builder().url(server.url(path)).build();
  }

  private OperationListener counting(boolean throwing) {
    return new OperationListener() {
      @Override
      public void limited(OperationInfo operation, int attempt) {
        limitedEvents.incrementAndGet();
        assertThat(attempt).isEqualTo(1);
        if (throwing) {
          throw new IllegalStateException("listener bug in limited()");
        }
      }
    };
  }

  @ParameterizedTest(name = "async={0}, listener throws={1}")
  @org.junit.jupiter.params.provider.CsvSource({"false,false", "true,false", "false,true",
      "true,true"})
  void anAttemptBeyondTheLimitIsRefusedAtOnceNeverSentAndLeavesNoPermit(boolean async,
      boolean throwing) throws Exception {
    ResilientHttpClient client = client(fixedAtOne(), counting(throwing));
    CompletableFuture<Response> slow = client.operation(get("/slow")).executeAsync();
    assertThat(slowArrived.await(10, TimeUnit.SECONDS)).isTrue();

    Throwable refused;
    if (async) {
      CompletableFuture<Response> second = client.operation(get("/fast")).executeAsync();
      refused = catchCompletion(second);
    } else {
      refused = catchBlocking(() -> client.operation(get("/fast")).execute());
    }
    assertThat(refused).isInstanceOf(ConcurrencyLimitExceededException.class)
        .isInstanceOf(BulkheadFullException.class);
    ConcurrencyLimitExceededException e = (ConcurrencyLimitExceededException) refused;
    assertThat(e.reason()).isEqualTo("concurrency-limit");
    assertThat(e.attempts()).isZero();
    assertThat(e.limit()).isEqualTo(1);
    assertThat(e.waited()).isZero();
    assertThat(serverRequests.get()).as("the refused attempt was never sent").isEqualTo(1);
    assertThat(limitedEvents.get()).isEqualTo(1);

    releaseSlow.countDown();
    slow.join().close();
    // The slow attempt's permit and the refused one's (none) are back: the next one goes through.
    try (Response r = client.operation(get("/fast")).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    try (Response r = client.operation(get("/fast")).executeAsync().join()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(serverRequests.get()).isEqualTo(3);
  }

  @Test
  void aHedgeBeyondTheLimitIsNotSentAndTheFirstCopyStillWins() throws Exception {
    java.util.List<Integer> limitedAttempts = new java.util.concurrent.CopyOnWriteArrayList<>();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
            .deadline(Duration.ofSeconds(30)).build())
        .concurrencyLimit(fixedAtOne())
        .hedging(io.github.resilienthttp.HedgingPolicy.fixedDelay(Duration.ofMillis(20)))
        .addListener(new OperationListener() {
          @Override
          public void limited(OperationInfo operation, int attempt) {
            limitedAttempts.add(attempt);
            releaseSlow.countDown(); // the hedge was refused: let the first copy answer
          }
        })
        .build();
    try (Response r = client.operation(get("/slow")).executeAsync().get(20, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(limitedAttempts).containsExactly(2);
    assertThat(serverRequests.get()).as("the hedge was never sent").isEqualTo(1);
    try (Response r = client.operation(get("/fast")).execute()) {
      assertThat(r.code()).isEqualTo(200); // both copies' permits are back
    }
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void aListenerThatThrowsWhenTheThrottleRefusesLeavesNoLimitPermitBehind(boolean async)
      throws IOException {
    java.util.concurrent.atomic.AtomicLong draw = new java.util.concurrent.atomic.AtomicLong();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).backoff(Backoff.none()).build())
        .concurrencyLimit(fixedAtOne())
        .random(draw::get) // 0: every positive probability refuses; -1: none does
        .adaptiveThrottling(io.github.resilienthttp.AdaptiveThrottlingPolicy.defaults())
        .addListener(new OperationListener() {
          @Override
          public void throttled(OperationInfo operation, int attempt) {
            throw new IllegalStateException("listener bug in throttled()");
          }
        })
        .build();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        serverRequests.incrementAndGet();
        return new MockResponse.Builder().code(503).build();
      }
    });
    client.operation(get("/a")).execute().close(); // 1 request, no accept
    Throwable refused = async ? catchCompletion(client.operation(get("/a")).executeAsync())
        : catchBlocking(() -> client.operation(get("/a")).execute());
    assertThat(refused).isInstanceOf(io.github.resilienthttp.ThrottledException.class);
    assertThat(serverRequests.get()).isEqualTo(1);
    draw.set(-1L); // nextDouble() just under 1
    // The refused attempt held the only limit permit when the throttle refused it: it is back.
    try (Response r = client.operation(get("/a")).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(serverRequests.get()).isEqualTo(2);
  }

  @Test
  void theLimitShrinksWhenAnswersSlowDownAndGrowsBackWhenTheyAreFast() {
    ConcurrencyLimitPolicy policy = ConcurrencyLimitPolicy.builder(
        ConcurrencyLimitPolicy.Algorithm.GRADIENT).initialLimit(8).minLimit(2).maxLimit(40).build();
    ResilientHttpClient client = client(policy, new OperationListener() {});
    okhttp3.HttpUrl target = server.url("/");
    assertThat(client.currentConcurrencyLimit(target)).isEmpty(); // not used yet

    delayMillis = 10;
    rounds(client, 15);
    int fast = client.currentConcurrencyLimit(target).orElseThrow();
    assertThat(fast).as("grew from 8 under fast answers").isGreaterThan(8);

    delayMillis = 300; // a queue builds at the server
    rounds(client, 4);
    int slowed = client.currentConcurrencyLimit(target).orElseThrow();
    assertThat(slowed).as("shrank under added latency").isLessThan(fast);

    delayMillis = 10;
    rounds(client, 20);
    int recovered = client.currentConcurrencyLimit(target).orElseThrow();
    assertThat(recovered).as("grew back").isGreaterThan(slowed);
  }

  /** Rounds of more concurrent operations than the limit allows, so the limit is what binds. */
  private void rounds(ResilientHttpClient client, int rounds) {
    for (int r = 0; r < rounds; r++) {
      List<CompletableFuture<Response>> all = new ArrayList<>();
      for (int i = 0; i < 48; i++) {
        all.add(client.operation(get("/work")).executeAsync());
      }
      for (CompletableFuture<Response> f : all) {
        Throwable t = catchCompletion(f);
        if (t != null) {
          assertThat(t).isInstanceOf(ConcurrencyLimitExceededException.class);
        }
      }
    }
  }

  @Test
  void aBulkheadAndAConcurrencyLimitAreAlternatives() {
    assertThatThrownBy(() -> ResilientHttpClient.wrap(okHttp)
        .bulkhead(BulkheadConfig.ofDefaults()).concurrencyLimit(ConcurrencyLimitPolicy.vegas())
        .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bulkhead").hasMessageContaining("concurrencyLimit");
  }

  @Test
  void theBuilderValidates() {
    assertThatThrownBy(() -> ConcurrencyLimitPolicy.builder(ConcurrencyLimitPolicy.Algorithm.VEGAS)
        .minLimit(0).build()).hasMessageContaining("minLimit must be at least 1: 0");
    assertThatThrownBy(() -> ConcurrencyLimitPolicy.builder(ConcurrencyLimitPolicy.Algorithm.VEGAS)
        .maxLimit(10).initialLimit(11).build()).hasMessageContaining("initialLimit");
    assertThatThrownBy(() -> ConcurrencyLimitPolicy.builder(ConcurrencyLimitPolicy.Algorithm.GRADIENT)
        .minLimit(5).maxLimit(4).initialLimit(4).build()).hasMessageContaining("maxLimit");
    assertThat(ConcurrencyLimitPolicy.gradient().initialLimit()).isEqualTo(20);
    assertThat(ConcurrencyLimitPolicy.vegas().maxLimit()).isEqualTo(200);
  }

  private static Throwable catchCompletion(CompletableFuture<Response> f) {
    try {
      f.join().close();
      return null;
    } catch (CompletionException e) {
      return e.getCause();
    }
  }

  private interface BlockingCall {
    Response run() throws IOException;
  }

  private static Throwable catchBlocking(BlockingCall call) {
    try {
      call.run().close();
      return null;
    } catch (IOException e) {
      return e;
    }
  }
}
