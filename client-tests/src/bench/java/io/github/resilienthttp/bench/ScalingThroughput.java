package io.github.resilienthttp.bench;

import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowSynchronizationStrategy;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.ResilientHttpClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import okhttp3.ConnectionPool;

/**
 * Healthy-path throughput at several caller-thread counts, measured <em>paired</em>: in each round
 * every caller (raw OkHttp, the SDK, the like-for-like stacks) runs for the same time slice with
 * the same number of threads, in a shuffled order, and each caller's operations per second are
 * divided by raw OkHttp's in the same round. Load from other processes drifts over a minute on a
 * shared machine; within one round it affects every caller about equally, so the median of the
 * per-round ratios (with a seeded 95 % bootstrap interval) is usable where JMH's intervals at 64
 * threads are ± 40 %.
 *
 * <p>Every caller shares one {@code OkHttpClient} whose pool keeps as many idle connections as there
 * are threads, so that no caller pays for connection churn the others do not.
 *
 * <pre>
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.ScalingThroughput [rounds] [slice ms] [threads,...] [GET|POST] [sdk-only|sdk-parts|all] [warm-up ms]
 * </pre>
 *
 * <p>Each thread count starts with a new set-up (server, clients), after which the JIT compiles
 * much of the path again; at 16 caller threads and as many server threads on two cores its
 * compiler threads get a small share of the CPU, so a measurement started at once ran partly on
 * code still being compiled (the JIT compiled for about 9 s of a 24 s run, every caller ran fewer
 * operations per second, and more so the one with the most code to compile). Before the rounds,
 * every caller therefore runs in turn, 1 s at a time, first on one thread and then on the thread
 * count measured, each until a pass over all callers compiled for under 100 ms, or until
 * {@code warm-up ms} passed (default 60,000; 0 for none: {@link #warmUntilJitQuiet}). Each table
 * says how long the JIT compiled during its measured rounds.
 *
 * <p>{@code sdk-only} measures raw OkHttp and the SDK alone (the ratio, SDK / raw OkHttp):
 * with two callers a round is shorter, so more rounds fit in the same time and the interval of
 * that one ratio is narrower. {@code sdk-parts} adds the SDK without its circuit breaker, the SDK
 * with a registry of the user's (whose breakers record every attempt: no skipped successes, see
 * {@code FullHealthyWindow}) and the SDK with resilience4j's lock-free window, to show what the
 * breaker (resilience4j's, which every like-for-like stack runs too) costs at each thread count.
 */
public final class ScalingThroughput {
  private static final long SEED = 20_261_201L;
  /** A warm-up pass that compiled for less than this is taken as the JIT being quiet, in ms. */
  static final long QUIET_JIT_MILLIS = 100;

  private ScalingThroughput() {}

  public static void main(String[] args) throws Throwable {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 12;
    long sliceMillis = args.length > 1 ? Long.parseLong(args[1]) : 500;
    String[] threadCounts = (args.length > 2 ? args[2] : "1,4,16,64").split(",");
    String method = args.length > 3 ? args[3] : "GET";
    boolean sdkParts = args.length > 4 && args[4].equals("sdk-parts");
    boolean sdkOnly = sdkParts || args.length > 4 && args[4].equals("sdk-only");
    long warmupMillis = args.length > 5 ? Long.parseLong(args[5]) : 60_000;
    System.out.printf(Locale.ROOT, "Paired throughput (%s): %d rounds x %d ms per caller per thread count,"
        + " shuffled order per round (seed %d), after warming up until the JIT is quiet (at most"
        + " %d ms) and 2 warm-up rounds%n%n", method, rounds, sliceMillis, SEED,
        warmupMillis);
    for (String t : threadCounts) {
      measure(method, Integer.parseInt(t.trim()), rounds, sliceMillis, sdkOnly, sdkParts,
          warmupMillis);
    }
  }

