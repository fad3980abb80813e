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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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

    await("the only permit is back after " + WAITERS + " cancelled waiters")
        .atMost(Duration.ofSeconds(5))
        .until(() -> bulkhead(client).getMetrics().getAvailableConcurrentCalls() == 1);
    assertNewOperationGetsThroughAtOnce(client);
    assertThat(fastRequests.get()).as("requests sent for cancelled waiters, plus the new one")
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

    await("the only permit is back after " + WAITERS + " timed-out waiters")
        .atMost(Duration.ofSeconds(5))
        .until(() -> bulkhead(client).getMetrics().getAvailableConcurrentCalls() == 1);
    assertNewOperationGetsThroughAtOnce(client);
    assertThat(fastRequests.get()).as("requests sent for timed-out waiters, plus the new one")
        .isEqualTo(1);
  }

  private void assertNewOperationGetsThroughAtOnce(ResilientHttpClient client) throws Exception {
    long start = System.nanoTime();
    CompletableFuture<Integer> fresh = client.operation(get("/fast")).executeAsync().thenApply(r -> {
      try (r) {
        return r.code();
      }
    });
    assertThat(fresh.get(MAX_WAIT.toSeconds() + 5, TimeUnit.SECONDS)).isEqualTo(200);
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as("a new operation at a free bulkhead (maxWait %s)", MAX_WAIT)
        .isLessThan(Duration.ofSeconds(2));
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
      Thread.sleep(60); // one arrival at a time: each waiter is queued before the next arrives
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
