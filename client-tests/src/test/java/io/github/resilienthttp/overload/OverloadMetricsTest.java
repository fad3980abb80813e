package io.github.resilienthttp.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.AdaptiveThrottlingPolicy;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.ConcurrencyLimitExceededException;
import io.github.resilienthttp.ConcurrencyLimitPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.ThrottledException;
import io.github.resilienthttp.micrometer.MicrometerOperationMetrics;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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

/**
 * Micrometer counts throttled, limited and paced attempts, tagged with the target like the other
 * rejection counters, and gauges the adaptive limit.
 */
@Timeout(30)
class OverloadMetricsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final MicrometerOperationMetrics metrics = new MicrometerOperationMetrics(registry);
  private final CountDownLatch releaseSlow = new CountDownLatch(1);
  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient();
  }

  @AfterEach
  void stop() {
    releaseSlow.countDown();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient.Builder client() {
    return ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).backoff(Backoff.none()).build())
        .addListener(metrics);
  }

  private Request get() {
    return new Request.Builder().url(server.url("/m")).build();
  }

  private double count(String name) {
    return registry.get(name).tag("server.address", server.getHostName()).counter().count();
  }

  @Test
  void throttledAttemptsAreCounted() throws IOException {
    ResilientHttpClient client = client().random(() -> 0L) // every draw 0: p > 0 refuses
        .adaptiveThrottling(AdaptiveThrottlingPolicy.defaults()).build();
    server.enqueue(new MockResponse.Builder().code(503).build());
    client.operation(get()).execute().close();
    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(() -> client.operation(get()).execute())
          .isInstanceOf(ThrottledException.class);
    }
    assertThat(count("resilient.http.throttled")).isEqualTo(3);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void limitedAttemptsAreCountedAndTheLimitIsAGauge() throws Exception {
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        if (request.getUrl().encodedPath().equals("/slow")) {
          releaseSlow.await(10, TimeUnit.SECONDS);
        }
        return new MockResponse.Builder().code(200).build();
      }
    });
    ResilientHttpClient client = client().concurrencyLimit(ConcurrencyLimitPolicy
        .builder(ConcurrencyLimitPolicy.Algorithm.VEGAS).initialLimit(1).maxLimit(1).build())
        .build();
    metrics.bindConcurrencyLimit(client, server.url("/"));
    assertThat(registry.get("resilient.http.concurrency_limit").gauge().value()).isNaN();
    CompletableFuture<Response> slow = client.operation(
        new Request.Builder().url(server.url("/slow")).build()).executeAsync();
    server.takeRequest(10, TimeUnit.SECONDS);
    assertThatThrownBy(() -> client.operation(get()).execute())
        .isInstanceOf(ConcurrencyLimitExceededException.class);
    releaseSlow.countDown();
    slow.join().close();
    assertThat(count("resilient.http.limited")).isEqualTo(1);
    assertThat(registry.get("resilient.http.concurrency_limit")
        .tag("server.address", server.getHostName()).gauge().value()).isEqualTo(1.0);
  }

  @Test
  void pacedAttemptsAreCounted() throws IOException {
    FakeTimeSource time = new FakeTimeSource();
    ResilientHttpClient client = client().timeSource(time).rateLimitPacing(true).build();
    server.enqueue(new MockResponse.Builder().code(200)
        .addHeader("X-RateLimit-Remaining", "0").addHeader("X-RateLimit-Reset", "2").build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    client.operation(get()).execute().close();
    client.operation(get()).execute().close();
    assertThat(count("resilient.http.paced")).isEqualTo(1);
    assertThat(time.sleeps()).containsExactly(java.time.Duration.ofSeconds(2));
  }
}
