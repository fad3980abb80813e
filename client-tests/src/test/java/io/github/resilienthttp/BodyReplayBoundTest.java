package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RetryPolicy#maxReplayableBodyBytes()}: a body above the bound is sent once even when the
 * operation is idempotent (a key is sent); one within it is retried; one never sent is retried.
 */
class BodyReplayBoundTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private MockWebServer server;
  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client(long bound) {
    return ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10)))
            .maxReplayableBodyBytes(bound).build()).build();
  }

  private Request upload(int bytes) {
    return new Request.Builder().url(server.url("/uploads"))
        .post(RequestBody.create("x".repeat(bytes), JSON)).build();
  }

  private static MockResponse lost() {
    return new MockResponse.Builder().onResponseStart(new SocketEffect.CloseSocket()).build();
  }

  @Test
  void aBodyAboveTheBoundIsSentOnceEvenWithAKey() {
    server.enqueue(lost());
    server.enqueue(new MockResponse.Builder().code(201).build());
    Operation op = client(1_000).operation(upload(2_000));
    assertThat(op.idempotencyKeySent()).isTrue();
    assertThatThrownBy(op::execute).isInstanceOf(OutcomeUnknownException.class);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void aBodyWithinTheBoundIsRetried() throws IOException {
    server.enqueue(lost());
    server.enqueue(new MockResponse.Builder().code(201).build());
    try (Response r = client(1_000).operation(upload(1_000)).execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  @Test
  void theDefaultBoundIsEightMebibytesAndZeroSendsEveryBodyOnce() {
    assertThat(RetryPolicy.defaults().maxReplayableBodyBytes()).isEqualTo(8L * 1024 * 1024);
    assertThat(RetryPolicy.builder().maxReplayableBodyBytes(0).build().toBuilder().build()
        .maxReplayableBodyBytes()).isZero();
    assertThatThrownBy(() -> RetryPolicy.builder().maxReplayableBodyBytes(-1).build())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aGetWithoutBodyIsNotBounded() throws IOException {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    try (Response r = client(0).operation(new Request.Builder().url(server.url("/x")).build())
        .execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  @Test
  void aBodyAboveTheBoundIsSentOnceAsync() {
    server.enqueue(lost());
    server.enqueue(new MockResponse.Builder().code(201).build());
    assertThat(client(1_000).operation(upload(2_000)).executeAsync())
        .failsWithin(Duration.ofSeconds(10)).withThrowableThat().havingCause()
        .isInstanceOf(OutcomeUnknownException.class);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }
}
