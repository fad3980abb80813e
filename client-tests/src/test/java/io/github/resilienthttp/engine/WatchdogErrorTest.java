package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The SDK's deadline sweep runs on Okio's watchdog thread, which times out every OkHttp call and
 * socket in the JVM. A user {@link EventListener#canceled} that throws an {@link Error} when the sweep
 * cancels a call must not end that thread: afterwards, timeouts elsewhere still fire.
 *
 * <p>Note: on an engine with this defect, the failure is JVM-wide: OkHttp timeouts of tests that run
 * later in the same JVM may stop firing too (they fail by their own {@code @Timeout}).
 */
@Timeout(30)
class WatchdogErrorTest {
  /** An Error from user code; not a VirtualMachineError. */
  static final class ListenerBug extends Error {
    private static final long serialVersionUID = 1L;

    ListenerBug(String message) {
      super(message);
    }
  }

  private final AtomicBoolean throwOnCanceled = new AtomicBoolean(true);
  private final AtomicInteger canceledCalls = new AtomicInteger();
  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void startServer() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return new MockResponse.Builder().code(200).body("late")
            .headersDelay(5, TimeUnit.SECONDS).build();
      }
    });
    server.start();
    okHttp = new OkHttpClient.Builder()
        // Holds every attempt until its call is cancelled (at most 3 s) before it reaches the
        // network, so that no socket timeout can end it: only the deadline sweep's cancel() can.
        .addInterceptor(chain -> {
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
          while (!chain.call().isCanceled() && System.nanoTime() - until < 0) {
            try {
              Thread.sleep(5);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              break;
            }
          }
          return chain.proceed(chain.request());
        })
        .eventListener(new EventListener() {
          @Override
          public void canceled(Call call) {
            canceledCalls.incrementAndGet();
            if (throwOnCanceled.get()) {
              throw new ListenerBug("listener bug in canceled()");
            }
          }
        })
        .build();
  }

  @AfterEach
  void stop() {
    throwOnCanceled.set(false);
    okHttp.dispatcher().cancelAll();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client() {
    return ResilientHttpClient.wrap(okHttp).noCircuitBreaker().retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).backoff(Backoff.none())
            .deadline(Duration.ofSeconds(10)).build())
        .build();
  }

  /**
   * Runs an operation with a 300 ms deadline whose attempt only the deadline sweep can end; how it
   * ended: "deadline" when within 1 s.
   */
  private String operationWithShortDeadline(ResilientHttpClient client) throws Exception {
    long start = System.nanoTime();
    CompletableFuture<String> ended = CompletableFuture.supplyAsync(() -> {
      try (Response r = client.operation(
          new Request.Builder().url(server.url("/silent")).build()).deadline(Duration.ofMillis(300))
          .execute()) {
        return "returned " + r.code();
      } catch (DeadlineExceededException e) {
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        return millis < 1000 ? "deadline" : "deadline, but only after " + millis + " ms";
      } catch (IOException e) {
        return "threw " + e;
      }
    });
    try {
      return ended.get(5, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      return "HUNG";
    }
  }

  @Test
  void anErrorFromCanceledDuringADeadlineSweepDoesNotStopTimeoutsElsewhere() throws Exception {
    ResilientHttpClient client = client();

    String first = operationWithShortDeadline(client);
    assertThat(first).as("the operation whose sweep hit the listener bug").isNotEqualTo("HUNG");
    assertThat(canceledCalls.get()).as("canceled() calls: the sweep cancelled the call").isPositive();

    // A plain OkHttp client elsewhere in the JVM: its call timeout is an Okio AsyncTimeout, fired by
    // the same watchdog thread. (Its read timeout would not tell: OkHttp also sets SO_TIMEOUT.)
    OkHttpClient other = new OkHttpClient.Builder().callTimeout(Duration.ofMillis(200)).build();
    long start = System.nanoTime();
    CompletableFuture<String> plain = CompletableFuture.supplyAsync(() -> {
      try (Response r = other.newCall(new Request.Builder().url(server.url("/other")).build())
          .execute()) {
        return "returned " + r.code();
      } catch (InterruptedIOException e) {
        return "timed out";
      } catch (IOException e) {
        return "threw " + e;
      }
    });
    String plainOutcome;
    try {
      plainOutcome = plain.get(3, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      plainOutcome = "HUNG";
    }
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    other.dispatcher().cancelAll();
    other.connectionPool().evictAll();
    assertThat(plainOutcome).as("a 200 ms timeout on another client").isEqualTo("timed out");
    assertThat(took).isLessThan(Duration.ofSeconds(1));

    // And the SDK's own deadline still fires for the next operation.
    throwOnCanceled.set(false);
    assertThat(operationWithShortDeadline(client)).as("the next operation's 300 ms deadline")
        .isEqualTo("deadline");
  }
}