  private static void measure(String method, int threads, int rounds, long sliceMillis,
      boolean sdkOnly, boolean sdkParts, long warmupMillis) throws Throwable {
    SuccessPath s = loopback(method, threads);
    try {
      boolean post = "POST".equals(method);
      Map<String, InterleavedLatency.Call> callers = new LinkedHashMap<>();
      callers.put("OkHttp `newCall().execute()`" + (post ? " + key" : ""),
          post ? s::rawOkHttpWithNewKeyCall : s::rawOkHttpCall);
      callers.put("SDK `operation(req).execute()`", s::sdkSyncCall);
      if (sdkParts) {
        ResilientHttpClient noBreaker = s.sdk.newBuilder().noCircuitBreaker().build();
        ResilientHttpClient lockFree = s.sdk.newBuilder()
            .circuitBreakerRegistry(CircuitBreakerRegistry.of(
                CircuitBreakerConfig.from(ResilientHttpClient.defaultCircuitBreakerConfig())
                    .slidingWindowSynchronizationStrategy(SlidingWindowSynchronizationStrategy.LOCK_FREE)
                    .build()))
            .build();
        // A registry of the user's: the SDK records every attempt in its breakers (no shortcut).
        ResilientHttpClient everyCall = s.sdk.newBuilder()
            .circuitBreakerRegistry(CircuitBreakerRegistry.of(
                ResilientHttpClient.defaultCircuitBreakerConfig()))
            .build();
        callers.put("SDK without its circuit breaker", () -> SuccessPath.consume(
            noBreaker.operation(s.request).execute()));
        callers.put("SDK, every attempt recorded (a registry of yours)", () -> SuccessPath.consume(
            everyCall.operation(s.request).execute()));
        callers.put("SDK, breaker window LOCK_FREE", () -> SuccessPath.consume(
            lockFree.operation(s.request).execute()));
      }
      if (!sdkOnly) {
        callers.put("SDK + bulkhead (like-for-like stack)", s::sdkWithBulkheadCall);
        callers.put("Failsafe retry + breaker + bulkhead" + (post ? " + key" : ""),
            post ? s::failsafeStackWithNewKeyCall : s::failsafeStackCall);
        callers.put("resilience4j retry + breaker + bulkhead" + (post ? " + key" : ""),
            post ? s::resilience4jStackWithNewKeyCall : s::resilience4jStackCall);
      }
      List<String> names = new ArrayList<>(callers.keySet());
      int n = names.size();
      double[][] opsPerSecond = new double[n][rounds];
      Random order = new Random(SEED + threads);
      java.lang.management.CompilationMXBean jit =
          java.lang.management.ManagementFactory.getCompilationMXBean();
      List<InterleavedLatency.Call> all = new ArrayList<>(callers.values());
      warmUntilJitQuiet(all, threads, warmupMillis);
      int warmup = 2;
      long jitBeforeRounds = 0;
      for (int r = -warmup; r < rounds; r++) {
        if (r == 0) {
          jitBeforeRounds = jit.getTotalCompilationTime();
        }
        List<Integer> idx = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          idx.add(i);
        }
        Collections.shuffle(idx, order);
        for (int i : idx) {
          double ops = slice(callers.get(names.get(i)), threads, sliceMillis);
          if (r >= 0) {
            opsPerSecond[i][r] = ops;
          }
        }
      }
      long jitInRounds = jit.getTotalCompilationTime() - jitBeforeRounds;
      System.out.printf(Locale.ROOT, "#### %s, %d caller thread%s%n%n", method, threads,
          threads == 1 ? "" : "s");
      System.out.printf(Locale.ROOT, "(JIT compiling during the rounds: %d ms)%n%n", jitInRounds);
      System.out.println("| caller | median ops/s | median of per-round ratio to raw [95 % CI] |");
      System.out.println("|---|---:|---:|");
      Random boot = new Random(SEED);
      for (int i = 0; i < n; i++) {
        double[] ratios = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          ratios[r] = opsPerSecond[i][r] / opsPerSecond[0][r];
        }
        String ratio = i == 0 ? "1" : String.format(Locale.ROOT, "%.3f [%.3f, %.3f]",
            InterleavedLatency.median(ratios), InterleavedLatency.bootstrapMedian(ratios, boot, 0.025),
            InterleavedLatency.bootstrapMedian(ratios, boot, 0.975));
        System.out.printf(Locale.ROOT, "| %s | %.0f | %s |%n", names.get(i),
            InterleavedLatency.median(opsPerSecond[i]), ratio);
      }
      System.out.println();
    } finally {
      s.tearDown();
    }
  }

  /**
   * A loopback set-up (server, clients, stacks) for {@code threads} caller threads: its
   * {@code OkHttpClient}'s pool keeps as many idle connections as there are threads, so that no
   * caller pays for connection churn the others do not. The caller tears it down.
   */
  static SuccessPath loopback(String method, int threads) throws java.io.IOException {
    SuccessPath s = new SuccessPathThroughputBenchmark();
    s.method = method;
    s.setUp();
    s.okHttp = s.okHttp.newBuilder()
        .connectionPool(new ConnectionPool(Math.max(5, threads), 5, TimeUnit.MINUTES)).build();
    s.sdk = ResilientHttpClient.wrap(s.okHttp).build();
    s.rebuildStacks();
    return s;
  }

  /**
   * Runs every caller in turn, 1 s at a time, on one thread until a pass over them all compiled for
   * under {@value #QUIET_JIT_MILLIS} ms, then on {@code threads} threads until the same, or until
   * {@code maxMillis} passed (0: no warm-up). On one thread the JIT's compiler threads get a core;
   * the passes on {@code threads} threads compile what that load alone reaches (new threads' loops,
   * contended paths). Prints each pass's compiling time to standard error.
   */
  static void warmUntilJitQuiet(List<InterleavedLatency.Call> callers, int threads, long maxMillis)
      throws InterruptedException {
    java.lang.management.CompilationMXBean jit =
        java.lang.management.ManagementFactory.getCompilationMXBean();
    long end = System.nanoTime() + maxMillis * 1_000_000L;
    int warmThreads = 1;
    while (maxMillis > 0 && System.nanoTime() - end < 0) {
      long compiling = jit.getTotalCompilationTime();
      for (InterleavedLatency.Call call : callers) {
        run(call, warmThreads, 1_000);
      }
      long compiled = jit.getTotalCompilationTime() - compiling;
      System.err.printf(Locale.ROOT, "warm-up pass on %d thread(s): JIT %d ms%n", warmThreads,
          compiled);
      if (compiled < QUIET_JIT_MILLIS) {
        if (warmThreads == threads) {
          return;
        }
        warmThreads = threads;
      }
    }
  }

  /** Runs {@code call} on {@code threads} threads for about {@code millis}; operations per second. */
  private static double slice(InterleavedLatency.Call call, int threads, long millis)
      throws InterruptedException {
    long[] done = run(call, threads, millis);
    return done[0] * 1e9 / done[1];
  }

  /**
   * Runs {@code call} on {@code threads} threads for about {@code millis}; the calls made and the
   * nanoseconds from the start signal to the last thread's end.
   */
  static long[] run(InterleavedLatency.Call call, int threads, long millis)
      throws InterruptedException {
    LongAdder done = new LongAdder();
    LongAdder failed = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        ready.countDown();
        try {
          go.await();
          while (!stop.get()) {
            call.run();
            done.increment();
          }
        } catch (Throwable e) {
          failed.increment();
        }
      }, "caller-" + t);
      w.start();
      workers.add(w);
    }
    ready.await();
    long t0 = System.nanoTime();
    go.countDown();
    TimeUnit.MILLISECONDS.sleep(millis);
    stop.set(true);
    for (Thread w : workers) {
      w.join();
    }
    long elapsed = System.nanoTime() - t0;
    if (failed.sum() > 0) {
      throw new IllegalStateException(failed.sum() + " caller thread(s) failed");
    }
    return new long[] {done.sum(), elapsed};
  }
}
