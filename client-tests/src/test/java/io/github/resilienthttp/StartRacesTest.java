package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * cancel() and closeNow() racing the start of an operation, every way it runs, HTTP/1.1
 * and HTTP/2. Each race must end (no hang), with the right failure, leaving nothing registered
 * with the lifecycle nor watched by the deadline watchdog.
 */
class StartRacesTest {
  private static final int RACES = 60;

  enum Way { BLOCKING, ASYNC, HEDGED, HEDGED_ASYNC, AWAIT, AWAIT_ASYNC, PLAIN_CALL, PLAIN_ENQUEUE }

  private ProtocolServer loop;

  static List<Arguments> waysAndProtocols() {
    return ProtocolServer.withEachProtocol((Object[]) Way.values());
  }

  private void start(Protocol protocol) throws IOException {
    loop = new ProtocolServer(protocol);
    loop.server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest r) {
        if (r.getMethod().equals("POST")) {
          return new MockResponse.Builder().code(202)
              .addHeader("Operation-Location", "/jobs/j1/status").addHeader("Retry-After", "60")
              .build();
        }
        return new MockResponse.Builder().code(200).body("ok")
            .headersDelay(20, TimeUnit.MILLISECONDS).build();
      }
    });
    loop.start();
  }

  @AfterEach
  void tearDown() {
    if (loop != null) {
      loop.close();
    }
  }


  private ResilientHttpClient newClient(Way way) {
    ResilientHttpClient.Builder b = loop.builder();
    if (way == Way.HEDGED || way == Way.HEDGED_ASYNC) {
      b.hedging(HedgingPolicy.fixedDelay(Duration.ofSeconds(30)));
    }
    return loop.client(b);
  }

  private Request request(Way way) {
    return way == Way.AWAIT || way == Way.AWAIT_ASYNC ? loop.charge() : loop.get();
  }

  private static final AsyncOperationPolicy WAIT = WaitSignals.LONG_POLLS;

  /** Starts {@code op} (or a plain call) the way given; what it ends with. */
  private static CompletableFuture<Response> run(ResilientHttpClient client, Operation op,
      Request request, Way way) {
    switch (way) {
      case ASYNC:
      case HEDGED_ASYNC:
        return op.executeAsync();
      case AWAIT_ASYNC:
        return op.awaitCompletionAsync(WAIT);
      case PLAIN_ENQUEUE:
        return Ways.PLAIN_ENQUEUE.run(client, request);
      default:
        try {
          return CompletableFuture.completedFuture(way == Way.AWAIT ? op.awaitCompletion(WAIT)
              : way == Way.PLAIN_CALL ? client.okHttpClient().newCall(request).execute()
              : op.execute());
        } catch (IOException e) {
          return CompletableFuture.failedFuture(e);
        }
    }
  }

  /** The outcome's kind: "ok", "cancelled" (CancellationException), or a failure's reason. */
  private static String outcome(CompletableFuture<Response> f) throws Exception {
    try {
      Response r = f.get(10, TimeUnit.SECONDS);
      r.close();
      return "ok";
    } catch (CancellationException e) {
      return "cancelled";
    } catch (ExecutionException e) {
      Throwable c = e.getCause() instanceof CompletionException ce ? ce.getCause() : e.getCause();
      if (c instanceof CancellationException) {
        return "cancelled";
      }
      if (c instanceof OperationFailure of) {
        return of.reason();
      }
      if (c instanceof IllegalStateException && c.getMessage().contains("client closed")) {
        return "refused";
      }
      return c.toString();
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("waysAndProtocols")
  void closeNowRacingTheStartEndsItWithTheCloseAndLeavesNothing(Way way, Protocol protocol)
      throws Exception {
    start(protocol);
    Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
    for (int i = 0; i < RACES; i++) {
      ResilientHttpClient client = newClient(way);
      Request request = request(way);
      Operation op = way == Way.PLAIN_CALL || way == Way.PLAIN_ENQUEUE ? null
          : client.operation(request);
      CyclicBarrier go = new CyclicBarrier(2);
      CompletableFuture<Void> closer = CompletableFuture.runAsync(() -> {
        await(go);
        client.closeNow();
      });
      await(go);
      CompletableFuture<Response> f;
      try {
        f = run(client, op, request, way);
      } catch (IllegalStateException e) {
        f = CompletableFuture.failedFuture(e);
      }
      closer.get(10, TimeUnit.SECONDS);
      String o = outcome(f);
      seen.computeIfAbsent(o, k -> new AtomicInteger()).incrementAndGet();
      assertThat(o).as("race %d", i).isIn("ok", "client-closed", "refused");
      ProtocolServer.awaitNothingLeft(client);
    }
    System.out.println(way + " " + protocol + " closeNow: " + seen);
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("waysAndProtocols")
  void cancelRacingTheStartEndsItAndLeavesNothing(Way way, Protocol protocol) throws Exception {
    if (way == Way.PLAIN_CALL || way == Way.PLAIN_ENQUEUE) {
      return; // a plain call is cancelled through its Call
    }
    start(protocol);
    ResilientHttpClient client = newClient(way);
    Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
    for (int i = 0; i < RACES; i++) {
      Request request = request(way);
      Operation op = client.operation(request);
      CyclicBarrier go = new CyclicBarrier(2);
      CompletableFuture<Void> canceller = CompletableFuture.runAsync(() -> {
        await(go);
        op.cancel();
      });
      await(go);
      CompletableFuture<Response> f = run(client, op, request, way);
      canceller.get(10, TimeUnit.SECONDS);
      if (way == Way.AWAIT || way == Way.AWAIT_ASYNC) {
        // A wait the cancel missed would wait 60 s for its poll: a second cancel stops it.
        op.cancel();
      }
      String o = outcome(f);
      seen.computeIfAbsent(o, k -> new AtomicInteger()).incrementAndGet();
      assertThat(o).as("race %d", i).isIn("ok", "canceled", "cancelled");
      ProtocolServer.awaitNothingLeft(client);
    }
    System.out.println(way + " " + protocol + " cancel: " + seen);
  }

  private static void await(CyclicBarrier barrier) {
    try {
      barrier.await(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
