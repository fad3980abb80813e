package io.github.resilienthttp.bench;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.failsafe.Timeout;
import dev.failsafe.okhttp.FailsafeCall;
import io.github.resilience4j.core.functions.CheckedSupplier;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.github.resilienthttp.CircuitBreakerOpenException;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.testkit.FaultMix;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.github.resilienthttp.testkit.RecoveryTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;
import mockwebserver3.MockWebServer;
import okhttp3.ConnectionPool;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The same faulty workload through the SDK and through its two usual alternatives, each configured as
 * its users would: "create payment" POSTs against an embedded {@link IdempotentTestServer}
 * (MockWebServer 3) on the loopback interface, with seeded server faults. Not JMH: it counts what
 * the server and the callers saw.
 *
 * <p>Callers (one fresh server and one fresh {@link OkHttpClient} with default settings per row):
 *
 * <ul>
 *   <li><b>SDK defaults</b>: {@code ResilientHttpClient.wrap(okHttp).build()}: 3 attempts,
 *       {@code exponentialFullJitter(100 ms, 5 s)}, 30 s deadline, token-bucket retry budget,
 *       per-target breaker with the SDK's default config, a new idempotency key per operation.
 *       A deadline is set per operation with {@code Operation.deadline}.
 *   <li><b>Failsafe</b> 3.3.2 ({@code failsafe-okhttp}): {@code RetryPolicy} handling
 *       {@code IOException} and results with code >= 500, 3 attempts, {@code withBackoff(50 ms,
 *       2.5 s)} plus {@code withJitter(1.0)} (the same full-jitter distribution); a deadline is a
 *       {@code Timeout} composed outside the retry policy, so it bounds the whole execution.
 *   <li><b>resilience4j</b> 2.4.0 ({@code resilience4j-retry}): 3 attempts,
 *       {@code retryExceptions(IOException)}, {@code retryOnResult(code >= 500)}, discarded responses
 *       closed before each retry, {@code ofExponentialRandomBackoff(50 ms, 2.0, 1.0, 5 s)}. The Retry
 *       module has no timeout of its own: a deadline is either OkHttp's {@code callTimeout} (per
 *       attempt) or a {@code TimeLimiter} around the retried call run on an executor.
 *   <li>The peers send no idempotency key unless a row says "+ key": then the caller adds one
 *       random key per operation, before the retries, so every attempt carries it.
 * </ul>
 *
 * <p>Counted per operation: attempts (an application interceptor on the wrapped client, so one per
 * call the library makes), wire requests (a network interceptor: attempts plus OkHttp's own silent
 * re-sends) and, at the server, requests and business effects. A duplicate effect is a second
 * effect for the same order. Loads are open (a fixed number of operations per 10 ms tick, whatever
 * the replies), bounded in count and time. Faults are drawn by the server from a seeded
 * {@code Random}; the peers' jitter cannot be seeded, so runs agree only up to scheduling and jitter.
 *
 * <pre>
 * mvn -B -ntp -Pbench -pl client-tests -am package -DskipTests
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.FaultComparison
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.FaultComparison breaker-trips 10
 * </pre>
 */
public final class FaultComparison {
  static final long SEED = 20_261_129L;
  static final long TICK_MS = 10;
  static final long WINDOW_MS = 250;
  private static final MediaType JSON = MediaType.get("application/json");
  /** Held so that the level set on it is not garbage-collected with the logger. */
  private static final Logger MOCK_WEB_SERVER_LOG = Logger.getLogger(MockWebServer.class.getName());

  private FaultComparison() {}

  enum Phase { HEALTHY, FAULT, RECOVERED }

  /** How one operation ended, as its caller saw it, plus the interceptors' counts. */
  record Op(int seq, Phase phase, long startNanos, long endNanos, boolean success, int attempts,
      int wireRequests, String failure) {
    long elapsedNanos() {
      return endNanos - startNanos;
    }
  }

  /** One operation through one library; returns whether the final answer was a 2xx. */
  interface Caller {
    boolean call(Request request) throws Exception;
  }

  /** Builds a row's caller around its fresh OkHttp client. */
  interface CallerFactory {
    Caller create(OkHttpClient okHttp, Duration deadline, ExecutorService pool);
  }

