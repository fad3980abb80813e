package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
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
  private static final int RACES = 200;

  private ProtocolServer loop;

  static List<Arguments> operationWaysAndProtocols() {
    return ProtocolServer.withEachProtocol(Ways.BLOCKING, Ways.ASYNC);
  }

  static List<Arguments> waysAndProtocols() {
    return ProtocolServer.withEachProtocol((Object[]) Ways.values());
  }

  @AfterEach
  void tearDown() {
    if (loop != null) {
      loop.close();
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("waysAndProtocols")
  void anAttemptInFlightIsRegisteredNowhereAndCloseNowStillStopsIt(Ways way, Protocol protocol)
      throws Exception {
    loop = ProtocolServer.started(protocol);
    loop.server.enqueue(new MockResponse.Builder().headersDelay(30, TimeUnit.SECONDS).build());
    ResilientHttpClient client = loop.client(loop.builder());
    CompletableFuture<Response> f = way.run(client, loop.get());
    assertThat(loop.server.takeRequest(10, TimeUnit.SECONDS)).isNotNull();

    // In flight, the operation is in no set of the lifecycle: only the watchdog knows its call.
    assertThat(client.runtime().lifecycle().runningCount()).isZero();
    assertThat(client.runtime().deadlineWatchdog().watchedOperations()).hasSize(1);
    client.closeNow();

    assertThat(ProtocolServer.failureOf(f)).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> assertThat(e.reason()).isEqualTo("client-closed"));
    assertThat(loop.server.getRequestCount()).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("waysAndProtocols")
  void anOperationIsRegisteredWhileItWaitsAndNoLonger(Ways way, Protocol protocol)
      throws Exception {
    loop = ProtocolServer.started(protocol);
    loop.server.enqueue(new MockResponse.Builder().code(503).build());
    CountDownLatch waiting = new CountDownLatch(1);
    ResilientHttpClient client =
        loop.client(loop.builder().addListener(WaitSignals.retryScheduled(waiting)));
    CompletableFuture<Response> f = way.run(client, loop.get());
    assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();

    // The backoff registers it (the listener hears of the retry just before the wait starts).
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> client.runtime().lifecycle().runningCount() == 1);
    client.close();

    assertThat(ProtocolServer.failureOf(f)).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> assertThat(e.reason()).isEqualTo("client-closed"));
    ProtocolServer.awaitNothingLeft(client);
    assertThat(loop.server.getRequestCount()).isEqualTo(1);
  }

  /** Runs {@code op} with {@code execute()} or {@code executeAsync()}. */
  private static Response run(Operation op, Ways way) throws Exception {
    return way == Ways.ASYNC ? op.executeAsync().get(10, TimeUnit.SECONDS) : op.execute();
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("operationWaysAndProtocols")
  void theKeyReadWhileAnOperationStartsIsTheKeyItSends(Ways way, Protocol protocol)
      throws Exception {
    loop = ProtocolServer.started(protocol);
    ResilientHttpClient client = loop.client(loop.builder());
    for (int i = 0; i < RACES; i++) {
      loop.server.enqueue(new MockResponse.Builder().code(201).build());
      Operation op = client.operation(loop.charge());
      String read = readKeyWhileRunning(op, way);

      RecordedRequest sent = loop.server.takeRequest(10, TimeUnit.SECONDS);
      assertThat(read).isEqualTo(sent.getHeaders().get("Idempotency-Key"))
          .isEqualTo(op.idempotencyKey());
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("operationWaysAndProtocols")
  void aKeyReadBeforeTheStartOfAnUnkeyedOperationIsItsKeyAfterwards(Ways way, Protocol protocol)
      throws Exception {
    loop = ProtocolServer.started(protocol);
    ResilientHttpClient client = loop.client(loop.builder());
    for (int i = 0; i < RACES; i++) {
      loop.server.enqueue(new MockResponse.Builder().code(200).build());
      Operation op = client.operation(loop.get());
      String read = readKeyWhileRunning(op, way);

      assertThat(op.idempotencyKeySent()).isFalse();
      assertThat(read).isEqualTo(op.idempotencyKey());
      assertThat(loop.server.takeRequest(10, TimeUnit.SECONDS).getHeaders().get("Idempotency-Key"))
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
  @MethodSource("io.github.resilienthttp.ProtocolServer#protocols")
  void anOperationStartedFromTwoThreadsAtOnceRunsOnce(Protocol protocol) throws Exception {
    loop = ProtocolServer.started(protocol);
    ResilientHttpClient client = loop.client(loop.builder());
    AtomicInteger refused = new AtomicInteger();
    for (int i = 0; i < RACES; i++) {
      loop.server.enqueue(new MockResponse.Builder().code(201).build());
      Operation op = client.operation(loop.charge());
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
    assertThat(loop.server.getRequestCount()).isEqualTo(RACES);
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
    loop = ProtocolServer.started(protocol);
    FakeTimeSource time = new FakeTimeSource();
    // Each attempt takes 2 s on the client's clock (real time: a few ms): a slow call.
    OkHttpClient slowOnTheFakeClock = loop.okHttp.newBuilder().addInterceptor(chain -> {
      Response r = chain.proceed(chain.request());
      time.advance(Duration.ofSeconds(2));
      return r;
    }).build();
    CircuitBreaker breaker = CircuitBreaker.of("payments", CircuitBreakerConfig.custom()
        .slowCallDurationThreshold(Duration.ofSeconds(1)).slowCallRateThreshold(50)
        .minimumNumberOfCalls(2).slidingWindowSize(2).build());
    ResilientHttpClient client = loop.client(ResilientHttpClient.wrap(slowOnTheFakeClock)
        .timeSource(time).circuitBreaker(breaker));
    loop.server.enqueue(new MockResponse.Builder().code(200).build());
    loop.server.enqueue(new MockResponse.Builder().code(200).build());

    run(client.operation(loop.get()), way).close();
    run(client.operation(loop.get()), way).close();

    assertThat(breaker.getMetrics().getNumberOfSlowCalls()).isEqualTo(2);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThatThrownBy(() -> client.operation(loop.get()).execute())
        .isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(loop.server.getRequestCount()).isEqualTo(2);
  }

  private static void await(CyclicBarrier barrier) {
    try {
      barrier.await(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
