package io.github.resilienthttp.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.AdaptiveThrottlingPolicy;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.ThrottledException;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Client-side adaptive throttling on real sockets: with a seeded random source and a clock that
 * stands still, the number of attempts refused locally is exactly the one the SRE book's rule gives
 * (replayed here with the same seed), a refused attempt never reaches the server, and the refusals
 * stop as the server's accepts come back.
 */
@Timeout(60)
class AdaptiveThrottlingTest {
  private static final long SEED = 42;
  private static final double K = 2;
  /** 60 slices of one second. */
  private static final Duration WINDOW = Duration.ofSeconds(60);

  private final AtomicInteger serverRequests = new AtomicInteger();
  private volatile int status = 503;
  private final AtomicInteger throttledEvents = new AtomicInteger();
  private MockWebServer server;
  private OkHttpClient okHttp;
  private final FakeTimeSource time = new FakeTimeSource();

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        serverRequests.incrementAndGet();
        return new MockResponse.Builder().code(status).body("x").build();
      }
    });
    server.start();
    okHttp = new OkHttpClient();
  }

  @AfterEach
  void stop() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client(int maxAttempts) {
    return ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.none())
            .deadline(Duration.ofSeconds(30)).build())
        .timeSource(time)
        .random(new SplittableRandom(SEED))
        .adaptiveThrottling(AdaptiveThrottlingPolicy.builder().k(K).window(WINDOW).build())
        .addListener(new OperationListener() {
          @Override
          public void throttled(OperationInfo operation, int attempt) {
            throttledEvents.incrementAndGet();
          }
        })
        .build();
  }

  /**
   * The rule of the SRE book, replayed with the client's seed over the same 60 one-second slices:
   * the expected refusals.
   */
  private final class Model {
    private final SplittableRandom random = new SplittableRandom(SEED);
    private final java.util.List<long[]> events = new java.util.ArrayList<>(); // slice, accepted

    /** One attempt now: whether it is refused; {@code accepted} says what the server answers. */
    boolean refuses(boolean accepted) {
      long slice = time.nanoTime() / Duration.ofSeconds(1).toNanos();
      long requests = 0;
      long accepts = 0;
      for (long[] e : events) {
        if (slice - e[0] < 60) {
          requests++;
          accepts += e[1];
        }
      }
      double p = Math.max(0, (requests - K * accepts) / (requests + 1));
      boolean refused = p > 0 && random.nextDouble() < p;
      events.add(new long[] {slice, !refused && accepted ? 1 : 0});
      return refused;
    }
  }

  private Request get() {
    return new Request.Builder().url(server.url("/work")).build();
  }

  /** Runs one single-attempt operation; returns whether it was throttled. */
  private boolean run(ResilientHttpClient client, boolean async) throws IOException {
    try {
      Response r = async ? client.operation(get()).executeAsync().join()
          : client.operation(get()).execute();
      r.close();
      return false;
    } catch (ThrottledException e) {
      assertThat(e.reason()).isEqualTo("throttled");
      assertThat(e.attempts()).isZero();
      assertThat(e.target()).isEqualTo("http://" + server.getHostName() + ":" + server.getPort());
      return true;
    } catch (CompletionException e) {
      if (e.getCause() instanceof ThrottledException t) {
        assertThat(t.attempts()).isZero();
        return true;
      }
      throw e;
    }
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void refusesExactlyWhatTheRuleGivesNeverSendsARefusedAttemptAndRecovers(boolean async)
      throws IOException {
    ResilientHttpClient client = client(1);
    Model model = new Model();
    int expectedRefused = 0;
    int refused = 0;
    for (int i = 0; i < 200; i++) { // overloaded: every answer a 503
      if (model.refuses(false)) {
        expectedRefused++;
      }
      if (run(client, async)) {
        refused++;
      }
    }
    // With no accepts at all, p = requests / (requests + 1): nearly every attempt is refused.
    assertThat(refused).isEqualTo(expectedRefused).isGreaterThan(150);
    assertThat(serverRequests.get()).isEqualTo(200 - refused);
    assertThat(throttledEvents.get()).isEqualTo(refused);

    status = 200; // recovered
    int sentBefore = serverRequests.get();
    int expectedRefusedLater = 0;
    int refusedLater = 0;
    int lastRefusal = -1;
    for (int i = 0; i < 400; i++) {
      time.advance(Duration.ofSeconds(1));
      boolean expected = model.refuses(true);
      boolean got = run(client, async);
      assertThat(got).as("operation %d after recovery", i).isEqualTo(expected);
      if (got) {
        refusedLater++;
        lastRefusal = i;
      }
      if (expected) {
        expectedRefusedLater++;
      }
    }
    assertThat(refusedLater).isEqualTo(expectedRefusedLater).isPositive();
    assertThat(serverRequests.get() - sentBefore).isEqualTo(400 - refusedLater);
    // Refused attempts count as requests, so the refused share f of one window gives
    // p = 2f - 1 in the next: the refusals die out within a few windows (60 s = 60 steps each),
    // and then every attempt goes through.
    assertThat(lastRefusal).isLessThan(300);
  }

  @Test
  void theWindowForgetsOldRefusals() throws IOException {
    ResilientHttpClient client = client(1);
    for (int i = 0; i < 50; i++) {
      run(client, false);
    }
    int sent = serverRequests.get();
    assertThat(sent).isLessThan(50);
    time.advance(Duration.ofSeconds(61)); // beyond the window: nothing counted any more
    assertThat(run(client, false)).isFalse();
    assertThat(serverRequests.get()).isEqualTo(sent + 1);
  }

  @Test
  void aRetryRefusedAfterAnAnswerThatMayHaveBeenProcessedEndsOutcomeUnknown() throws IOException {
    ResilientHttpClient client = client(3);
    for (int i = 0; i < 30; i++) { // 503s: requests without accepts
      try {
        client.operation(get()).execute().close();
      } catch (ThrottledException e) {
        assertThat(e.getSuppressed()).isEmpty(); // a 503 says the server did not act
      }
    }
    status = 500; // may have been processed: a refused retry leaves the outcome unknown
    OutcomeUnknownException unknown = null;
    for (int i = 0; i < 50 && unknown == null; i++) {
      try {
        client.operation(new Request.Builder().url(server.url("/pay"))
            .post(RequestBody.create(new byte[] {1})).build()).execute().close();
      } catch (OutcomeUnknownException e) {
        if (e.getSuppressed().length > 0 && e.getSuppressed()[0] instanceof ThrottledException) {
          unknown = e;
        }
      } catch (ThrottledException e) {
        assertThat(e.attempts()).isZero(); // the first attempt itself refused: nothing sent
      }
    }
    assertThat(unknown).as("a retry refused after a 500").isNotNull();
    assertThat(unknown.reason()).isEqualTo("throttled");
    assertThat(unknown.attempts()).isPositive();
  }

  @Test
  void aPlainCallIsThrottledTooAndNeverSent() throws IOException {
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).backoff(Backoff.none()).build())
        .timeSource(time)
        .random(() -> 0L) // every draw 0: any positive probability refuses
        .adaptiveThrottling(AdaptiveThrottlingPolicy.defaults())
        .build();
    client.okHttpClient().newCall(get()).execute().close(); // a 503: p = 1/2 from now on
    assertThatThrownBy(() -> client.okHttpClient().newCall(get()).execute())
        .isInstanceOf(ThrottledException.class);
    assertThat(serverRequests.get()).isEqualTo(1);
  }

  @Test
  void theBuilderValidates() {
    assertThatThrownBy(() -> AdaptiveThrottlingPolicy.builder().k(1).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("k must be");
    assertThatThrownBy(() -> AdaptiveThrottlingPolicy.builder().window(Duration.ofHours(2)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("window must be");
  }
}