  record Row(String name, CallerFactory factory) {}

  /**
   * A workload: one operation every {@code everyTicks} ticks of 10 ms; healthy for
   * {@code healthyMs}, then the fault mix for {@code faultMs}, then healthy again for
   * {@code recoveredMs}. A {@code deadline}, when set, is given to every operation.
   */
  record Scenario(String title, int everyTicks, long healthyMs, long faultMs, long recoveredMs,
      FaultMix mix, Duration deadline, long seed) {
    Scenario(String title, int everyTicks, long healthyMs, long faultMs, long recoveredMs,
        FaultMix mix, Duration deadline) {
      this(title, everyTicks, healthyMs, faultMs, recoveredMs, mix, deadline, SEED);
    }

    Scenario withSeed(long newSeed) {
      return new Scenario(title, everyTicks, healthyMs, faultMs, recoveredMs, mix, deadline, newSeed);
    }
  }

  /** What one row of a scenario produced. */
  record RowResult(Row row, List<Op> ops, int serverRequests, int serverRequestsInFault,
      int effects, int duplicates, int replays, int inFlightAfter, long faultStartNanos,
      long recoveryNanos, long endNanos) {}

  /** Per-operation counters, carried as a request tag through every attempt's request. */
  static final class Counts {
    final AtomicInteger attempts = new AtomicInteger();
    final AtomicInteger wire = new AtomicInteger();
  }

  /** Counts attempts (application level) and wire requests (network level), and attempts in flight. */
  static final class Counting {
    final AtomicInteger inFlight = new AtomicInteger();

    final Interceptor attempts = chain -> {
      Counts c = chain.request().tag(Counts.class);
      if (c != null) {
        c.attempts.incrementAndGet();
      }
      inFlight.incrementAndGet();
      try {
        return chain.proceed(chain.request());
      } finally {
        inFlight.decrementAndGet();
      }
    };

    final Interceptor wire = chain -> {
      Counts c = chain.request().tag(Counts.class);
      if (c != null) {
        c.wire.incrementAndGet();
      }
      return chain.proceed(chain.request());
    };
  }

  public static void main(String[] args) throws Exception {
    MOCK_WEB_SERVER_LOG.setLevel(Level.WARNING);
    if (args.length > 0 && args[0].equals("breaker-trips")) {
      breakerTrips(args.length > 1 ? Integer.parseInt(args[1]) : 10);
      return;
    }
    long started = System.nanoTime();
    System.out.printf(Locale.ROOT, "Fault comparison, seed %d, loopback, POST /payments"
        + " (one order per operation), ops arrive every %d ms whatever the replies%n%n", SEED, TICK_MS);

    Row sdk = new Row("SDK defaults", FaultComparison::sdkDefaults);
    Row sdkNoBreaker = new Row("SDK defaults, noCircuitBreaker()", FaultComparison::sdkNoBreaker);
    Row failsafe = new Row("Failsafe", (ok, d, pool) -> failsafe(ok, d, false));
    Row failsafeKey = new Row("Failsafe + key", (ok, d, pool) -> failsafe(ok, d, true));
    Row r4j = new Row("resilience4j", (ok, d, pool) -> resilience4j(ok, false));
    Row r4jKey = new Row("resilience4j + key", (ok, d, pool) -> resilience4j(ok, true));
    Row r4jCallTimeout = new Row("resilience4j, OkHttp callTimeout = deadline (per attempt)",
        (ok, d, pool) -> resilience4j(ok.newBuilder().callTimeout(d).build(), false));
    Row r4jTimeLimiter = new Row("resilience4j + TimeLimiter(deadline)",
        FaultComparison::resilience4jTimeLimiter);

    // (a) half of all requests answered 503 (no Retry-After) for 3 s at 100 ops/s.
    Scenario half503 = new Scenario("(a) 50 % of requests answered 503", 1, 0, 3_000, 0,
        FaultMix.builder().status503(0.5).build(), null);
    printRates(half503, runRows(half503, sdk, sdkNoBreaker, failsafe, r4j));

    // (b) 1 s healthy, 4 s total outage (every request 503), 6 s healthy, at 100 ops/s.
    Scenario outage = new Scenario("(b) total outage: 1 s healthy, 4 s every request 503, 6 s healthy",
        1, 1_000, 4_000, 6_000, FaultMix.builder().status503(1.0).build(), null);
    printOutage(outage, runRows(outage, sdk, failsafe, r4j));

    // (c) 20 % of responses lost after the server processed the POST, 3 s at 100 ops/s.
    Scenario lost = new Scenario("(c) 20 % of responses lost after processing (Fault.processThenDrop)",
        1, 0, 3_000, 0, FaultMix.builder().lostResponse(0.2).build(), null);
    printRates(lost, runRows(lost, sdk, failsafe, r4j, failsafeKey, r4jKey));

    // (d) the server never answers; every operation has a 300 ms deadline; 60 ops at 20 ops/s.
    Scenario deadline = new Scenario("(d) deadline 300 ms, the server never answers (Fault.noResponse)",
        5, 0, 3_000, 0, FaultMix.builder().noResponse(1.0).build(), Duration.ofMillis(300));
    printDeadline(deadline, runRows(deadline, sdk, sdkNoBreaker,
        new Row("Failsafe, Timeout(deadline) outside the RetryPolicy", (ok, d, pool) -> failsafe(ok, d, false)),
        r4jCallTimeout, r4jTimeLimiter));

    System.out.printf(Locale.ROOT, "%ntotal %.1f s%n", (System.nanoTime() - started) / 1e9);
  }

