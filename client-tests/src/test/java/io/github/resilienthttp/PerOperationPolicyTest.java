package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code Operation.retryPolicy(...)} and {@code Operation.classifier(...)}: one operation runs under
 * its own policy and classifier, blocking and async, and the client's stay as they were for the next.
 */
class PerOperationPolicyTest {
  private MockWebServer server;
  private OkHttpClient okHttp;
  private ResilientHttpClient client;

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient.Builder().build();
    client = ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
        .random(new SplittableRandom(1))
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .build();
  }

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private Request post() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{}", MediaType.get("application/json"))).build();
  }

  private Response run(Operation op, boolean async) throws Exception {
    return async ? op.executeAsync().get(10, TimeUnit.SECONDS) : op.execute();
  }

  private static MockResponse status(int code) {
    return new MockResponse.Builder().code(code).body("s" + code).build();
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void anOperationsRetryPolicyBoundsItsAttemptsAndTheNextOperationUsesTheClients(boolean async)
      throws Exception {
    for (int i = 0; i < 5; i++) {
      server.enqueue(status(503));
    }
    RetryPolicy once = RetryPolicy.builder().maxAttempts(1).build();
    Operation single = client.operation(post()).retryPolicy(once);
    try (Response r = run(single, async)) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(single.attempts()).isEqualTo(1);
    assertThat(server.getRequestCount()).isEqualTo(1);

    Operation usual = client.operation(post());
    try (Response r = run(usual, async)) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(usual.attempts()).isEqualTo(3);
    assertThat(server.getRequestCount()).isEqualTo(4);
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void anOperationsPolicyDeadlineAppliesWhenNoDeadlineIsSet(boolean async) throws Exception {
    ResilientHttpClient realTime = ResilientHttpClient.wrap(okHttp).build();
    server.enqueue(new MockResponse.Builder().code(200).headersDelay(3, TimeUnit.SECONDS).build());
    RetryPolicy shortDeadline = RetryPolicy.builder().deadline(Duration.ofMillis(300)).build();
    Operation op = realTime.operation(post()).retryPolicy(shortDeadline);
    long start = System.nanoTime();
    assertThatThrownBy(() -> run(op, async).close()).satisfies(e -> {
      Throwable t = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
      assertThat(t).isInstanceOf(DeadlineExceededException.class);
    });
    // The client's deadline (30 s by default) would have let the 3 s answer arrive.
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(2500));
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void anOperationsClassifierDecidesForItAlone(boolean async) throws Exception {
    server.enqueue(status(404));
    server.enqueue(status(404));
    server.enqueue(status(200));
    server.enqueue(status(404));
    ResponseClassifier notFoundYet = outcome -> outcome.statusCode() == 404
        ? Decision.retry("not-replicated-yet")
        : ResponseClassifier.defaults().classify(outcome);
    Operation op = client.operation(post()).classifier(notFoundYet);
    try (Response r = run(op, async)) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(op.attempts()).isEqualTo(3);
    RecordedRequest first = server.takeRequest();
    String key = first.getHeaders().get("Idempotency-Key");
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(key);

    Operation usual = client.operation(post());
    try (Response r = run(usual, async)) {
      assertThat(r.code()).isEqualTo(404);
    }
    assertThat(usual.attempts()).isEqualTo(1);
  }

  @Test
  void settingAPolicyAfterTheRunOrANullOneFailsAtOnce() throws Exception {
    server.enqueue(status(200));
    Operation op = client.operation(post());
    assertThatThrownBy(() -> op.retryPolicy(null)).isInstanceOf(NullPointerException.class)
        .hasMessageContaining("retryPolicy");
    assertThatThrownBy(() -> op.classifier(null)).isInstanceOf(NullPointerException.class)
        .hasMessageContaining("classifier");
    op.execute().close();
    assertThatThrownBy(() -> op.retryPolicy(RetryPolicy.defaults()))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> op.classifier(ResponseClassifier.defaults()))
        .isInstanceOf(IllegalStateException.class);
  }
}
