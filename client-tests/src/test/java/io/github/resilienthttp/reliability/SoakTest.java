package io.github.resilienthttp.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationOptions;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.testkit.Effect;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.FaultMix;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A concurrency soak: many payment operations from 64 threads against the testkit server with seeded
 * random faults, through every entry point (execute, executeAsync, the plain OkHttp client's execute
 * and enqueue), with a 16-permit bulkhead and the default retry budget and circuit breaker.
 *
 * <p>Proves, under contention: no order is charged twice; every operation ends with a response or an
 * {@link OperationFailure} that carries the operation's own key; the server received exactly the
 * attempts the SDK started; and afterwards no connection is in use, every bulkhead permit is back and
 * no thread is left behind.
 *
 * <p>Size: {@value #DEFAULT_OPERATIONS} operations by default ({@code -Dsoak.operations=N} to change);
 * the seed is random per run, printed, and replayable with {@code -Dsoak.seed=S} (the faults are then
 * the same sequence; which request draws which fault still depends on thread timing).
 */
class SoakTest {
  static final int DEFAULT_OPERATIONS = 20_000;
  private static final int OPERATIONS = Integer.getInteger("soak.operations", DEFAULT_OPERATIONS);
  private static final int THREADS = 64;
  private static final int PERMITS = 16;
  private static final MediaType JSON = MediaType.get("application/json");
  /** 429 carries Retry-After 0 or 1 s, a real wait: kept rare. */
  private static final FaultMix MIX = FaultMix.builder()
      .lostResponse(0.03).status503(0.02).status429(0.002).status500(0.015).dropBeforeProcessing(0.015)
      .build();

  /** How each operation is run, by index modulo 20. */
  enum Mode {
    EXECUTE, EXECUTE_ASYNC, PLAIN_EXECUTE, PLAIN_ENQUEUE;

    static Mode of(int i) {
      int m = i % 20;
      return m < 9 ? EXECUTE : m < 18 ? EXECUTE_ASYNC : m == 18 ? PLAIN_EXECUTE : PLAIN_ENQUEUE;
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void concurrentFaultedOperationsChargeOnceFailTypedAndLeakNothing() throws Exception {
    long seed = Long.getLong("soak.seed", System.nanoTime());
    System.out.printf("SoakTest: %d operations, %d threads, seed %d (replay: -Dsoak.seed=%d)%n",
        OPERATIONS, THREADS, seed, seed);
    Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();

    IdempotentTestServer server = IdempotentTestServer.builder().build().start();
    server.randomFaults(seed, MIX);
    ExecutorService okHttpExecutor = Executors.newCachedThreadPool(named("soak-okhttp"));
    Dispatcher dispatcher = new Dispatcher(okHttpExecutor);
    dispatcher.setMaxRequests(256);
    dispatcher.setMaxRequestsPerHost(256);
    OkHttpClient okHttp = new OkHttpClient.Builder()
        .dispatcher(dispatcher)
        .connectionPool(new ConnectionPool(2 * PERMITS, 1, TimeUnit.MINUTES))
        .build();
    AtomicInteger attemptsStarted = new AtomicInteger();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder()
            .maxAttempts(4)
            .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(5), Duration.ofMillis(100)))
            .deadline(Duration.ofSeconds(20))
            .build())
        .bulkhead(BulkheadConfig.custom().maxConcurrentCalls(PERMITS)
            .maxWaitDuration(Duration.ofSeconds(10)).build())
        .addListener(new OperationListener() {
          @Override
          public void attemptStarted(OperationInfo operation, int attempt) {
            attemptsStarted.incrementAndGet();
          }
        })
        .build();

    Map<String, String> keyByOrder = new ConcurrentHashMap<>();
    Map<String, Boolean> keySentByOrder = new ConcurrentHashMap<>();
    Map<String, Integer> statusByOrder = new ConcurrentHashMap<>();
    Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    AtomicInteger next = new AtomicInteger();
    AtomicInteger ended = new AtomicInteger();

    long start = System.nanoTime();
    ExecutorService workers = Executors.newFixedThreadPool(THREADS, named("soak-worker"));
    try {
      for (int t = 0; t < THREADS; t++) {
        workers.execute(() -> {
          for (int i = next.getAndIncrement(); i < OPERATIONS; i = next.getAndIncrement()) {
            String order = "soak-" + i;
            Mode mode = Mode.of(i);
            boolean sendKey = i % 7 != 3;     // one in seven without a key: not idempotent
            String key = IdempotencyKeyPolicy.newKey();
            keyByOrder.put(order, key);
            keySentByOrder.put(order, sendKey);
            String outcome;
            try {
              Response response = run(client, server, mode, order, key, sendKey);
              try (response) {
                String body = response.body().string();
                statusByOrder.put(order, response.code());
                outcome = mode + " " + response.code()
                    + ("true".equals(response.header("Idempotent-Replayed")) ? " replayed" : "");
                if (response.code() == 201 && !body.contains("\"id\":\"pay_")) {
                  problems.add(order + ": 201 without a payment: " + body);
                }
              }
            } catch (Throwable e) {
              outcome = mode + " " + e.getClass().getSimpleName();
              if (!(e instanceof OperationFailure failure)) {
                problems.add(order + " (" + mode + "): untyped " + e);
              } else if (!key.equals(failure.idempotencyKey())) {
                problems.add(order + " (" + mode + "): " + e + " carries key "
                    + failure.idempotencyKey() + ", not the operation's " + key);
              } else if (failure.idempotencyKeySent() != sendKey) {
                problems.add(order + " (" + mode + "): keySent " + failure.idempotencyKeySent());
              }
            }
            outcomes.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
            ended.incrementAndGet();
          }
        });
      }
      workers.shutdown();
      boolean finished = workers.awaitTermination(50, TimeUnit.SECONDS);
      long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      System.out.printf("SoakTest: %d of %d operations ended in %d ms (%d attempts, %d requests at the"
              + " server, %d faulted, %d replays, at most %d at once); outcomes %s%n", ended.get(),
          OPERATIONS, elapsedMs, attemptsStarted.get(), server.stats().requests(), server.stats().faulted(),
          server.stats().replays(), server.stats().maxConcurrent(),
          new TreeMap<>(outcomes.entrySet().stream()
              .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()))));

      withSeed(seed, () -> {
        assertThat(finished).as("all operations ended within 50 s").isTrue();
        assertThat(problems).as("operations that did not end with a response or their own typed failure")
            .isEmpty();
        assertThat(ended.get()).isEqualTo(OPERATIONS);

        List<Effect> effects = server.effects();
        assertThat(server.duplicateEffects(Effect::body)).as("orders charged twice").isZero();
        Map<String, Effect> effectByOrder = new TreeMap<>();
        for (Effect effect : effects) {
          effectByOrder.put(orderOf(effect.body()), effect);
        }
        List<String> wrongKey = new ArrayList<>();
        effectByOrder.forEach((order, effect) -> {
          String expected = keySentByOrder.get(order) ? keyByOrder.get(order) : null;
          if (!Objects.equals(effect.key(), expected)) {
            wrongKey.add(order + ": effect key " + effect.key() + ", expected " + expected);
          }
        });
        assertThat(wrongKey).as("effects recorded under another key").isEmpty();
        List<String> createdWithoutEffect = statusByOrder.entrySet().stream()
            .filter(e -> e.getValue() == 201 && !effectByOrder.containsKey(e.getKey()))
            .map(Map.Entry::getKey).toList();
        assertThat(createdWithoutEffect).as("201 answers without a payment").isEmpty();
        assertThat(server.stats().requests()).as("requests at the server = attempts started")
            .isEqualTo(attemptsStarted.get());

        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
            assertThat(okHttp.connectionPool().connectionCount()).as("connections in use")
                .isEqualTo(okHttp.connectionPool().idleConnectionCount()));
        assertThat(server.stats().maxConcurrent()).as("requests in flight at once, at the server")
            .isBetween(2, PERMITS);
        assertThat(client.bulkhead().orElseThrow().getMetrics().getAvailableConcurrentCalls())
            .as("bulkhead permits returned").isEqualTo(PERMITS);
      });
    } finally {
      workers.shutdownNow();
      okHttp.connectionPool().evictAll();
      okHttpExecutor.shutdown();
      server.close();
    }

    assertThat(okHttpExecutor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    // Threads this test started must end. Allowed to stay: OkHttp's and Okio's shared daemon
    // threads (idle ones expire after 60 s) and the client's one scheduler thread, which the SDK
    // never stops (see clientsThatAreNoLongerUsedLeaveNoSchedulerThreadBehind).
    withSeed(seed, () -> await().pollInSameThread().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(newThreads(threadsBefore)).as("threads left behind").isEmpty()));
  }

  /**
   * HTTP/2 (prior knowledge) under load: keyed and keyless POSTs through every entry point, over
   * connections the server shuts down gracefully (GOAWAY after every 25th stream, so streams in
   * flight may be refused), with refused streams ({@code REFUSED_STREAM}), 503s and streams reset
   * after the request was processed. No order is charged twice, every operation ends with a
   * response or its own typed failure, no refusal is ever called outcome unknown, a keyed POST is
   * outcome unknown only when all its attempts failed, and no connection is left in use.
   */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void http2OperationsUnderGracefulRestartsChargeOnce() throws Exception {
    int operations = Math.max(200, OPERATIONS / 10);
    int threads = 16;
    long seed = Long.getLong("soak.seed", System.nanoTime());
    java.util.random.RandomGenerator faults = new java.util.SplittableRandom(seed);
    Map<String, AtomicInteger> effectsByOrder = new ConcurrentHashMap<>();
    Map<String, String> answered = new ConcurrentHashMap<>();
    AtomicInteger served = new AtomicInteger();
    AtomicInteger resetsAfterProcessing = new AtomicInteger();
    mockwebserver3.MockWebServer server = new mockwebserver3.MockWebServer();
    server.setProtocols(List.of(okhttp3.Protocol.H2_PRIOR_KNOWLEDGE));
    AtomicInteger streams = new AtomicInteger();
    AtomicInteger refusedStreams = new AtomicInteger();
    // MockWebServer takes an HTTP/2 stream's socket effects from peek() when the stream starts,
    // and its status and body from dispatch(), later on the same thread. It also calls peek()
    // again before reading the body (and once per connection on its accepting thread, looking only
    // at onRequestStart, which no plan uses), so a thread keeps its plan until dispatch() takes it:
    // a stream is processed or not as the same plan says its stream ends.
    ThreadLocal<H2Plan> plan = new ThreadLocal<>();
    AtomicInteger plans = new AtomicInteger();
    server.setDispatcher(new mockwebserver3.Dispatcher() {
      @Override
      public mockwebserver3.MockResponse peek() {
        H2Plan planned = plan.get();
        if (planned != null) {
          return planned.effects();
        }
        double roll;
        synchronized (faults) {
          roll = faults.nextDouble();
        }
        H2Fault fault = roll < 0.04 ? H2Fault.REFUSED : roll < 0.08 ? H2Fault.UNAVAILABLE
            : roll < 0.11 ? H2Fault.RESET_AFTER_PROCESSING : H2Fault.NONE;
        mockwebserver3.MockResponse.Builder b = new mockwebserver3.MockResponse.Builder();
        if (plans.incrementAndGet() % 25 == 0) {
          b.onResponseEnd(mockwebserver3.SocketEffect.ShutdownConnection.INSTANCE);
        }
        if (fault == H2Fault.REFUSED) {
          // Refused once the request is read (RFC 9113 §8.7: not processed, however much
          // arrived). Refused at its start, a DATA frame still arriving could draw MockWebServer's
          // RST_STREAM(PROTOCOL_ERROR) first, a different fault (RFC 9113 §5.1; OkHttp issue 6171).
          b.onResponseStart(new mockwebserver3.SocketEffect.CloseStream(0x7));
        } else if (fault == H2Fault.RESET_AFTER_PROCESSING) {
          b.onResponseStart(new mockwebserver3.SocketEffect.CloseStream(0x2));
        }
        planned = new H2Plan(fault, b.build());
        plan.set(planned);
        return planned.effects();
      }

      @Override
      public mockwebserver3.MockResponse dispatch(mockwebserver3.RecordedRequest request) {
        H2Plan planned = plan.get();
        plan.remove();
        streams.incrementAndGet();
        if (planned == null) {
          return new mockwebserver3.MockResponse.Builder().code(503).build(); // not processed
        }
        if (planned.fault() == H2Fault.REFUSED) {
          refusedStreams.incrementAndGet();
          return new mockwebserver3.MockResponse.Builder().code(503).build(); // not processed
        }
        served.incrementAndGet();
        if (planned.fault() == H2Fault.UNAVAILABLE) {
          return new mockwebserver3.MockResponse.Builder().code(503).body("busy").build();
        }
        String order = orderOf(request.getBody().utf8());
        String key = request.getHeaders().get("Idempotency-Key");
        boolean replay = key != null && answered.putIfAbsent(key, order) != null;
        if (!replay) {
          effectsByOrder.computeIfAbsent(order, o -> new AtomicInteger()).incrementAndGet();
        }
        if (planned.fault() == H2Fault.RESET_AFTER_PROCESSING) {
          resetsAfterProcessing.incrementAndGet(); // processed; the reset loses the answer
        }
        mockwebserver3.MockResponse.Builder b = new mockwebserver3.MockResponse.Builder()
            .code(201).body("{\"id\":\"pay_" + order + "\"}");
        if (replay) {
          b.addHeader("Idempotent-Replayed", "true");
        }
        return b.build();
      }
    });
    server.start();
    ExecutorService okHttpExecutor = Executors.newCachedThreadPool(named("soak-h2-okhttp"));
    OkHttpClient okHttp = new OkHttpClient.Builder()
        .protocols(List.of(okhttp3.Protocol.H2_PRIOR_KNOWLEDGE))
        .dispatcher(new Dispatcher(okHttpExecutor))
        .build();
    Map<String, AtomicInteger> reasons = new ConcurrentHashMap<>();
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().maxAttempts(4)
            .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(1), Duration.ofMillis(20)))
            .deadline(Duration.ofSeconds(20)).build())
        .retryBudget(io.github.resilienthttp.RetryBudget.unlimited())
        .addListener(new OperationListener() {
          @Override
          public void attemptEnded(OperationInfo operation, int attempt, int statusCode,
              IOException failure, io.github.resilienthttp.Decision decision, Duration duration) {
            reasons.computeIfAbsent(decision.reason(), r -> new AtomicInteger()).incrementAndGet();
            boolean refusal = failure != null
                && (String.valueOf(failure.getMessage()).endsWith("REFUSED_STREAM")
                || failure.getClass().getSimpleName().equals("ConnectionShutdownException"));
            if (refusal && decision.kind() != io.github.resilienthttp.Decision.Kind.RETRY) {
              problems.add(operation + " attempt " + attempt + ": a refusal decided " + decision);
            }
          }
        })
        .build();
    Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    AtomicInteger keylessUnknown = new AtomicInteger();
    AtomicInteger next = new AtomicInteger();
    ExecutorService workers = Executors.newFixedThreadPool(threads, named("soak-h2-worker"));
    try {
      for (int t = 0; t < threads; t++) {
        workers.execute(() -> {
          for (int i = next.getAndIncrement(); i < operations; i = next.getAndIncrement()) {
            String order = "soak-" + i;
            Mode mode = Mode.values()[i % Mode.values().length];
            boolean sendKey = i % 3 != 0;
            String key = IdempotencyKeyPolicy.newKey();
            String outcome;
            try (Response response = runOn(client, server.url("/payments"), mode, order, key,
                sendKey)) {
              String body = response.body().string();
              outcome = mode + " " + response.code();
              if (response.code() == 201 && !body.contains("pay_" + order)) {
                problems.add(order + ": 201 for another order: " + body);
              }
            } catch (Throwable e) {
              outcome = mode + " " + e.getClass().getSimpleName();
              if (!(e instanceof OperationFailure failure) || !key.equals(failure.idempotencyKey())) {
                problems.add(order + " (" + mode + "): " + e);
              } else if (e instanceof io.github.resilienthttp.OutcomeUnknownException unknown) {
                if (sendKey && !unknown.reason().equals("attempts-exhausted")) {
                  problems.add(order + ": a keyed POST ended outcome unknown early: " + e);
                }
                keylessUnknown.addAndGet(sendKey ? 0 : 1);
              }
            }
            outcomes.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
          }
        });
      }
      workers.shutdown();
      boolean finished = workers.awaitTermination(50, TimeUnit.SECONDS);
      System.out.printf("SoakTest HTTP/2: %d operations, %d streams, %d served, %d refused, %d resets"
              + " after processing, %d keyless unknown; decisions %s; outcomes %s%n", operations,
          streams.get(), served.get(), refusedStreams.get(), resetsAfterProcessing.get(),
          keylessUnknown.get(), new TreeMap<>(counts(reasons)), new TreeMap<>(counts(outcomes)));
      withSeed(seed, () -> {
        assertThat(finished).as("all operations ended").isTrue();
        assertThat(problems).as("untyped failures, foreign keys, refusals not retried, keyed POSTs"
            + " unknown before their last attempt").isEmpty();
        assertThat(effectsByOrder.entrySet().stream().filter(e -> e.getValue().get() > 1)
            .map(Map.Entry::getKey).toList()).as("orders charged twice").isEmpty();
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
            assertThat(okHttp.connectionPool().connectionCount()).as("connections in use")
                .isEqualTo(okHttp.connectionPool().idleConnectionCount()));
      });
    } finally {
      workers.shutdownNow();
      okHttp.connectionPool().evictAll();
      okHttpExecutor.shutdown();
      server.close();
    }
  }

  /** The server's fault for one HTTP/2 stream of the soak. */
  private enum H2Fault { NONE, REFUSED, UNAVAILABLE, RESET_AFTER_PROCESSING }

  /** One HTTP/2 stream's fault and the socket effects that carry it out. */
  private record H2Plan(H2Fault fault, mockwebserver3.MockResponse effects) {}

  private static Map<String, Integer> counts(Map<String, AtomicInteger> m) {
    return m.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()));
  }

  private static Response runOn(ResilientHttpClient client, okhttp3.HttpUrl url, Mode mode,
      String order, String key, boolean sendKey) throws Exception {
    Request request = new Request.Builder().url(url)
        .post(RequestBody.create("{\"order\":\"" + order + "\",\"amount\":1000}", JSON))
        .build();
    return run(client, request, mode, key, sendKey);
  }

  /**
   * A client derived per call site ({@code newBuilder()}) or per tenant, once it has waited between
   * async attempts, must not keep a thread for ever: OkHttp's own pools let idle threads go.
   */
  @Test
  void clientsThatAreNoLongerUsedLeaveNoSchedulerThreadBehind() throws Exception {
    try (IdempotentTestServer server = IdempotentTestServer.builder().build().start()) {
      OkHttpClient okHttp = new OkHttpClient();
      ResilientHttpClient base = ResilientHttpClient.wrap(okHttp).build();
      long before = schedulerThreads();
      for (int i = 0; i < 10; i++) {
        server.script(Fault.status(503));
        ResilientHttpClient derived = base.newBuilder()
            .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(1))).build())
            .build();
        derived.operation(new Request.Builder().url(server.url("/payments/" + i)).build())
            .executeAsync().get(10, TimeUnit.SECONDS).close();
      }
      okHttp.connectionPool().evictAll();
      okHttp.dispatcher().executorService().shutdown();
      await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
          assertThat(schedulerThreads()).as("resilient-http-scheduler threads")
              .isLessThanOrEqualTo(before + 1));
    }
  }

  private static long schedulerThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().equals("resilient-http-scheduler")).count();
  }

  private static Response run(ResilientHttpClient client, IdempotentTestServer server, Mode mode,
      String order, String key, boolean sendKey) throws Exception {
    return runOn(client, server.url("/payments"), mode, order, key, sendKey);
  }

  private static Response run(ResilientHttpClient client, Request request, Mode mode, String key,
      boolean sendKey) throws Exception {
    switch (mode) {
      case EXECUTE:
        return operation(client, request, key, sendKey).execute();
      case EXECUTE_ASYNC:
        try {
          return operation(client, request, key, sendKey).executeAsync().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          throw e.getCause() instanceof Exception cause ? cause : e;
        }
      default:
        Request tagged = request.newBuilder().tag(OperationOptions.class,
            OperationOptions.builder().idempotencyKey(key).sendIdempotencyKey(sendKey).build()).build();
        Call call = client.okHttpClient().newCall(tagged);
        if (mode == Mode.PLAIN_EXECUTE) {
          return call.execute();
        }
        CompletableFuture<Response> done = new CompletableFuture<>();
        call.enqueue(new Callback() {
          @Override
          public void onFailure(Call c, IOException e) {
            done.completeExceptionally(e);
          }

          @Override
          public void onResponse(Call c, Response response) {
            done.complete(response);
          }
        });
        try {
          return done.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
  }

  private static Operation operation(ResilientHttpClient client, Request request, String key,
      boolean sendKey) {
    return client.operation(request).idempotencyKey(key).sendIdempotencyKey(sendKey);
  }

  private static String orderOf(String body) {
    int start = body.indexOf("soak-");
    return body.substring(start, body.indexOf('"', start));
  }

  private static List<String> newThreads(Set<Thread> before) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && !before.contains(t))
        .map(Thread::getName)
        .filter(name -> !name.startsWith("OkHttp TaskRunner") && !name.equals("Okio Watchdog")
            && !name.equals("OkHttp ConnectionPool connection closer")
            && !name.equals("resilient-http-scheduler"))
        .sorted()
        .toList();
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  private static void withSeed(long seed, ThrowingRunnable assertions) throws Exception {
    try {
      assertions.run();
    } catch (AssertionError e) {
      throw new AssertionError("SoakTest failed with seed " + seed + " (replay: -Dsoak.seed=" + seed
          + "): " + e.getMessage(), e);
    }
  }

  @FunctionalInterface
  private interface ThrowingRunnable {
    void run() throws Exception;
  }
}
