package io.github.resilienthttp.overload;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilienthttp.AdaptiveThrottlingPolicy;
import io.github.resilienthttp.CircuitBreakerOpenException;
import io.github.resilienthttp.ConcurrencyLimitPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.ThrottledException;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * With an adaptive control on the target (throttling or a concurrency limit), a 503 is load the
 * server shed, answered by that control: the breaker does not also count it as a failure, so it
 * does not open and refuse everything (BENCHMARKS.md, "Overload"). Without one, the breaker opens
 * on the same answers as before. A 500 still counts for the breaker either way.
 */
@Timeout(60)
class LoadSheddingBreakerTest {
  private MockWebServer server;
  private OkHttpClient okHttp;
  private CircuitBreaker breaker;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.setServerSocketFactory(new io.github.resilienthttp.testkit.NoDelayServerSocketFactory());
    server.start();
    okHttp = new OkHttpClient();
    breaker = CircuitBreaker.of("target", CircuitBreakerConfig.custom()
        .slidingWindowSize(10).minimumNumberOfCalls(5).failureRateThreshold(50).build());
  }

  @AfterEach
  void stop() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client(UnaryOperator<ResilientHttpClient.Builder> overload) {
    return overload.apply(ResilientHttpClient.wrap(okHttp)
        .circuitBreaker(breaker)
        .timeSource(new FakeTimeSource())
        .random(new SplittableRandom(7))
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build())).build();
  }

  /** Runs {@code n} GETs that the server answers {@code status}; returns how many the breaker refused. */
  private int run(ResilientHttpClient client, int n, int status) throws IOException {
    int refused = 0;
    for (int i = 0; i < n; i++) {
      server.enqueue(new MockResponse.Builder().code(status).body("x").build());
    }
    for (int i = 0; i < n; i++) {
      try (Response r = client.operation(new Request.Builder().url(server.url("/")).build())
          .execute()) {
        assertThat(r.code()).isEqualTo(status);
      } catch (CircuitBreakerOpenException e) {
        refused++;
      } catch (ThrottledException e) {
        // the throttle sheds load itself (all 503s: no accepts); not the breaker's refusal
      }
    }
    return refused;
  }

  @Test
  void withThrottlingA503DoesNotOpenTheBreaker() throws IOException {
    ResilientHttpClient client = client(b -> b.adaptiveThrottling(AdaptiveThrottlingPolicy
        .builder().k(100).window(Duration.ofSeconds(10)).build()));
    assertThat(run(client, 10, 503)).isZero();
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
  }

  @Test
  void withAConcurrencyLimitA503DoesNotOpenTheBreaker() throws IOException {
    ResilientHttpClient client = client(b -> b.concurrencyLimit(ConcurrencyLimitPolicy.gradient()));
    assertThat(run(client, 10, 503)).isZero();
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void withoutAnAdaptiveControlA503OpensTheBreakerAsBefore() throws IOException {
    ResilientHttpClient client = client(b -> b);
    assertThat(run(client, 10, 503)).isEqualTo(5);
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
  }

  @Test
  void withThrottlingA500StillOpensTheBreaker() throws IOException {
    ResilientHttpClient client = client(b -> b.adaptiveThrottling(AdaptiveThrottlingPolicy
        .builder().k(100).window(Duration.ofSeconds(10)).build()));
    assertThat(run(client, 10, 500)).isEqualTo(5); // a 500 is an accept for the throttle
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
  }
}
