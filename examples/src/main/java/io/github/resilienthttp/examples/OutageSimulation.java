package io.github.resilienthttp.examples;

import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.CircuitBreakerOpenException;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryBudgetExhaustedException;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.testkit.FaultMix;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.github.resilienthttp.testkit.RecoveryTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.random.RandomGenerator;
import mockwebserver3.MockWebServer;
import okhttp3.ConnectionPool;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * What a retrying client does to a dependency that goes down, and how fast it comes back: a steady
 * offered load of "create payment" POSTs against an embedded {@link IdempotentTestServer} on the
 * loopback interface, in three phases: healthy, total outage (every request answered 503), recovered.
 * The same load runs through four callers, one after the other, each with a fresh server and client:
 *
 * <ol>
 *   <li>a plain retry loop on OkHttp: {@value #MAX_ATTEMPTS} attempts, the same backoff, no budget,
 *       no breaker;
 *   <li>the SDK with its defaults: the default retry budget and a per-target circuit breaker with
 *       {@code ResilientHttpClient.defaultCircuitBreakerConfig()} (80 % of 50 attempts, 5 s open);
 *   <li>the SDK with the default budget and resilience4j's own default breaker
 *       ({@code CircuitBreakerRegistry.ofDefaults()}: 100 calls, 60 s open), which shows why the SDK
 *       does not use it by default;
 *   <li>the SDK with the default budget and no breaker, which isolates the budget;
 *   <li>the SDK with the default budget and a breaker configured for a short open state (2 s).
 * </ol>
 *
 * <p>For each it prints the requests per operation during the outage (amplification), the success
 * rate per phase, the time from recovery until every rolling {@value #WINDOW_MS} ms window of
 * completed operations is at least 99 % successful, and the breaker's rejections.
 *
 * <p>Reproducible as far as threads allow: the fault schedule is fixed, the jitter is seeded, and the
 * load is a fixed number of operations per tick; what varies between runs is thread scheduling.
 * Loopback only; about a minute.
 *
 * <pre>
 * mvn -B -ntp -q -pl examples -am package -DskipTests
 * java -cp examples/target/resilient-http-demo.jar io.github.resilienthttp.examples.OutageSimulation
 * </pre>
 */
public final class OutageSimulation {
  static final long SEED = 20_260_101L;
  static final int MAX_ATTEMPTS = 5;
  static final long TICK_MS = 10;
  static final int OPS_PER_TICK = 2;
  static final long HEALTHY_MS = 2_000;
  static final long OUTAGE_MS = 5_000;
  static final long RECOVERED_MS = 4_000;
  static final long WINDOW_MS = 250;
  static final int WORKERS = 128;
  static final Backoff BACKOFF =
      Backoff.exponentialFullJitter(Duration.ofMillis(50), Duration.ofSeconds(1));

  private static final MediaType JSON = MediaType.get("application/json");
  /** Held so that the level set on it is not garbage-collected with the logger. */
  private static final Logger MOCK_WEB_SERVER_LOG = Logger.getLogger(MockWebServer.class.getName());

  private OutageSimulation() {}

  enum Phase { HEALTHY, OUTAGE, RECOVERED }

  /** How one operation ended, as its caller saw it. */
  record Op(int seq, Phase phase, long endNanos, boolean success, int requests) {}

  /** Runs one operation for a scenario; thread-safe. */
  interface Caller {
    Op call(int seq, Phase phase, Request request) throws InterruptedException;
  }

  /** Builds a scenario's caller around a fresh OkHttp client. */
  interface CallerFactory {
    Caller create(OkHttpClient okHttp, Counters counters);
  }

  record Scenario(String name, CallerFactory factory) {}

  /** What the SDK's listener saw, per phase. */
  static final class Counters implements OperationListener {
    volatile Phase phase = Phase.HEALTHY;
    final Map<Phase, AtomicInteger> breakerRejections = perPhase();
    final Map<Phase, AtomicInteger> budgetRefusals = perPhase();

    private static Map<Phase, AtomicInteger> perPhase() {
      Map<Phase, AtomicInteger> m = new EnumMap<>(Phase.class);
      for (Phase p : Phase.values()) {
        m.put(p, new AtomicInteger());
      }
      return m;
    }

    @Override
    public void circuitBreakerRejected(OperationInfo operation, String breakerName, int attempt) {
      breakerRejections.get(phase).incrementAndGet();
    }

    @Override
    public void retryBudgetRefused(OperationInfo operation, int attempt) {
      budgetRefusals.get(phase).incrementAndGet();
    }
  }

  public static void main(String[] args) throws Exception {
    // Thousands of operations give up during the outage, each logged at INFO by the SDK; and
    // MockWebServer logs every request. Neither is the point here.
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
    }
    MOCK_WEB_SERVER_LOG.setLevel(Level.WARNING);

    List<Scenario> scenarios = List.of(
        new Scenario("plain retry loop, no budget", OutageSimulation::plainLoop),
        new Scenario("SDK defaults (budget + SDK breaker, 5 s open)",
            (ok, c) -> sdk(ResilientHttpClient.wrap(ok), c)),
        new Scenario("SDK budget + r4j ofDefaults breaker (60 s)",
            (ok, c) -> sdk(ResilientHttpClient.wrap(ok)
                .circuitBreakerRegistry(CircuitBreakerRegistry.ofDefaults()), c)),
        new Scenario("SDK default budget, no breaker",
            (ok, c) -> sdk(ResilientHttpClient.wrap(ok).noCircuitBreaker(), c)),
        new Scenario("SDK default budget + breaker (2 s open)",
            (ok, c) -> sdk(ResilientHttpClient.wrap(ok).circuitBreakerRegistry(shortBreakers()), c)));

    System.out.printf(Locale.ROOT, "Outage simulation, seed %d: %d ops per %d ms tick (%d ops/s offered),"
            + " %d worker threads, POST /payments with an idempotency key, loopback%n",
        SEED, OPS_PER_TICK, TICK_MS, OPS_PER_TICK * 1000 / TICK_MS, WORKERS);
    System.out.printf(Locale.ROOT, "phases: healthy %d ms, total outage %d ms (every request 503),"
            + " recovered %d ms; maxAttempts %d, backoff %s%n",
        HEALTHY_MS, OUTAGE_MS, RECOVERED_MS, MAX_ATTEMPTS, BACKOFF);
    System.out.printf(Locale.ROOT, "T99: time from recovery until every rolling %d ms window (by"
        + " completion, sliding %d ms) is >= 99%% successful%n%n", WINDOW_MS, TICK_MS);
    System.out.printf(Locale.ROOT, "%-44s %5s %9s %9s %9s %9s %9s %12s %11s %11s%n",
        "scenario", "ops", "ok% heal", "ok% out", "ok% rec", "req/op", "srv req/", "T99 after",
        "breaker rej", "budget ref");
    System.out.printf(Locale.ROOT, "%-44s %5s %9s %9s %9s %9s %9s %12s %11s %11s%n",
        "", "", "", "", "", "outage", "op outage", "recovery", "out/rec", "outage");
    long started = System.nanoTime();
    for (Scenario s : scenarios) {
      run(s);
    }
    // RetryBudget's guarantee over the outage, whose first attempts all fail: the bucket is full
    // (30 tokens) when it starts, each first attempt deposits 0.1, the floor adds 3 per second.
    long outageOps = OUTAGE_MS / TICK_MS * OPS_PER_TICK;
    double bound = (outageOps + 0.1 * outageOps + 3 * OUTAGE_MS / 1000.0 + 30) / outageOps;
    System.out.printf(Locale.ROOT, "%ndefault budget bound on req/op during the outage: (N + 0.1 N"
        + " + 3/s x %.0f s + 30) / N = %.3f for N = %d operations%n", OUTAGE_MS / 1000.0, bound,
        outageOps);
    System.out.printf(Locale.ROOT, "total %.1f s%n", (System.nanoTime() - started) / 1e9);
  }

  private static void run(Scenario scenario) throws Exception {
    long ticks = (HEALTHY_MS + OUTAGE_MS + RECOVERED_MS) / TICK_MS;
    long outageTick = HEALTHY_MS / TICK_MS;
    long recoveryTick = (HEALTHY_MS + OUTAGE_MS) / TICK_MS;
    List<Future<Op>> futures = new ArrayList<>();
    Counters counters = new Counters();
    OkHttpClient okHttp = new OkHttpClient.Builder()
        .connectionPool(new ConnectionPool(WORKERS, 1, TimeUnit.MINUTES)).build();
    ExecutorService workers = Executors.newFixedThreadPool(WORKERS);
    long recoveryNanos = 0;
    long endNanos;
    int serverAtOutage = 0;
    int serverAtRecovery = 0;
    try (IdempotentTestServer server = IdempotentTestServer.builder().build().start()) {
      Caller caller = scenario.factory().create(okHttp, counters);
      long start = System.nanoTime();
      int seq = 0;
      for (long tick = 0; tick < ticks; tick++) {
        parkUntil(start + TimeUnit.MILLISECONDS.toNanos(tick * TICK_MS));
        if (tick == outageTick) {
          serverAtOutage = server.stats().requests();
          server.randomFaults(SEED, FaultMix.builder().status503(1.0).build());
          counters.phase = Phase.OUTAGE;
        } else if (tick == recoveryTick) {
          server.stopRandomFaults();
          serverAtRecovery = server.stats().requests();
          recoveryNanos = System.nanoTime();
          counters.phase = Phase.RECOVERED;
        }
        Phase phase = counters.phase;
        for (int k = 0; k < OPS_PER_TICK; k++) {
          int n = seq++;
          Request request = charge(server, n);
          futures.add(workers.submit(() -> caller.call(n, phase, request)));
        }
      }
      parkUntil(start + TimeUnit.MILLISECONDS.toNanos(ticks * TICK_MS));
      endNanos = System.nanoTime();
      List<Op> ops = new ArrayList<>();
      for (Future<Op> f : futures) {
        ops.add(f.get(60, TimeUnit.SECONDS));
      }
      report(scenario, ops, counters, serverAtRecovery - serverAtOutage, recoveryNanos, endNanos);
    } finally {
      workers.shutdownNow();
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }
  }

  private static void report(Scenario scenario, List<Op> ops, Counters counters,
      int serverRequestsDuringOutage, long recoveryNanos, long endNanos) {
    Map<Phase, int[]> byPhase = new EnumMap<>(Phase.class); // {ops, successes, requests}
    for (Phase p : Phase.values()) {
      byPhase.put(p, new int[3]);
    }
    for (Op op : ops) {
      int[] c = byPhase.get(op.phase());
      c[0]++;
      c[1] += op.success() ? 1 : 0;
      c[2] += op.requests();
    }
    int[] outage = byPhase.get(Phase.OUTAGE);
    System.out.printf(Locale.ROOT, "%-44s %5d %9s %9s %9s %9.3f %9.3f %12s %5d/%-5d %11d%n",
        scenario.name(), ops.size(),
        percent(byPhase.get(Phase.HEALTHY)), percent(outage), percent(byPhase.get(Phase.RECOVERED)),
        (double) outage[2] / outage[0], (double) serverRequestsDuringOutage / outage[0],
        t99(ops, recoveryNanos, endNanos),
        counters.breakerRejections.get(Phase.OUTAGE).get(),
        counters.breakerRejections.get(Phase.RECOVERED).get(),
        counters.budgetRefusals.get(Phase.OUTAGE).get());
  }

  private static String percent(int[] c) {
    return String.format(Locale.ROOT, "%.1f", 100.0 * c[1] / c[0]);
  }

  /**
   * The start of the first window after recovery from which every window, up to the end of the
   * recovered phase, is at least 99 % successful; windows slide by one tick.
   */
  private static String t99(List<Op> ops, long recoveryNanos, long endNanos) {
    return RecoveryTime.of(ops, Op::endNanos, Op::success, recoveryNanos, endNanos,
            Duration.ofMillis(WINDOW_MS), Duration.ofMillis(TICK_MS), 99)
        .map(d -> d.toMillis() + " ms").orElse("> " + RECOVERED_MS + " ms");
  }

  // ------------------------------------------------------------------------------------ callers

  /** The SDK, with this simulation's attempts and backoff, a seeded jitter and the counters. */
  private static Caller sdk(ResilientHttpClient.Builder builder, Counters counters) {
    ResilientHttpClient client = builder
        .retryPolicy(RetryPolicy.builder().maxAttempts(MAX_ATTEMPTS).backoff(BACKOFF).build())
        .random(new SeededJitter(SEED))
        .addListener(counters)
        .build();
    return (seq, phase, request) -> {
      Operation op = client.operation(request);
      boolean success;
      try (Response r = op.execute()) {
        success = r.isSuccessful();
      } catch (IOException e) { // CircuitBreakerOpenException, RetryBudgetExhaustedException, ...
        success = false;
      }
      return new Op(seq, phase, System.nanoTime(), success, op.networkRequests());
    };
  }

  /**
   * What the SDK replaces: up to {@value #MAX_ATTEMPTS} attempts with the same backoff and the same
   * idempotency key, retrying 408, 429, 5xx and I/O errors; no budget, no breaker.
   */
  private static Caller plainLoop(OkHttpClient okHttp, Counters counters) {
    return (seq, phase, request) -> {
      Request keyed = request.newBuilder().header("Idempotency-Key", "order-" + seq).build();
      RandomGenerator jitter = new SplittableRandom(SEED + seq);
      int sent = 0;
      for (int attempt = 1; ; attempt++) {
        sent++;
        boolean retryable;
        try (Response r = okHttp.newCall(keyed).execute()) {
          if (r.isSuccessful()) {
            return new Op(seq, phase, System.nanoTime(), true, sent);
          }
          int code = r.code();
          retryable = code == 408 || code == 429 || code >= 500;
        } catch (IOException e) {
          retryable = true;
        }
        if (!retryable || attempt == MAX_ATTEMPTS) {
          return new Op(seq, phase, System.nanoTime(), false, sent);
        }
        Duration wait = BACKOFF.delay(attempt, jitter);
        TimeUnit.NANOSECONDS.sleep(wait.toNanos());
      }
    };
  }

  /** A breaker that notices an outage within about 50 attempts and probes again after 2 s. */
  private static CircuitBreakerRegistry shortBreakers() {
    return CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        .slidingWindowSize(50)
        .minimumNumberOfCalls(50)
        .failureRateThreshold(50)
        .waitDurationInOpenState(Duration.ofSeconds(2))
        .permittedNumberOfCallsInHalfOpenState(5)
        .build());
  }

  private static Request charge(IdempotentTestServer server, int seq) {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"order-" + seq + "\",\"amount\":1000}", JSON))
        .build();
  }

  private static void parkUntil(long deadlineNanos) {
    for (long left; (left = deadlineNanos - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left);
    }
  }

  /** A seeded jitter source shared by all operations of a client: the SDK requires thread safety. */
  private static final class SeededJitter implements RandomGenerator {
    private final SplittableRandom random;

    SeededJitter(long seed) {
      this.random = new SplittableRandom(seed);
    }

    @Override
    public synchronized long nextLong() {
      return random.nextLong();
    }

    @Override
    public String toString() {
      return "SeededJitter";
    }
  }
}
