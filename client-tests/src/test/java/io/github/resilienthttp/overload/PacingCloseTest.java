package io.github.resilienthttp.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResilientHttpException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 * {@code close()} while an attempt waits in a rate-limit pause: the wait wakes and the operation
 * ends with reason {@code client-closed}, and nothing more reaches the server (blocking, async and a
 * plain call). Found by a new user's trial: the blocking pause sent its request after the close, and
 * the async one failed with a NullPointerException.
 */
@Timeout(30)
class PacingCloseTest {
  private MockWebServer server;
  private OkHttpClient okHttp;
  private ResilientHttpClient client;
  private final ScheduledExecutorService closer = Executors.newSingleThreadScheduledExecutor();

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient();
    client = ResilientHttpClient.wrap(okHttp).rateLimitPacing(true).build();
    // The first answer empties the quota for 20 s: the next attempt to the target waits.
    server.enqueue(new MockResponse.Builder().code(200).addHeader("RateLimit", "\"d\";r=0;t=20")
        .body("ok").build());
    server.enqueue(new MockResponse.Builder().code(200).body("sent after the close").build());
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
  }

  @AfterEach
  void stop() {
    closer.shutdownNow();
    client.close();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private Request get() {
    return new Request.Builder().url(server.url("/quota")).build();
  }

  private void closeIn(long millis) {
    closer.schedule(() -> client.close(), millis, TimeUnit.MILLISECONDS);
  }

  private static void assertClosed(Throwable e) {
    assertThat(e).isInstanceOfSatisfying(ResilientHttpException.class, f -> {
      assertThat(f.reason()).isEqualTo("client-closed");
      assertThat(f.mayHaveExecuted()).isFalse();
    });
  }

  @Test
  void aBlockingOperationInAPauseEndsAtTheCloseAndSendsNothing() {
    closeIn(300);
    long start = System.nanoTime();
    assertThatThrownBy(() -> client.operation(get()).execute().close())
        .satisfies(PacingCloseTest::assertClosed);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void anAsyncOperationInAPauseEndsAtTheCloseWithTheClosesFailure() throws Exception {
    CompletableFuture<Response> f = client.operation(get()).executeAsync();
    closeIn(300);
    assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .satisfies(e -> assertClosed(e.getCause()));
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void aPlainCallInAPauseEndsAtTheCloseAndSendsNothing() {
    closeIn(300);
    assertThatThrownBy(() -> client.okHttpClient().newCall(get()).execute().close())
        .satisfies(PacingCloseTest::assertClosed);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }
}
