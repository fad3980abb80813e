package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
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
 * What the engine's one-object layout (issue 26) relies on, on real loopback sockets, HTTP/1.1 and
 * HTTP/2: an operation registers with the client's lifecycle only while it waits, and
 * {@code closeNow()} still reaches its attempt in flight through the deadline watchdog, on every
 * way an operation runs; the key read while an operation starts is the key it sends; an operation
 * started from two threads at once runs once, without a lock; and the breaker measures an
 * attempt's duration with the client's {@code TimeSource}.
 */
class OneEngineObjectTest {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final int RACES = 200;

  private MockWebServer server;
  private OkHttpClient okHttp;
  private final List<ResilientHttpClient> clients = new ArrayList<>();

  static List<Protocol> protocols() {
    return List.of(Protocol.HTTP_1_1, Protocol.H2_PRIOR_KNOWLEDGE);
  }

  static List<Arguments> operationWaysAndProtocols() {
    List<Arguments> all = new ArrayList<>();
    for (Protocol p : protocols()) {
      all.add(Arguments.of(Ways.BLOCKING, p));
      all.add(Arguments.of(Ways.ASYNC, p));
    }
    return all;
  }

  static List<Arguments> waysAndProtocols() {
    List<Arguments> all = new ArrayList<>();
    for (Protocol p : protocols()) {
      for (Ways w : Ways.values()) {
        all.add(Arguments.of(w, p));
      }
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

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("waysAndProtocols")
  void anAttemptInFlightIsRegisteredNowhereAndCloseNowStillStopsIt(Ways way, Protocol protocol)
      throws Exception {
    start(protocol);
    server.enqueue(new MockResponse.Builder().headersDelay(30, TimeUnit.SECONDS).build());
    ResilientHttpClient client = client(builder());
    CompletableFuture<Response> f = way.run(client, get());
    assertThat(server.takeRequest(10, TimeUnit.SECONDS)).isNotNull();

    // In flight, the operation is in no set of the lifecycle: only the watchdog knows its call.
    assertThat(client.runtime().lifecycle().runningCount()).isZero();
    assertThat(client.runtime().deadlineWatchdog().watchedOperations()).hasSize(1);
    client.closeNow();

    assertThat(failureOf(f)).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> assertThat(e.reason()).isEqualTo("client-closed"));
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("waysAndProtocols")
  void anOperationIsRegisteredWhileItWaitsAndNoLonger(Ways way, Protocol protocol)
      throws Exception {
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
    CompletableFuture<Response> f = way.run(client, get());
    assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();

    // The backoff registers it (the listener hears of the retry just before the wait starts).
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> client.runtime().lifecycle().runningCount() == 1);
    client.close();

    assertThat(failureOf(f)).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> assertThat(e.reason()).isEqualTo("client-closed"));
    assertThat(client.runtime().lifecycle().runningCount()).isZero();
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  /** Runs {@code op} with {@code execute()} or {@code executeAsync()}. */
  private static Response run(Operation op, Ways way) throws Exception {
    return way == Ways.ASYNC ? op.executeAsync().get(10, TimeUnit.SECONDS) : op.execute();
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("operationWaysAndProtocols")
  void theKeyReadWhileAnOperationStartsIsTheKeyItSends(Ways way, Protocol protocol)
      throws Exception {
    start(protocol);
    ResilientHttpClient client = client(builder());
    for (int i = 0; i < RACES; i++) {
      server.enqueue(new MockResponse.Builder().code(201).build());
      Operation op = client.operation(charge());
      String read = readKeyWhileRunning(op, way);

      RecordedRequest sent = server.takeRequest(10, TimeUnit.SECONDS);
      assertThat(read).isEqualTo(sent.getHeaders().get("Idempotency-Key"))
          .isEqualTo(op.idempotencyKey());
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("operationWaysAndProtocols")
  void aKeyReadBeforeTheStartOfAnUnkeyedOperationIsItsKeyAfterwards(Ways way, Protocol protocol)
      throws Exception {
    start(protocol);
    ResilientHttpClient client = client(builder());
    for (int i = 0; i < RACES; i++) {
      server.enqueue(new MockResponse.Builder().code(200).build());
      Operation op = client.operation(get());
      String read = readKeyWhileRunning(op, way);

      assertThat(op.idempotencyKeySent()).isFalse();
      assertThat(read).isEqualTo(op.idempotencyKey());
      assertThat(server.takeRequest(10, TimeUnit.SECONDS).getHeaders().get("Idempotency-Key"))
          .isNull();
    }
  }

  /** Runs {@code op} while another thread reads its key, both let go at once; the key read. */
  private static String readKeyWhileRunning(Operation op, Ways way) throws Exception {
    CyclicBarrier go = new CyclicBarrier(2);
    CompletableFuture<String> read = CompletableFuture.supplyAsync(() -> {
      await(go);
      return op.idempotencyKey();
    });
    await(go);
    run(op, way).close();
    return read.get(10, TimeUnit.SECONDS);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("protocols")
  void anOperationStartedFromTwoThreadsAtOnceRunsOnce(Protocol protocol) throws Exception {
    start(protocol);
    ResilientHttpClient client = client(builder());
    AtomicInteger refused = new AtomicInteger();
    for (int i = 0; i < RACES; i++) {
      server.enqueue(new MockResponse.Builder().code(201).build());
      Operation op = client.operation(charge());
      CyclicBarrier go = new CyclicBarrier(2);
      CompletableFuture<Integer> other = CompletableFuture.supplyAsync(() -> {
        await(go);
        return runOnce(op);
      });
      await(go);
      int here = runOnce(op);
      int there = other.get(10, TimeUnit.SECONDS);

      assertThat(here + there).as("exactly one of the two ran it").isEqualTo(1);
      refused.addAndGet(2 - here - there);
      assertThat(op.attempts()).isEqualTo(1);
    }
    assertThat(refused).hasValue(RACES);
    assertThat(server.getRequestCount()).isEqualTo(RACES);
  }

  /** Runs {@code op}: 1 when it ran, 0 when it was refused because it runs once. */
  private static int runOnce(Operation op) {
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
      return 1;
    } catch (IllegalStateException e) {
      assertThat(e).hasMessageContaining("runs once");
      return 0;
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("operationWaysAndProtocols")
  void theBreakerMeasuresAnAttemptWithTheClientsTimeSource(Ways way, Protocol protocol)
      throws Exception {
    start(protocol);
    FakeTimeSource time = new FakeTimeSource();
    // Each attempt takes 2 s on the client's clock (real time: a few ms): a slow call.
    OkHttpClient slowOnTheFakeClock = okHttp.newBuilder().addInterceptor(chain -> {
      Response r = chain.proceed(chain.request());
      time.advance(Duration.ofSeconds(2));
      return r;
    }).build();
    CircuitBreaker breaker = CircuitBreaker.of("payments", CircuitBreakerConfig.custom()
        .slowCallDurationThreshold(Duration.ofSeconds(1)).slowCallRateThreshold(50)
        .minimumNumberOfCalls(2).slidingWindowSize(2).build());
    ResilientHttpClient client = client(ResilientHttpClient.wrap(slowOnTheFakeClock)
        .timeSource(time).circuitBreaker(breaker));
    server.enqueue(new MockResponse.Builder().code(200).build());
    server.enqueue(new MockResponse.Builder().code(200).build());

    run(client.operation(get()), way).close();
    run(client.operation(get()), way).close();

    assertThat(breaker.getMetrics().getNumberOfSlowCalls()).isEqualTo(2);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThatThrownBy(() -> client.operation(get()).execute())
        .isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  private static void await(CyclicBarrier barrier) {
    try {
      barrier.await(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