  /**
   * Scenario (c) for the SDK with its defaults, {@code runs} times, each with another server seed:
   * how often a 20 % rate of lost responses opens the default circuit breaker (which then rejects
   * every operation for 5 s, longer than the 3 s run).
   */
  private static void breakerTrips(int runs) throws Exception {
    long started = System.nanoTime();
    Scenario lost = new Scenario("(c) 20 % of responses lost after processing", 1, 0, 3_000, 0,
        FaultMix.builder().lostResponse(0.2).build(), null);
    Row sdk = new Row("SDK defaults", FaultComparison::sdkDefaults);
    System.out.printf(Locale.ROOT, "Scenario (c), SDK defaults, %d runs with server seeds %d..%d%n%n",
        runs, SEED, SEED + runs - 1);
    System.out.println("| seed | ops | ok % | attempts/op | CircuitBreakerOpenException | breaker opened |");
    System.out.println("|---:|---:|---:|---:|---:|---|");
    int opened = 0;
    for (int i = 0; i < runs; i++) {
      RowResult r = run(lost.withSeed(SEED + i), sdk);
      int rejected = (int) r.ops().stream()
          .filter(o -> "CircuitBreakerOpenException".equals(o.failure())).count();
      opened += rejected > 0 ? 1 : 0;
      System.out.printf(Locale.ROOT, "| %d | %d | %.1f | %.3f | %d | %s |%n", SEED + i, r.ops().size(),
          100.0 * count(r.ops(), Op::success) / r.ops().size(), mean(r.ops(), Op::attempts), rejected,
          rejected > 0 ? "yes" : "no");
    }
    System.out.printf(Locale.ROOT, "%nthe default breaker opened in %d of %d runs; total %.1f s%n", opened,
        runs, (System.nanoTime() - started) / 1e9);
  }

  // ------------------------------------------------------------------------------------ running

  private static List<RowResult> runRows(Scenario scenario, Row... rows) throws Exception {
    List<RowResult> results = new ArrayList<>();
    for (Row row : rows) {
      results.add(run(scenario, row));
    }
    return results;
  }

