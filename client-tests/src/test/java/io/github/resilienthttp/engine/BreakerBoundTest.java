package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.ConnectionPool;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One breaker per target must not mean one breaker per target ever seen: a client that calls many
 * hosts (a crawler, a webhook sender) keeps a bounded number of breakers.
 */
@Timeout(60)
class BreakerBoundTest {
  /** The most per-target breakers a client keeps; the engine documents the exact bound. */
  static final int MAX_BREAKERS = 1_024;
  private static final int TARGETS = 2_000;

  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void startServer() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return new MockResponse.Builder().code(200).addHeader("Connection", "close").body("ok").build();
      }
    });
    server.start();
    InetAddress loopback = InetAddress.getLoopbackAddress();
    okHttp = new OkHttpClient.Builder()
        .dns(host -> {
          if (host.matches("h\\d+\\.test")) {
            return List.of(loopback);
          }
          throw new UnknownHostException(host);
        })
        .connectionPool(new ConnectionPool(0, 1, java.util.concurrent.TimeUnit.SECONDS))
        .build();
  }

  @AfterEach
  void stop() {
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private HttpUrl target(int i) {
    return new HttpUrl.Builder().scheme("http").host("h" + i + ".test").port(server.getPort())
        .addPathSegment("ping").build();
  }

  @Test
  void operationsToTwoThousandTargetsKeepABoundedNumberOfBreakers() throws Exception {
    CircuitBreakerRegistry registry =
        CircuitBreakerRegistry.of(ResilientHttpClient.defaultCircuitBreakerConfig());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .circuitBreakerRegistry(registry)
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(5)).build())
        .build();

    int peak = 0;
    for (int i = 0; i < TARGETS; i++) {
      try (Response r = client.operation(new Request.Builder().url(target(i)).build()).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
      peak = Math.max(peak, registry.getAllCircuitBreakers().size());
    }

    assertThat(peak).as("breakers in the registry at the peak, after %d targets", TARGETS)
        .isLessThanOrEqualTo(MAX_BREAKERS);
    // The most recent target still has a working breaker that records its calls.
    CircuitBreaker last = client.circuitBreakerFor(target(TARGETS - 1)).orElseThrow();
    assertThat(last.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(last.getMetrics().getNumberOfSuccessfulCalls()).isGreaterThanOrEqualTo(1);
  }
}
