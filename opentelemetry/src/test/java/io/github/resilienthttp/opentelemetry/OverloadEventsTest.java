package io.github.resilienthttp.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.AdaptiveThrottlingPolicy;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.ConcurrencyLimitExceededException;
import io.github.resilienthttp.ConcurrencyLimitPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.ThrottledException;
import io.github.resilienthttp.TimeSource;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.junit5.OpenTelemetryExtension;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The adaptive overload control's events on the operation span: a locally throttled attempt, an
 * attempt refused by the concurrency limit, and a wait for a rate-limit reset.
 */
class OverloadEventsTest {
  @RegisterExtension
  static final OpenTelemetryExtension otel = OpenTelemetryExtension.create();

  private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("resilient_http.attempt");

  private final MockWebServer server = new MockWebServer();
  private final ResilientHttpTracing tracing = ResilientHttpTracing.create(otel.getOpenTelemetry());
  private final CountDownLatch releaseSlow = new CountDownLatch(1);
  private OkHttpClient okHttp;

  @BeforeEach
  void start() throws IOException {
    server.start();
    okHttp = new OkHttpClient.Builder().addInterceptor(tracing.interceptor()).build();
  }

  @AfterEach
  void stop() {
    releaseSlow.countDown();
    server.close();
    okHttp.connectionPool().evictAll();
  }

  private ResilientHttpClient.Builder client() {
    return ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).backoff(Backoff.none()).build())
        .addListener(tracing.listener());
  }

  private Request get(String path) {
    return new Request.Builder().url(server.url(path)).build();
  }

  private static List<EventData> events(SpanData operation, String name) {
    return operation.getEvents().stream().filter(e -> e.getName().equals(name)).toList();
  }

  private List<SpanData> operationSpans() {
    return otel.getSpans().stream()
        .filter(s -> s.getKind() == io.opentelemetry.api.trace.SpanKind.INTERNAL).toList();
  }

  @Test
  void aThrottledAttemptIsAnEventOfItsOperation() throws IOException {
    // Every draw is 0: any positive refusal probability refuses.
    ResilientHttpClient client = client().random(() -> 0L)
        .adaptiveThrottling(AdaptiveThrottlingPolicy.defaults()).build();
    server.enqueue(new MockResponse.Builder().code(503).build());
    client.operation(get("/a")).execute().close(); // 1 request, 0 accepts: p = 1/2
    assertThatThrownBy(() -> client.operation(get("/a")).execute())
        .isInstanceOf(ThrottledException.class);
    assertThat(server.getRequestCount()).isEqualTo(1);
    SpanData refused = operationSpans().get(1);
    assertThat(events(refused, "resilient_http.throttled")).singleElement()
        .satisfies(e -> assertThat(e.getAttributes().get(ATTEMPT)).isEqualTo(1L));
    assertThat(events(operationSpans().get(0), "resilient_http.throttled")).isEmpty();
  }

  @Test
  void anAttemptRefusedByTheConcurrencyLimitIsAnEventOfItsOperation() throws Exception {
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        releaseSlow.await(10, TimeUnit.SECONDS);
        return new MockResponse.Builder().code(200).build();
      }
    });
    ResilientHttpClient client = client().concurrencyLimit(ConcurrencyLimitPolicy
        .builder(ConcurrencyLimitPolicy.Algorithm.VEGAS).initialLimit(1).maxLimit(1).build())
        .build();
    CompletableFuture<Response> slow = client.operation(get("/slow")).executeAsync();
    server.takeRequest(10, TimeUnit.SECONDS);
    assertThatThrownBy(() -> client.operation(get("/b")).execute())
        .isInstanceOf(ConcurrencyLimitExceededException.class);
    releaseSlow.countDown();
    slow.join().close();
    List<SpanData> ops = operationSpans();
    assertThat(ops).hasSize(2);
    assertThat(ops.stream().flatMap(s -> events(s, "resilient_http.limited").stream()))
        .singleElement().satisfies(e -> assertThat(e.getAttributes().get(ATTEMPT)).isEqualTo(1L));
  }

  @Test
  void aWaitForARateLimitResetIsAnEventWithItsLength() throws IOException {
    AtomicLong nanos = new AtomicLong();
    TimeSource fake = new TimeSource() {
      @Override
      public long nanoTime() {
        return nanos.get();
      }

      @Override
      public Instant now() {
        return Instant.EPOCH.plusNanos(nanos.get());
      }

      @Override
      public void sleep(Duration d) {
        nanos.addAndGet(d.toNanos());
      }
    };
    ResilientHttpClient client = client().timeSource(fake).rateLimitPacing(true).build();
    server.enqueue(new MockResponse.Builder().code(200)
        .addHeader("RateLimit", "\"default\";r=0;t=4").build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    client.operation(get("/c")).execute().close();
    client.operation(get("/c")).execute().close();
    SpanData paced = operationSpans().get(1);
    assertThat(events(paced, "resilient_http.paced")).singleElement().satisfies(e -> {
      assertThat(e.getAttributes().get(ATTEMPT)).isEqualTo(1L);
      assertThat(e.getAttributes().get(AttributeKey.longKey("resilient_http.paced.wait_ms")))
          .isEqualTo(4000L);
    });
  }
}
