package io.github.resilienthttp.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.junit5.OpenTelemetryExtension;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Spans of real operations against MockWebServer, read from the OpenTelemetry SDK's in-memory
 * exporter: one INTERNAL operation span, one CLIENT span per attempt, the resend count across the
 * operation, trace context in each attempt's request, no whole key.
 */
class ResilientHttpTracingTest {
  @RegisterExtension
  static final OpenTelemetryExtension otel = OpenTelemetryExtension.create();

  private static final AttributeKey<Long> RESEND = AttributeKey.longKey("http.request.resend_count");
  private static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  private final MockWebServer server = new MockWebServer();
  private final ResilientHttpTracing tracing = ResilientHttpTracing.create(otel.getOpenTelemetry());
  private OkHttpClient okHttp;
  private ResilientHttpClient client;

  @BeforeEach
  void start() throws IOException {
    server.start();
    okHttp = new OkHttpClient.Builder().addInterceptor(tracing.interceptor()).build();
    client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(5))).build())
        .addListener(tracing.listener())
        .build();
  }

  @AfterEach
  void stop() {
    server.close();
    okHttp.connectionPool().evictAll();
  }

  @Test
  void threeAttemptsAreThreeClientSpansUnderOneOperationSpan() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).body("ok").build());
    Operation op = client.operation(post("/payments?token=s3cr3t&x"));

    Tracer tracer = otel.getOpenTelemetry().getTracer("test");
    Span root = tracer.spanBuilder("checkout").setSpanKind(SpanKind.SERVER).startSpan();
    try (Scope ignored = root.makeCurrent(); Response response = op.execute()) {
      assertThat(response.code()).isEqualTo(200);
    } finally {
      root.end();
    }

    List<SpanData> attempts = clientSpans();
    SpanData operation = only(SpanKind.INTERNAL);
    assertThat(attempts).hasSize(3);
    assertThat(attempts).extracting(s -> s.getAttributes().get(RESEND))
        .containsExactly(null, 1L, 2L);
    assertThat(attempts).extracting(s -> s.getAttributes().get(STATUS))
        .containsExactly(503L, 503L, 200L);
    assertThat(attempts).extracting(s -> s.getAttributes().get(ERROR_TYPE))
        .containsExactly("503", "503", null);
    assertThat(attempts).extracting(s -> s.getStatus().getStatusCode())
        .containsExactly(StatusCode.ERROR, StatusCode.ERROR, StatusCode.UNSET);
    assertThat(attempts).extracting(s -> s.getAttributes().get(
        AttributeKey.stringKey("resilient_http.decision")))
        .containsExactly("retry", "retry", "success");
    assertThat(attempts).allSatisfy(s -> {
      assertThat(s.getName()).isEqualTo("POST");
      assertThat(s.getParentSpanId()).isEqualTo(operation.getSpanId());
      assertThat(s.getAttributes().get(AttributeKey.stringKey("http.request.method")))
          .isEqualTo("POST");
      assertThat(s.getAttributes().get(AttributeKey.stringKey("server.address")))
          .isEqualTo(server.getHostName());
      assertThat(s.getAttributes().get(AttributeKey.longKey("server.port")))
          .isEqualTo((long) server.getPort());
      assertThat(s.getAttributes().get(AttributeKey.stringKey("url.full")))
          .isEqualTo(server.url("/payments?token=REDACTED&x").toString());
      assertThat(s.getAttributes().get(AttributeKey.stringKey("resilient_http.reason")))
          .isNotBlank();
    });
    assertThat(operation.getParentSpanId()).isEqualTo(root.getSpanContext().getSpanId());
    assertThat(operation.getAttributes().get(AttributeKey.longKey("resilient_http.attempts")))
        .isEqualTo(3L);
    assertThat(operation.getAttributes().get(
        AttributeKey.stringKey("resilient_http.idempotency_key.prefix")))
        .isEqualTo(op.idempotencyKey().substring(0, 8));
    // The waits before attempts 2 and 3.
    assertThat(operation.getEvents()).filteredOn(e -> e.getName().equals("resilient_http.retry_scheduled"))
        .extracting(e -> e.getAttributes().get(AttributeKey.longKey("resilient_http.next_attempt")))
        .containsExactly(2L, 3L);

    // Each attempt's request carries its own span as parent: the server's spans nest under it.
    for (SpanData attempt : attempts) {
      RecordedRequest seen = server.takeRequest(1, TimeUnit.SECONDS);
      assertThat(seen.getHeaders().get("traceparent"))
          .startsWith("00-" + attempt.getTraceId() + "-" + attempt.getSpanId() + "-");
      assertThat(seen.getHeaders().get("Idempotency-Key")).isEqualTo(op.idempotencyKey());
    }
    assertNoWholeKey(op.idempotencyKey());
  }

  @Test
  void asyncOperationsAndPlainCallsAreTracedTheSameWay() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());

    try (Response r = client.operation(get("/async")).executeAsync().get(5, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(200);
    }
    try (Response r = client.okHttpClient().newCall(get("/plain")).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }

    List<SpanData> operations = otel.getSpans().stream()
        .filter(s -> s.getKind() == SpanKind.INTERNAL).collect(Collectors.toList());
    assertThat(operations).hasSize(2);
    for (SpanData operation : operations) {
      List<SpanData> attempts = clientSpans().stream()
          .filter(s -> s.getParentSpanId().equals(operation.getSpanId()))
          .collect(Collectors.toList());
      assertThat(attempts).extracting(s -> s.getAttributes().get(RESEND)).containsExactly(null, 1L);
      assertThat(attempts).extracting(s -> s.getAttributes().get(STATUS)).containsExactly(503L, 200L);
      assertThat(operation.getTraceId()).isEqualTo(attempts.get(0).getTraceId());
    }
    for (int i = 0; i < 4; i++) {
      assertThat(server.takeRequest(1, TimeUnit.SECONDS).getHeaders().get("traceparent")).isNotNull();
    }
  }

  @Test
  void aFailedAttemptHasTheExceptionTypeAndTheOperationItsFailure() throws Exception {
    for (int i = 0; i < 3; i++) {
      server.enqueue(new MockResponse.Builder()
          .onResponseStart(new SocketEffect.CloseSocket()).build());
    }

    assertThatThrownBy(() -> client.operation(get("/fails")).execute().close())
        .isInstanceOf(IOException.class);

    List<SpanData> attempts = clientSpans();
    assertThat(attempts).hasSize(3);
    assertThat(attempts).allSatisfy(s -> {
      assertThat(s.getAttributes().get(ERROR_TYPE)).endsWith("Exception");
      assertThat(s.getAttributes().get(STATUS)).isNull();
    });
    assertThat(attempts).extracting(s -> s.getStatus().getStatusCode()).containsOnly(StatusCode.ERROR);
    SpanData operation = only(SpanKind.INTERNAL);
    assertThat(operation.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(operation.getAttributes().get(ERROR_TYPE)).startsWith("io.github.resilienthttp.");
  }

  @Test
  void withoutAttemptSpansAnotherInstrumentationNestsUnderTheOperationSpan() throws Exception {
    ResilientHttpTracing operationOnly = ResilientHttpTracing.builder(otel.getOpenTelemetry())
        .attemptSpans(false).build();
    Tracer other = otel.getOpenTelemetry().getTracer("other-okhttp-instrumentation");
    // Stands in for OpenTelemetry's own OkHttp instrumentation, added after ours.
    OkHttpClient instrumented = new OkHttpClient.Builder()
        .addInterceptor(operationOnly.interceptor())
        .addInterceptor(chain -> {
          Span span = other.spanBuilder("GET").setSpanKind(SpanKind.CLIENT).startSpan();
          try (Scope ignored = span.makeCurrent()) {
            return chain.proceed(chain.request());
          } finally {
            span.end();
          }
        })
        .build();
    ResilientHttpClient withOther = ResilientHttpClient.wrap(instrumented)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.none()).build())
        .addListener(operationOnly.listener())
        .build();
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());

    try (Response r = withOther.operation(get("/other")).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }

    SpanData operation = only(SpanKind.INTERNAL);
    List<SpanData> attempts = clientSpans();
    assertThat(attempts).hasSize(2)
        .allSatisfy(s -> {
          assertThat(s.getInstrumentationScopeInfo().getName())
              .isEqualTo("other-okhttp-instrumentation");
          assertThat(s.getParentSpanId()).isEqualTo(operation.getSpanId());
        });
    assertThat(operation.getEvents()).extracting(EventData::getName)
        .containsExactly("resilient_http.attempt_ended", "resilient_http.retry_scheduled",
            "resilient_http.attempt_ended");
    instrumented.connectionPool().evictAll();
  }

  @Test
  void anAttemptCutByTheDeadlineIsEndedWithTheOperationsFailure() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).headersDelay(5, TimeUnit.SECONDS).build());
    Operation op = client.operation(get("/slow")).deadline(Duration.ofMillis(300));

    assertThatThrownBy(() -> op.execute().close()).isInstanceOf(IOException.class);

    SpanData attempt = clientSpans().get(0);
    SpanData operation = only(SpanKind.INTERNAL);
    assertThat(clientSpans()).hasSize(1);
    assertThat(attempt.hasEnded()).isTrue();
    assertThat(attempt.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(attempt.getAttributes().get(ERROR_TYPE))
        .isEqualTo(operation.getAttributes().get(ERROR_TYPE))
        .isEqualTo("io.github.resilienthttp.DeadlineExceededException");
  }

  @Test
  void callsOfOtherClientsPassThroughTheInterceptorUntouched() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).build());
    try (Response r = okHttp.newCall(get("/not-an-operation")).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(server.takeRequest().getHeaders().get("traceparent")).isNull();
    assertThat(otel.getSpans()).isEmpty();
  }

  @Test
  void urlFullHasNoUserInfoNoQueryValuesAndNoFragment() {
    HttpUrl url = HttpUrl.get("https://user:pw@api.example.com:8443/a/b?key=v&flag&key=w#frag");
    assertThat(TracingInterceptor.redact(url))
        .isEqualTo("https://api.example.com:8443/a/b?key=REDACTED&flag&key=REDACTED");
  }

  private void assertNoWholeKey(String key) {
    List<String> values = new ArrayList<>();
    for (SpanData s : otel.getSpans()) {
      s.getAttributes().forEach((k, v) -> values.add(String.valueOf(v)));
      s.getEvents().forEach(e -> e.getAttributes().forEach((k, v) -> values.add(String.valueOf(v))));
      values.add(s.getName());
    }
    assertThat(values).isNotEmpty().noneMatch(v -> v.contains(key));
  }

  @Test
  void aHedgedOperationHasOneClientSpanPerCopyAndTheLoserIsMarkedCancelled() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).body("slow").build());
    server.enqueue(new MockResponse.Builder().body("fast").build());
    ResilientHttpClient hedged = client.newBuilder()
        .hedging(io.github.resilienthttp.HedgingPolicy.fixedDelay(Duration.ofMillis(100))).build();
    try (Response response = hedged.operation(get("/item")).execute()) {
      assertThat(response.body().string()).isEqualTo("fast");
    }

    List<SpanData> copies = clientSpans();
    SpanData operation = only(SpanKind.INTERNAL);
    assertThat(copies).hasSize(2);
    assertThat(copies).extracting(s -> s.getAttributes().get(
        AttributeKey.stringKey("resilient_http.attempt.kind"))).containsExactly("first", "hedge");
    assertThat(copies).extracting(s -> s.getAttributes().get(RESEND)).containsExactly(null, 1L);
    // The slow first copy lost: stopped, not failed.
    assertThat(copies.get(0).getAttributes().get(ERROR_TYPE)).isEqualTo("cancelled");
    assertThat(copies.get(1).getAttributes().get(STATUS)).isEqualTo(200L);
    assertThat(copies).allSatisfy(s -> assertThat(s.getParentSpanId()).isEqualTo(operation.getSpanId()));
    assertThat(operation.getAttributes().get(AttributeKey.longKey("resilient_http.winning_attempt")))
        .isEqualTo(2L);
    // Each copy carried its own span's context.
    RecordedRequest first = server.takeRequest();
    RecordedRequest second = server.takeRequest();
    assertThat(first.getHeaders().get("traceparent")).contains(copies.get(0).getSpanId());
    assertThat(second.getHeaders().get("traceparent")).contains(copies.get(1).getSpanId());
  }

  private List<SpanData> clientSpans() {
    return otel.getSpans().stream().filter(s -> s.getKind() == SpanKind.CLIENT)
        .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
        .collect(Collectors.toList());
  }

  private SpanData only(SpanKind kind) {
    List<SpanData> spans = otel.getSpans().stream().filter(s -> s.getKind() == kind)
        .collect(Collectors.toList());
    assertThat(spans).hasSize(1);
    return spans.get(0);
  }

  private Request post(String path) {
    return new Request.Builder().url(server.url(path)).post(RequestBody.create(new byte[] {1})).build();
  }

  private Request get(String path) {
    return new Request.Builder().url(server.url(path)).build();
  }
}
