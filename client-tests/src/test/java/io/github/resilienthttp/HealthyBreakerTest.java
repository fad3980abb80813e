package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import okhttp3.Protocol;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The default breakers skip a healthy success while their window is full of them
 * ({@code FullHealthyWindow}); what a user sees of a breaker must stay what recording every
 * attempt gives. Over real sockets, blocking and async, HTTP/1.1 and HTTP/2: after 200 successes
 * (most of them skipped: the window is full of successes after 50), 5 failures and 30 more
 * successes, the breaker (80 % of the last 50) opens at exactly the 40th failure after them, not
 * earlier: the 5 earlier failures must have been pushed out by the 30 successes, which a failure's
 * recording must therefore not let the shortcut skip.
 */
class HealthyBreakerTest {
  private ProtocolServer ps;

  static java.util.List<org.junit.jupiter.params.provider.Arguments> ways() {
    return ProtocolServer.withEachProtocol(false, true);
  }

  @AfterEach
  void close() {
    if (ps != null) {
      ps.close();
    }
  }

  @ParameterizedTest(name = "async={0}, {1}")
  @MethodSource("ways")
  void theDefaultBreakerOpensWhereRecordingEveryAttemptWouldOpenIt(boolean async, Protocol protocol)
      throws Exception {
    ps = ProtocolServer.started(protocol);
    ResilientHttpClient client = ps.client(ResilientHttpClient.wrap(ps.okHttp)
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(30))
            .build()));
    CircuitBreaker breaker = client.circuitBreakerFor(ps.server.url("/")).orElseThrow();

    answer(client, async, 200, 200); // the window is marked full after 50 and a check (1 in 16)
    CircuitBreaker.Metrics m = breaker.getMetrics();
    assertThat(m.getNumberOfBufferedCalls()).isEqualTo(50);
    assertThat(m.getNumberOfSuccessfulCalls()).isEqualTo(50);
    answer(client, async, 5, 503);
    answer(client, async, 30, 200);
    assertThat(m.getNumberOfFailedCalls()).isEqualTo(5);
    assertThat(m.getNumberOfSuccessfulCalls()).isEqualTo(45);

    answer(client, async, 39, 503);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(m.getNumberOfFailedCalls()).isEqualTo(39);
    answer(client, async, 1, 503);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    int sent = ps.server.getRequestCount();
    assertThatThrownBy(() -> call(client, async)).isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(ps.server.getRequestCount()).isEqualTo(sent);
    assertThat(sent).isEqualTo(200 + 5 + 30 + 40);
  }

  /**
   * A success skipped by the shortcut reads no clock only when the deadline watchdog bounds its
   * attempt (the real clock, which the watchdog runs on; {@code AttemptPermits#record}). On the
   * client's own clock, an attempt can take longer than its deadline and the breaker's slow-call
   * threshold (60 s) while the watchdog sees nothing: it must be measured, and counted slow, even
   * while the window is full of fast successes.
   */
  @ParameterizedTest(name = "async={0}, {1}")
  @MethodSource("ways")
  void aSlowSuccessOnTheClientsClockIsCountedSlowWhileTheWindowIsFullOfFastOnes(boolean async,
      Protocol protocol) throws Exception {
    ps = ProtocolServer.started(protocol);
    io.github.resilienthttp.testkit.FakeTimeSource time =
        new io.github.resilienthttp.testkit.FakeTimeSource();
    java.util.concurrent.atomic.AtomicReference<Duration> takes =
        new java.util.concurrent.atomic.AtomicReference<>(Duration.ZERO);
    okhttp3.OkHttpClient timed = ps.okHttp.newBuilder().addInterceptor(chain -> {
      Response r = chain.proceed(chain.request());
      time.advance(takes.get());
      return r;
    }).build();
    ResilientHttpClient client = ps.client(ResilientHttpClient.wrap(timed).timeSource(time)
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(30))
            .build()));
    CircuitBreaker breaker = client.circuitBreakerFor(ps.server.url("/")).orElseThrow();
    answer(client, async, 200, 200); // marked full of fast successes (see above)
    assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).isEqualTo(50);

    takes.set(Duration.ofSeconds(61));
    answer(client, async, 1, 200);
    assertThat(breaker.getMetrics().getNumberOfSlowCalls()).isEqualTo(1);
    assertThat(breaker.getMetrics().getNumberOfSlowSuccessfulCalls()).isEqualTo(1);
  }

  /** Runs {@code n} operations, each answered with {@code code}. */
  private void answer(ResilientHttpClient client, boolean async, int n, int code) throws Exception {
    for (int i = 0; i < n; i++) {
      ps.server.enqueue(new MockResponse.Builder().code(code).build());
      try (Response r = call(client, async)) {
        assertThat(r.code()).isEqualTo(code);
      }
    }
  }

  private Response call(ResilientHttpClient client, boolean async) throws Exception {
    if (!async) {
      return client.operation(ps.get()).execute();
    }
    try {
      return client.operation(ps.get()).executeAsync().get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception x ? x : e;
    }
  }
}
