package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** An interceptor on the wrapped client learns its call's operation key and attempt number. */
class OperationCallsTest {
  record Seen(Optional<String> key, OptionalInt attempt) {}

  private final MockWebServer server = new MockWebServer();
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final OkHttpClient okHttp = new OkHttpClient.Builder()
      .addInterceptor(chain -> {
        seen.add(new Seen(OperationCalls.idempotencyKey(chain.call()),
            OperationCalls.attempt(chain.call())));
        return chain.proceed(chain.request());
      })
      .build();
  private ResilientHttpClient client;

  @BeforeEach
  void start() throws Exception {
    server.start();
    client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.none()).build()).build();
  }

  @AfterEach
  void stop() {
    server.close();
    okHttp.connectionPool().evictAll();
  }

  @Test
  void everyAttemptOfAnOperationSeesTheOperationsKeyAndItsOwnNumber() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    Operation op = client.operation(new Request.Builder().url(server.url("/"))
        .post(RequestBody.create(new byte[0])).build());

    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(200);
    }

    assertThat(seen).containsExactly(
        new Seen(Optional.of(op.idempotencyKey()), OptionalInt.of(1)),
        new Seen(Optional.of(op.idempotencyKey()), OptionalInt.of(2)),
        new Seen(Optional.of(op.idempotencyKey()), OptionalInt.of(3)));
  }

  @Test
  void asyncOperationsAndPlainCallsAreRecognizedToo() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    Request get = new Request.Builder().url(server.url("/")).build();

    Operation async = client.operation(get);
    async.executeAsync().get(5, TimeUnit.SECONDS).close();
    client.okHttpClient().newCall(get).execute().close();

    assertThat(seen).extracting(s -> s.attempt().getAsInt()).containsExactly(1, 2, 1, 2);
    assertThat(seen.get(0).key()).contains(async.idempotencyKey());
    assertThat(seen.get(2).key()).isPresent().isEqualTo(seen.get(3).key())
        .isNotEqualTo(seen.get(0).key());
  }

  @Test
  void callsThatAreNotTheSdksAnswerEmpty() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).build());
    okHttp.newCall(new Request.Builder().url(server.url("/")).build()).execute().close();

    assertThat(seen).containsExactly(new Seen(Optional.empty(), OptionalInt.empty()));
  }
}