  private static RowResult run(Scenario s, Row row) throws Exception {
    long ticks = (s.healthyMs() + s.faultMs() + s.recoveredMs()) / TICK_MS;
    long faultTick = s.healthyMs() / TICK_MS;
    long recoveryTick = (s.healthyMs() + s.faultMs()) / TICK_MS;
    Counting counting = new Counting();
    OkHttpClient okHttp = new OkHttpClient.Builder()
        .connectionPool(new ConnectionPool(64, 1, TimeUnit.MINUTES))
        .addInterceptor(counting.attempts)
        .addNetworkInterceptor(counting.wire)
        .build();
    ExecutorService workers = Executors.newCachedThreadPool(daemon("worker"));
    ExecutorService pool = Executors.newCachedThreadPool(daemon("pool"));
    List<Future<Op>> futures = new ArrayList<>();
    try (IdempotentTestServer server = IdempotentTestServer.builder().build().start()) {
      Caller caller = row.factory().create(okHttp, s.deadline(), pool);
      long start = System.nanoTime();
      long faultStart = start;
      long recovery = start;
      int atFault = 0;
      int atRecovery = 0;
      Phase phase = s.healthyMs() > 0 ? Phase.HEALTHY : Phase.FAULT;
      int seq = 0;
      for (long tick = 0; tick < ticks; tick++) {
        parkUntil(start + TimeUnit.MILLISECONDS.toNanos(tick * TICK_MS));
        if (tick == faultTick) {
          atFault = server.stats().requests();
          server.randomFaults(s.seed(), s.mix());
          faultStart = System.nanoTime();
          phase = Phase.FAULT;
        }
        if (tick == recoveryTick && s.recoveredMs() > 0) {
          server.stopRandomFaults();
          atRecovery = server.stats().requests();
          recovery = System.nanoTime();
          phase = Phase.RECOVERED;
        }
        if (tick % s.everyTicks() != 0) {
          continue;
        }
        int n = seq++;
        Phase p = phase;
        Request request = charge(server, n);
        futures.add(workers.submit(() -> runOne(caller, n, p, request)));
      }
      parkUntil(start + TimeUnit.MILLISECONDS.toNanos(ticks * TICK_MS));
      long end = System.nanoTime();
      if (s.recoveredMs() == 0) {
        atRecovery = Integer.MIN_VALUE; // no recovery phase: counted at the end, below
      }
      List<Op> ops = new ArrayList<>();
      for (Future<Op> f : futures) {
        ops.add(f.get(60, TimeUnit.SECONDS));
      }
      // Work that goes on after every caller has returned (attempts still waiting for an answer).
      parkUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500));
      int inFlightAfter = counting.inFlight.get();
      int total = server.stats().requests();
      int inFault = (atRecovery == Integer.MIN_VALUE ? total : atRecovery) - atFault;
      // The body names the order: two effects with the same body are one order charged twice.
      return new RowResult(row, ops, total, inFault, server.stats().effects(), server.duplicateEffects(),
          server.stats().replays(), inFlightAfter, faultStart, recovery, end);
    } finally {
      okHttp.dispatcher().cancelAll();
      workers.shutdownNow();
      pool.shutdownNow();
      okHttp.dispatcher().executorService().shutdownNow();
      okHttp.connectionPool().evictAll();
      workers.awaitTermination(10, TimeUnit.SECONDS);
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static Op runOne(Caller caller, int seq, Phase phase, Request request) {
    Counts counts = new Counts();
    Request tagged = request.newBuilder().tag(Counts.class, counts).build();
    long start = System.nanoTime();
    boolean success = false;
    String failure = null;
    try {
      success = caller.call(tagged);
      if (!success) {
        failure = "non-2xx response";
      }
    } catch (Exception e) {
      failure = e.getClass().getSimpleName();
    }
    long end = System.nanoTime();
    return new Op(seq, phase, start, end, success, counts.attempts.get(), counts.wire.get(), failure);
  }

  // ------------------------------------------------------------------------------------ callers

  private static Caller sdkDefaults(OkHttpClient okHttp, Duration deadline, ExecutorService pool) {
    return sdk(ResilientHttpClient.wrap(okHttp).build(), deadline);
  }

  private static Caller sdkNoBreaker(OkHttpClient okHttp, Duration deadline, ExecutorService pool) {
    return sdk(ResilientHttpClient.wrap(okHttp).noCircuitBreaker().build(), deadline);
  }

  private static Caller sdk(ResilientHttpClient client, Duration deadline) {
    return request -> {
      Operation op = client.operation(request);
      if (deadline != null) {
        op.deadline(deadline);
      }
      try (Response r = op.execute()) {
        r.body().string();
        return r.isSuccessful();
      }
    };
  }

  private static Caller failsafe(OkHttpClient okHttp, Duration deadline, boolean key) {
    FailsafeExecutor<Response> executor = deadline == null
        ? Failsafe.with(SuccessPath.failsafeRetryPolicy())
        : Failsafe.with(Timeout.<Response>of(deadline)).compose(SuccessPath.failsafeRetryPolicy());
    return request -> {
      Request r0 = key ? withKey(request) : request;
      try (Response r = FailsafeCall.with(executor).compose(okHttp.newCall(r0)).execute()) {
        r.body().string();
        return r.isSuccessful();
      }
    };
  }

  private static Caller resilience4j(OkHttpClient okHttp, boolean key) {
    Retry retry = SuccessPath.resilience4jRetry();
    return request -> {
      Request r0 = key ? withKey(request) : request;
      CheckedSupplier<Response> call =
          Retry.decorateCheckedSupplier(retry, () -> okHttp.newCall(r0).execute());
      try (Response r = getChecked(call)) {
        r.body().string();
        return r.isSuccessful();
      }
    };
  }

  /**
   * resilience4j's way to bound a blocking call in time: run it on an executor and give up waiting
   * for it after the deadline. The caller returns then; the call itself goes on on the executor.
   */
  private static Caller resilience4jTimeLimiter(OkHttpClient okHttp, Duration deadline,
      ExecutorService pool) {
    Retry retry = SuccessPath.resilience4jRetry();
    TimeLimiter limiter = TimeLimiter.of(TimeLimiterConfig.custom()
        .timeoutDuration(deadline).cancelRunningFuture(true).build());
    return request -> {
      CheckedSupplier<Response> call =
          Retry.decorateCheckedSupplier(retry, () -> okHttp.newCall(request).execute());
      try (Response r = limiter.executeFutureSupplier(() -> CompletableFuture.supplyAsync(() -> {
        try {
          return call.get();
        } catch (Throwable t) {
          throw new CompletionException(t);
        }
      }, pool))) {
        r.body().string();
        return r.isSuccessful();
      }
    };
  }

  private static Response getChecked(CheckedSupplier<Response> call) throws Exception {
    try {
      return call.get();
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IOException(t);
    }
  }

  private static Request withKey(Request request) {
    return request.newBuilder().header("Idempotency-Key", UUID.randomUUID().toString()).build();
  }

  // ------------------------------------------------------------------------------------ reports

  /** Scenarios (a) and (c): success, amplification, duplicates. */
  private static void printRates(Scenario s, List<RowResult> results) {
    System.out.println("### " + s.title());
    System.out.println();
    System.out.printf(Locale.ROOT, "%d operations per row; attempts = calls the library made (application"
        + " interceptor); wire = requests OkHttp wrote (network interceptor)%n%n", results.get(0).ops().size());
    System.out.println("| caller | ops | ok % | attempts/op | wire req/op | server req/op | effects"
        + " | duplicate effects | replays | p50 ms | p99 ms | failures |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for (RowResult r : results) {
      List<Op> ops = r.ops();
      long[] elapsed = ops.stream().mapToLong(Op::elapsedNanos).sorted().toArray();
      System.out.printf(Locale.ROOT, "| %s | %d | %.1f | %.3f | %.3f | %.3f | %d | %d | %d | %.1f | %.1f | %s |%n",
          r.row().name(), ops.size(), 100.0 * count(ops, Op::success) / ops.size(),
          mean(ops, Op::attempts), mean(ops, Op::wireRequests), (double) r.serverRequests() / ops.size(),
          r.effects(), r.duplicates(), r.replays(), percentile(elapsed, 0.50) / 1e6,
          percentile(elapsed, 0.99) / 1e6, failures(ops));
    }
    System.out.println();
  }

  /** Scenario (b): amplification during the outage and time to recover. */
  private static void printOutage(Scenario s, List<RowResult> results) {
    System.out.println("### " + s.title());
    System.out.println();
    System.out.printf(Locale.ROOT, "%d operations per row. T99 = time from the end of the outage until every"
        + " rolling %d ms window of completed operations (sliding %d ms) is >= 99 %% successful.%n%n",
        results.get(0).ops().size(), WINDOW_MS, TICK_MS);
    System.out.println("| caller | ok % healthy | ok % outage | ok % recovered | attempts/op outage"
        + " | wire req/op outage | server req/op outage | T99 after recovery | failures (outage) |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for (RowResult r : results) {
      List<Op> fault = r.ops().stream().filter(o -> o.phase() == Phase.FAULT).toList();
      System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %.3f | %.3f | %.3f | %s | %s |%n",
          r.row().name(), okPercent(r.ops(), Phase.HEALTHY), okPercent(r.ops(), Phase.FAULT),
          okPercent(r.ops(), Phase.RECOVERED), mean(fault, Op::attempts), mean(fault, Op::wireRequests),
          (double) r.serverRequestsInFault() / fault.size(),
          t99(r.ops(), r.recoveryNanos(), r.endNanos(), s.recoveredMs()), failures(fault));
    }
    System.out.println();
  }

  /** Scenario (d): how far past its deadline each caller returned. */
  private static void printDeadline(Scenario s, List<RowResult> results) {
    long deadlineNanos = s.deadline().toNanos();
    System.out.println("### " + s.title());
    System.out.println();
    System.out.printf(Locale.ROOT, "%d operations per row, one per %d ms. Overshoot = elapsed - deadline, over"
        + " the operations that returned at or after the deadline; \"early\" = returned before it."
        + " In flight = attempts still waiting for an answer 500 ms after the last caller returned.%n%n",
        results.get(0).ops().size(), s.everyTicks() * TICK_MS);
    System.out.println("| caller | ops | early | overshoot p50 ms | overshoot p99 ms | overshoot max ms"
        + " | attempts/op | server req/op | in flight after | failures |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for (RowResult r : results) {
      List<Op> ops = r.ops();
      long[] over = ops.stream().mapToLong(o -> o.elapsedNanos() - deadlineNanos)
          .filter(v -> v >= 0).sorted().toArray();
      int early = ops.size() - over.length;
      System.out.printf(Locale.ROOT, "| %s | %d | %d | %s | %s | %s | %.3f | %.3f | %d | %s |%n",
          r.row().name(), ops.size(), early, ms(percentile(over, 0.50)), ms(percentile(over, 0.99)),
          ms(over.length == 0 ? -1 : over[over.length - 1]), mean(ops, Op::attempts),
          (double) r.serverRequests() / ops.size(), r.inFlightAfter(), failures(ops));
    }
    System.out.println();
  }

  private static String ms(long nanos) {
    return nanos < 0 ? "-" : String.format(Locale.ROOT, "%.1f", nanos / 1e6);
  }

  private static String okPercent(List<Op> ops, Phase phase) {
    List<Op> in = ops.stream().filter(o -> o.phase() == phase).toList();
    return String.format(Locale.ROOT, "%.1f", 100.0 * count(in, Op::success) / in.size());
  }

  private static String failures(List<Op> ops) {
    return failures(ops, Op::failure);
  }

  /** "kind count, ..." over the non-null failures, by kind in order; "-" when there are none. */
  static <T> String failures(List<T> ops, java.util.function.Function<T, String> failure) {
    Map<String, Integer> byKind = new TreeMap<>();
    for (T o : ops) {
      String f = failure.apply(o);
      if (f != null) {
        byKind.merge(f, 1, Integer::sum);
      }
    }
    if (byKind.isEmpty()) {
      return "-";
    }
    StringBuilder sb = new StringBuilder();
    byKind.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ", ").append(k).append(' ').append(v));
    return sb.toString();
  }

  /**
   * The start of the first window after recovery from which every window up to the end of the
   * recovered phase is at least 99 % successful; windows slide by one tick.
   */
  private static String t99(List<Op> ops, long recoveryNanos, long endNanos, long recoveredMs) {
    return RecoveryTime.of(ops, Op::endNanos, Op::success, recoveryNanos, endNanos,
            Duration.ofMillis(WINDOW_MS), Duration.ofMillis(TICK_MS), 99)
        .map(d -> d.toMillis() + " ms").orElse("> " + recoveredMs + " ms");
  }

  private static int count(List<Op> ops, java.util.function.Predicate<Op> p) {
    int n = 0;
    for (Op o : ops) {
      n += p.test(o) ? 1 : 0;
    }
    return n;
  }

  private static double mean(List<Op> ops, java.util.function.ToIntFunction<Op> f) {
    return ops.isEmpty() ? 0 : ops.stream().mapToInt(f).average().orElse(0);
  }

  /** Nearest-rank percentile of sorted values; -1 when empty. */
  static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return -1;
    }
    int rank = (int) Math.ceil(p * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
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

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
