package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Admission at a one-permit bulkhead: waiters that give up (cancelled, or timed out by the caller)
 * never take the permit with them, and waiters that stay are served in arrival order, sync and async
 * alike.
 */
@Timeout(60)
class BulkheadAdmissionTest {
  private static final Duration MAX_WAIT = Duration.ofSeconds(30);
  private static final int WAITERS = 2_000;

  private final CountDownLatch slowArrived = new CountDownLatch(1);
  private final CountDownLatch releaseSlow = new CountDownLatch(1);
  private final AtomicInteger fastRequests = new AtomicInteger();
  private final List<Integer> arrivalOrder = new CopyOnWriteArrayList<>();
  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void startServer() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        String path = request.getUrl().encodedPath();
        if (path.equals("/slow")) {
          slowArrived.countDown();
          releaseSlow.await(30, TimeUnit.SECONDS);
        } else if (path.equals("/fast")) {
          fastRequests.incrementAndGet();
        } else if (path.equals("/seq")) {
          arrivalOrder.add(Integer.parseInt(request.getHeaders().get("Seq")));
        }
        return new MockResponse.Builder().code(200).body("ok").build();
      }
    });
    server.start();
    okHttp = new OkHttpClient();
    // Waiters are SDK-side: let OkHttp run every admitted call at once.
    okHttp.dispatcher().setMaxRequestsPerHost(64);
  }

  @AfterEach
  void stop() {
    releaseSlow.countDown();
    okHttp.dispatcher().cancelAll();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client() {
    return ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).backoff(Backoff.none())
            .deadline(Duration.ofSeconds(60)).build())
        .bulkhead(BulkheadConfig.custom().maxConcurrentCalls(1).maxWaitDuration(MAX_WAIT).build())
        .build();
  }

  private Request get(String path) {
    return new Request.Builder().url(server.url(path)).build();
  }

  /** Starts the slow operation and returns once the server holds it (and so it holds the permit). */
  private CompletableFuture<Response> holdThePermit(ResilientHttpClient client) throws Exception {
    CompletableFuture<Response> slow = client.operation(get("/slow")).executeAsync();
    assertThat(slowArrived.await(10, TimeUnit.SECONDS)).as("slow request reached the server").isTrue();
    assertThat(bulkhead(client).getMetrics().getAvailableConcurrentCalls()).isZero();
    return slow;
  }

  private static Bulkhead bulkhead(ResilientHttpClient client) {
    return client.bulkhead().orElseThrow();
  }

  @Test
  void twoThousandCancelledWaitersGiveThePermitBackAndANewOperationGetsThroughAtOnce()
      throws Exception {
    ResilientHttpClient client = client();
    CompletableFuture<Response> slow = holdThePermit(client);
    List<CompletableFuture<Response>> waiters = new ArrayList<>();
    for (int i = 0; i < WAITERS; i++) {
      waiters.add(client.operation(get("/fast")).executeAsync());
    }
    for (CompletableFuture<Response> w : waiters) {
      w.cancel(true);
    }

    releaseSlow.countDown();
    slow.get(10, TimeUnit.SECONDS).close();

    int available = awaitAvailable(client);
    String fresh = newOperationOutcome(client);
    int sent = fastRequests.get();
    SoftAssertions.assertSoftly(softly -> {
      softly.assertThat(available).as("permits back after %d cancelled waiters", WAITERS).isEqualTo(1);
      softly.assertThat(fresh).as("a new operation at the bulkhead (maxWait %s)", MAX_WAIT)
          .isEqualTo("200 within 2 s");
    });
    assertThat(sent).as("requests sent for cancelled waiters, plus the new one")
        .isEqualTo(1);
  }

  @Test
  void twoThousandWaitersTimedOutByTheCallerGiveThePermitBackAndANewOperationGetsThroughAtOnce()
      throws Exception {
    ResilientHttpClient client = client();
    CompletableFuture<Response> slow = holdThePermit(client);
    List<CompletableFuture<Response>> waiters = new ArrayList<>();
    for (int i = 0; i < WAITERS; i++) {
      waiters.add(client.operation(get("/fast")).executeAsync().orTimeout(200, TimeUnit.MILLISECONDS));
    }
    await("every waiter timed out by the caller").atMost(Duration.ofSeconds(10))
        .until(() -> waiters.stream().allMatch(CompletableFuture::isCompletedExceptionally));

    releaseSlow.countDown();
    slow.get(10, TimeUnit.SECONDS).close();

    int available = awaitAvailable(client);
    String fresh = newOperationOutcome(client);
    int sent = fastRequests.get();
    SoftAssertions.assertSoftly(softly -> {
      softly.assertThat(available).as("permits back after %d timed-out waiters", WAITERS).isEqualTo(1);
      softly.assertThat(fresh).as("a new operation at the bulkhead (maxWait %s)", MAX_WAIT)
          .isEqualTo("200 within 2 s");
    });
    assertThat(sent).as("requests sent for timed-out waiters, plus the new one")
        .isEqualTo(1);
  }

  /** The bulkhead's available permits once back to 1, or after 5 s. */
  private static int awaitAvailable(ResilientHttpClient client) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    int available;
    while ((available = bulkhead(client).getMetrics().getAvailableConcurrentCalls()) != 1
        && System.nanoTime() - until < 0) {
      Thread.sleep(10);
    }
    return available;
  }

  /** Runs a new operation: "200 within 2 s", or what happened instead (waiting at most 3 s). */
  private String newOperationOutcome(ResilientHttpClient client) throws Exception {
    long start = System.nanoTime();
    CompletableFuture<Integer> fresh = client.operation(get("/fast")).executeAsync().thenApply(r -> {
      try (r) {
        return r.code();
      }
    });
    try {
      int code = fresh.get(3, TimeUnit.SECONDS);
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      return millis < 2000 ? code + " within 2 s" : code + " after " + millis + " ms";
    } catch (TimeoutException e) {
      fresh.cancel(true);
      return "still waiting for a permit after 3 s";
    } catch (ExecutionException e) {
      return "failed: " + e.getCause();
    }
  }

  /** A scheduler whose {@code schedule} fails while armed: as a shut-down executor, or with an Error. */
  private static final class FailingScheduler extends ScheduledThreadPoolExecutor {
    final AtomicBoolean armed = new AtomicBoolean();
    private final boolean withError;
    private final ScheduledThreadPoolExecutor shutDown = new ScheduledThreadPoolExecutor(1);

    FailingScheduler(boolean withError) {
      super(1, r -> {
        Thread t = new Thread(r, "failing-scheduler");
        t.setDaemon(true);
        return t;
      });
      this.withError = withError;
      shutDown.shutdown();
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      if (armed.get()) {
        if (withError) {
          throw new AssertionError("user scheduler failed");
        }
        return shutDown.schedule(command, delay, unit); // RejectedExecutionException
      }
      return super.schedule(command, delay, unit);
    }
  }

  @ParameterizedTest(name = "scheduler throws an Error: {0}")
  @ValueSource(booleans = {false, true})
  void aSchedulerThatFailsDuringAnAsyncBulkheadWaitEndsTheWaiterAndKeepsThePermit(boolean withError)
      throws Exception {
    FailingScheduler scheduler = new FailingScheduler(withError);
    try {
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
          .noCircuitBreaker()
          .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(60)).build())
          .bulkhead(BulkheadConfig.custom().maxConcurrentCalls(1).maxWaitDuration(MAX_WAIT).build())
          .scheduler(scheduler)
          .build();
      CompletableFuture<Response> slow = holdThePermit(client);

      scheduler.armed.set(true);
      String waited;
      try {
        CompletableFuture<Response> waiter = client.operation(get("/fast")).executeAsync();
        try {
          waiter.get(2, TimeUnit.SECONDS).close();
          waited = "completed with a response";
        } catch (ExecutionException e) {
          waited = "failed: " + e.getCause();
        } catch (TimeoutException e) {
          waited = "HUNG";
        }
      } catch (RuntimeException | Error e) {
        waited = "executeAsync() threw synchronously: " + e;
      }
      scheduler.armed.set(false);

      releaseSlow.countDown();
      slow.get(10, TimeUnit.SECONDS).close();
      int available = awaitAvailable(client);
      String fresh = newOperationOutcome(client);
      String waitedFinally = waited;
      SoftAssertions.assertSoftly(softly -> {
        softly.assertThat(waitedFinally).as("the waiter whose wait could not be scheduled")
            .isNotEqualTo("HUNG").doesNotStartWith("executeAsync() threw");
        softly.assertThat(available).as("permits back").isEqualTo(1);
        softly.assertThat(fresh).as("a new operation").isEqualTo("200 within 2 s");
      });
    } finally {
      scheduler.shutdownNow();
    }
  }

  @Test
  void syncAndAsyncWaitersAreAdmittedInArrivalOrder() throws Exception {
    int n = 16;
    ResilientHttpClient client = client();
    CompletableFuture<Response> slow = holdThePermit(client);
    List<CompletableFuture<Integer>> done = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Request r = get("/seq").newBuilder().header("Seq", Integer.toString(i)).build();
      if (i % 2 == 0) {
        done.add(CompletableFuture.supplyAsync(() -> {
          try (Response response = client.operation(r).execute()) {
            return response.code();
          } catch (IOException e) {
            throw new RuntimeException(e);
          }
        }, command -> {
          Thread t = new Thread(command, "sync-waiter");
          t.setDaemon(true);
          t.start();
        }));
      } else {
        done.add(client.operation(r).executeAsync().thenApply(response -> {
          try (response) {
            return response.code();
          }
        }));
      }
      Thread.sleep(100); // one arrival at a time: each waiter is queued before the next arrives
    }

    releaseSlow.countDown();
    slow.get(10, TimeUnit.SECONDS).close();
    for (CompletableFuture<Integer> f : done) {
      assertThat(f.get(20, TimeUnit.SECONDS)).isEqualTo(200);
    }

    assertThat(arrivalOrder).hasSize(n);
    int maxDisplacement = 0;
    for (int position = 0; position < n; position++) {
      maxDisplacement = Math.max(maxDisplacement, Math.abs(arrivalOrder.get(position) - position));
    }
    assertThat(maxDisplacement)
        .as("order in which the server saw the waiters (sync = even, async = odd): %s", arrivalOrder)
        .isLessThanOrEqualTo(1);
  }
}
