package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.github.resilienthttp.testkit.ReceivedRequest;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The safe way to repeat an intent after a failure: {@code client.retry(failure, request)} re-sends
 * with the failure's key when the server saw it, and refuses (sending nothing) when the key was
 * never sent and the method is not idempotent: the quick start's catch block cannot charge twice.
 */
class SafeRetryTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  private IdempotentTestServer server;
  private ResilientHttpClient client;

  @BeforeEach
  void setUp() throws Exception {
    server = IdempotentTestServer.startDefault();
    client = ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
        .retryPolicy(RetryPolicy.builder().maxAttempts(2)
            .backoff(Backoff.fixed(Duration.ofMillis(1))).build()).build();
  }

  @AfterEach
  void tearDown() {
    server.close();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  private Request charge() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  @Test
  void aPostWhoseKeyWasNeverSentIsNotRepeated() {
    server.script(Fault.processThenDrop());
    Throwable first = catchThrowable(() -> client.operation(charge()).sendIdempotencyKey(false)
        .execute());
    assertThat(first).isInstanceOf(OutcomeUnknownException.class);
    OperationFailure f = (OperationFailure) first;
    assertThat(f.idempotencyKey()).isNotNull(); // filled in, but the server never saw it
    assertThat(f.idempotencyKeySent()).isFalse();

    Throwable refused = catchThrowable(() -> client.retry(f, charge()));
    assertThat(refused).isInstanceOfSatisfying(RetryRefusedException.class, e -> {
      assertThat(e.reason()).isEqualTo("key-not-sent");
      assertThat(e.getMessage()).contains("never sent").contains("POST is not idempotent");
    });
    assertThat(server.requests()).hasSize(1);
    assertThat(server.effects()).hasSize(1); // charged once, and only once
  }

  @Test
  void aPostWhoseKeyWasSentIsRepeatedWithThatKeyAndTheServerAnswersOnce() throws Exception {
    server.script(Fault.processThenDrop(), Fault.processThenDrop());
    Throwable first = catchThrowable(() -> client.operation(charge()).execute());
    OperationFailure f = (OperationFailure) first;
    assertThat(f.idempotencyKeySent()).isTrue();

    try (Response r = client.retry(f, charge()).execute()) {
      assertThat(r.code()).isLessThan(300);
    }
    try (Response r = client.retry(f, charge()).executeAsync().get(10, TimeUnit.SECONDS)) {
      assertThat(r.code()).isLessThan(300);
    }
    assertThat(server.requests()).extracting(ReceivedRequest::key).containsOnly(f.idempotencyKey());
    assertThat(server.effectCountForKey(f.idempotencyKey())).isEqualTo(1);
  }

  @Test
  void anIdempotentMethodIsRepeatedWithoutAKey() throws Exception {
    server.script(Fault.processThenDrop(), Fault.processThenDrop());
    Request put = new Request.Builder().url(server.url("/payments/7"))
        .put(RequestBody.create("{\"amount\":100}", JSON)).build();
    OperationFailure f = (OperationFailure) catchThrowable(
        () -> client.operation(put).sendIdempotencyKey(false).execute());
    assertThat(f.idempotencyKeySent()).isFalse();
    try (Response r = client.retry(f, put).execute()) {
      assertThat(r.code()).isLessThan(300);
    }
    assertThat(server.requests()).extracting(ReceivedRequest::key).containsOnlyNulls();
  }
}
