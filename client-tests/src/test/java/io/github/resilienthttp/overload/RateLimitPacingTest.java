package io.github.resilienthttp.overload;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pacing from the server's rate-limit fields on real sockets, on a fake clock: after an answer says
 * the quota is used up until a reset, the next attempt to the target waits exactly until then, and
 * not at all when the reset lies beyond the deadline (the operation ends as at its deadline, with
 * the 429 returned when there is one); the async form holds no thread while it waits.
 */
@Timeout(30)
class RateLimitPacingTest {
  private final FakeTimeSource time = new FakeTimeSource();
  private final List<Duration> paced = new CopyOnWriteArrayList<>();
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
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client(Duration deadline, boolean pacing) {
    return ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
            .deadline(deadline).build())
        .timeSource(time)
        .rateLimitPacing(pacing)
        .addListener(new OperationListener() {
          @Override
          public void paced(OperationInfo operation, int attempt, Duration wait) {
            assertThat(attempt).isEqualTo(1);
            paced.add(wait);
          }
        })
        .build();
  }

  private Request get() {
    return new Request.Builder().url(server.url("/quota")).build();
  }

  private static MockResponse ok(String name, String value) {
    return new MockResponse.Builder().code(200).body("ok").addHeader(name, value).build();
  }

  private static MockResponse ok() {
    return new MockResponse.Builder().code(200).body("ok").build();
  }

  @Test
  void theNextOperationWaitsUntilTheResetTheServerAnnounced() throws IOException {
    ResilientHttpClient client = client(Duration.ofSeconds(30), true);
    server.enqueue(ok("RateLimit", "\"default\";r=0;t=5"));
    server.enqueue(ok());
    client.operation(get()).execute().close();
    assertThat(time.sleeps()).isEmpty();

    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(time.sleeps()).containsExactly(Duration.ofSeconds(5));
    assertThat(paced).containsExactly(Duration.ofSeconds(5));
    assertThat(server.getRequestCount()).isEqualTo(2);

    // The reset is over: the next one does not wait.
    server.enqueue(ok());
    client.operation(get()).execute().close();
    assertThat(time.sleeps()).hasSize(1);
  }

  @Test
  void withoutPacingTheAnnouncedResetIsIgnored() throws IOException {
    ResilientHttpClient client = client(Duration.ofSeconds(30), false);
    server.enqueue(ok("X-RateLimit-Remaining", "0").newBuilder()
        .addHeader("X-RateLimit-Reset", "5").build());
    server.enqueue(ok());
    client.operation(get()).execute().close();
    client.operation(get()).execute().close();
    assertThat(time.sleeps()).isEmpty();
    assertThat(paced).isEmpty();
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void aResetBeyondTheDeadlineEndsTheOperationAtOnceWithoutSending(boolean async)
      throws IOException {
    ResilientHttpClient client = client(Duration.ofSeconds(2), true);
    server.enqueue(ok("RateLimit-Remaining", "0").newBuilder()
        .addHeader("RateLimit-Reset", "5").build());
    client.operation(get()).execute().close();

    Throwable failure;
    try {
      if (async) {
        client.operation(get()).executeAsync().join().close();
      } else {
        client.operation(get()).execute().close();
      }
      failure = null;
    } catch (CompletionException e) {
      failure = e.getCause();
    } catch (IOException e) {
      failure = e;
    }
    assertThat(failure).isInstanceOf(DeadlineExceededException.class)
        .hasMessageContaining("rate-limit");
    assertThat(((DeadlineExceededException) failure).attempts()).isZero();
    assertThat(server.getRequestCount()).as("never sent").isEqualTo(1);
    assertThat(time.sleeps()).isEmpty();
    assertThat(paced).isEmpty();
  }

  @Test
  void aRetryOfA429WaitsForTheResetAndSucceeds() throws IOException {
    ResilientHttpClient client = client(Duration.ofSeconds(30), true);
    server.enqueue(new MockResponse.Builder().code(429)
        .addHeader("X-RateLimit-Remaining", "0").addHeader("X-RateLimit-Reset", "3").build());
    server.enqueue(ok());
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    // The backoff is none: the whole wait is the reset's, taken once (as the retry's delay).
    assertThat(time.sleeps()).containsExactly(Duration.ofSeconds(3));
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  @Test
  void a429WhoseResetIsBeyondTheDeadlineIsReturnedAsTheDeadlineReturnsIt() throws IOException {
    ResilientHttpClient client = client(Duration.ofSeconds(2), true);
    server.enqueue(new MockResponse.Builder().code(429)
        .addHeader("RateLimit", "\"default\";r=0;t=5").build());
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(429);
    }
    assertThat(time.sleeps()).isEmpty();
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void theAsyncWaitHoldsNoThreadAndCompletesOnOkHttpsThread() throws Exception {
    ResilientHttpClient client = client(Duration.ofSeconds(30), true);
    server.enqueue(ok("RateLimit", "\"default\";r=0;t=1"));
    server.enqueue(ok());
    client.operation(get()).execute().close();

    CompletableFuture<Response> second = client.operation(get()).executeAsync();
    assertThat(second).as("waiting for the reset, on the scheduler").isNotDone();
    AtomicReference<String> completedOn = new AtomicReference<>();
    CompletableFuture<Response> seen = second.whenComplete(
        (r, e) -> completedOn.set(Thread.currentThread().getName()));
    try (Response r = seen.join()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(paced).containsExactly(Duration.ofSeconds(1));
    assertThat(time.sleeps()).as("no thread slept").isEmpty();
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(completedOn.get()).doesNotContain("resilient-http-scheduler");
  }

  @Test
  void cancellingAnAsyncOperationThatWaitsForTheResetEndsItAtOnceUnsent() throws Exception {
    java.util.concurrent.atomic.AtomicReference<io.github.resilienthttp.OperationResult> ended =
        new java.util.concurrent.atomic.AtomicReference<>();
    ResilientHttpClient client = client(Duration.ofSeconds(30), true).newBuilder()
        .addListener(new OperationListener() {
          @Override
          public void operationEnded(OperationInfo operation,
              io.github.resilienthttp.OperationResult result) {
            ended.set(result);
          }
        }).build();
    server.enqueue(ok("RateLimit", "\"default\";r=0;t=20"));
    client.operation(get()).execute().close();
    ended.set(null);

    CompletableFuture<Response> waiting = client.operation(get()).executeAsync();
    assertThat(waiting).isNotDone();
    assertThat(waiting.cancel(true)).isTrue();
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> ended.get() != null);
    assertThat(ended.get().outcome()).isEqualTo(
        io.github.resilienthttp.OperationResult.Outcome.CANCELED);
    assertThat(ended.get().attempts()).isZero();
    assertThat(server.getRequestCount()).as("never sent").isEqualTo(1);
  }

  @Test
  void aPlainCallIsPacedToo() throws IOException {
    ResilientHttpClient client = client(Duration.ofSeconds(30), true);
    server.enqueue(ok("RateLimit", "\"default\";r=0;t=7"));
    server.enqueue(ok());
    client.okHttpClient().newCall(get()).execute().close();
    try (Response r = client.okHttpClient().newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(time.sleeps()).containsExactly(Duration.ofSeconds(7));
  }
}
