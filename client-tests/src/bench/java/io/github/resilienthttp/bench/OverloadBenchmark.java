package io.github.resilienthttp.bench;

import dev.failsafe.FailsafeExecutor;
import dev.failsafe.okhttp.FailsafeCall;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.Retry;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.testkit.RecoveryTime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;
import mockwebserver3.MockWebServer;
import okhttp3.ConnectionPool;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Overload: what each client does to a backend of fixed capacity {@code C} when it is offered
 * {@code 3 × C}, and how fast it is healthy again when the load drops to {@code 0.5 × C} (issue 28).
 * Not JMH: it counts what the server and the callers saw.
 *
 * <p>The server is a {@link FixedCapacityServer} (MockWebServer 3 on loopback): {@code workers}
 * requests at a time, each served in {@code workers / C} seconds, a FIFO queue of {@code queue}
 * requests, and beyond it an immediate {@code 503} with {@code Retry-After: 1}.
 *
 * <p>The load is <em>open</em>: operation {@code i} is due at a fixed time of an evenly spaced
 * schedule (baseline {@code 0.5 × C}, overload {@code 3 × C}, recovery {@code 0.5 × C}), whatever
 * the replies. {@code threads} caller threads (the application's request pool) take the due
 * operations in order; an operation that no thread could start within {@code lag} milliseconds of
 * its due time is <em>dropped</em> (counted as a failure, never sent), as a request handler gives
 * up. Latency is measured from the due time, so time spent waiting for a caller thread counts.
 * Every operation is a {@code POST /payments} with a new idempotency key (the SDK makes it; the
 * other callers add one by hand) and a header naming the operation, by which the server counts its
 * requests per operation exactly.
 *
 * <pre>
 * mvn -B -ntp -Pbench -pl client-tests -am package -DskipTests
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.OverloadBenchmark [short] [key=value ...]
 * </pre>
 *
 * <p>Keys (defaults in brackets; {@code short} changes the defaults to {@code capacity=100
 * warmup=1 baseline=2 overload=5 recovery=3}): {@code capacity} [200] requests/s, {@code workers}
 * [4], {@code queue} [capacity / 10], {@code threads} [64], {@code warmup} [2] s (at
 * {@code recoveryFactor × C}, not counted), {@code baseline} [3] s, {@code overload} [20]
 * s, {@code recovery} [10] s, {@code overloadFactor} [3], {@code recoveryFactor} [0.5],
 * {@code lag} [1000] ms, {@code configs} [a,b,c,f,d,e-failsafe,e-r4j,b-nobreaker,c-nobreaker] (the
 * last two are diagnostics: (b) and (c) without the SDK's default breaker, to show the overload
 * control on its own).
 */
public final class OverloadBenchmark {
  private static final long SEED = 20_261_202L;
  private static final MediaType JSON = MediaType.get("application/json");
  private static final Duration WINDOW = Duration.ofMillis(250);
  private static final Duration STEP = Duration.ofMillis(10);
  /** Held so that the level set on it is not garbage-collected with the logger. */
  private static final Logger MOCK_WEB_SERVER_LOG = Logger.getLogger(MockWebServer.class.getName());

  private OverloadBenchmark() {}

  enum Phase { WARMUP, BASELINE, OVERLOAD, RECOVERY }

  /** The run's parameters; see the class comment. */
  record Settings(int capacity, int workers, int queue, int threads, double warmupSeconds,
      double baselineSeconds,
      double overloadSeconds, double recoverySeconds, double overloadFactor, double recoveryFactor,
      long lagMillis, List<String> configs) {
    Settings {
      if (capacity < 1 || workers < 1 || queue < 0 || threads < 1 || warmupSeconds < 0
          || baselineSeconds <= 0
          || overloadSeconds <= 0 || recoverySeconds <= 0 || overloadFactor <= 0
          || recoveryFactor <= 0 || lagMillis < 0 || configs.isEmpty()) {
        throw new IllegalArgumentException("invalid settings: " + this);
      }
    }

    static Settings parse(String[] args) {
      boolean quick = Arrays.asList(args).contains("short");
      Map<String, String> kv = new LinkedHashMap<>();
      for (String a : args) {
        if (a.equals("short")) {
          continue;
        }
        int eq = a.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException("expected short or key=value, got '" + a + "'");
        }
        kv.put(a.substring(0, eq), a.substring(eq + 1));
      }
      int capacity = Integer.parseInt(kv.getOrDefault("capacity", quick ? "100" : "200"));
      Settings s = new Settings(capacity,
          Integer.parseInt(kv.getOrDefault("workers", "4")),
          Integer.parseInt(kv.getOrDefault("queue", String.valueOf(capacity / 10))),
          Integer.parseInt(kv.getOrDefault("threads", "64")),
          Double.parseDouble(kv.getOrDefault("warmup", quick ? "1" : "2")),
          Double.parseDouble(kv.getOrDefault("baseline", quick ? "2" : "3")),
          Double.parseDouble(kv.getOrDefault("overload", quick ? "5" : "20")),
          Double.parseDouble(kv.getOrDefault("recovery", quick ? "3" : "10")),
          Double.parseDouble(kv.getOrDefault("overloadFactor", "3")),
          Double.parseDouble(kv.getOrDefault("recoveryFactor", "0.5")),
          Long.parseLong(kv.getOrDefault("lag", "1000")),
          List.of(kv.getOrDefault("configs",
              "a,b,c,f,d,e-failsafe,e-r4j,b-nobreaker,c-nobreaker").split(",")));
      kv.keySet().removeAll(List.of("capacity", "workers", "queue", "threads", "warmup", "baseline",
          "overload",
          "recovery", "overloadFactor", "recoveryFactor", "lag", "configs"));
      if (!kv.isEmpty()) {
        throw new IllegalArgumentException("unknown keys " + kv.keySet());
      }
      return s;
    }
  }

  /**
   * One operation as its caller saw it. {@code failure} is null for a 2xx; otherwise the final
   * status ("HTTP 503"), the exception's simple name, or "dropped" when no caller thread took it
   * within the lag.
   */
  record Op(int index, Phase phase, long dueNanos, long endNanos, String failure) {
    boolean success() {
      return failure == null;
    }

    boolean dropped() {
      return "dropped".equals(failure);
    }

    long latencyNanos() {
      return endNanos - dueNanos;
    }
  }

  /** One operation through one client; returns null for a 2xx, else what the caller got. */
  interface Caller {
    String call(Request request, int index) throws Exception;
  }

  /** Builds a config's caller around its fresh OkHttp client. */
  interface CallerFactory {
    Caller create(OkHttpClient okHttp);
  }

  /** A config: its id on the command line, its name in the table and its caller. */
  record Config(String id, String name, CallerFactory factory) {}

  /** What one config produced. */
  record Result(Config config, Op[] ops, long[] received, long[] served, long serverRequests,
      long serverRejected, long withoutKey, int maxQueued, long healthyBoundNanos, long dropNanos,
      long endNanos) {}

  static Map<String, Config> configs() {
    Map<String, Config> all = new LinkedHashMap<>();
    for (Config c : List.of(
        new Config("a", "(a) SDK defaults", ok -> sdk(ResilientHttpClient.wrap(ok).build())),
        new Config("b", "(b) SDK + adaptiveThrottling(defaults())", OverloadSdkConfigs::throttled),
        new Config("c", "(c) SDK + concurrencyLimit(gradient())", OverloadSdkConfigs::limited),
        new Config("f", "(f) SDK + rateLimitPacing(true)", OverloadSdkConfigs::paced),
        new Config("b-nobreaker", "(diagnostic) (b) + noCircuitBreaker()", OverloadSdkConfigs::throttledNoBreaker),
        new Config("c-nobreaker", "(diagnostic) (c) + noCircuitBreaker()", OverloadSdkConfigs::limitedNoBreaker),
        new Config("d", "(d) plain retry loop, 3 attempts, no budget", OverloadBenchmark::plainLoop),
        new Config("e-failsafe", "(e) Failsafe retry + breaker + bulkhead", OverloadBenchmark::failsafe),
        new Config("e-r4j", "(e) resilience4j retry + breaker + bulkhead",
            OverloadBenchmark::resilience4j))) {
      all.put(c.id(), c);
    }
    return all;
  }

  public static void main(String[] args) throws Exception {
    MOCK_WEB_SERVER_LOG.setLevel(Level.WARNING);
    Settings s = Settings.parse(args);
    Map<String, Config> all = configs();
    long started = System.nanoTime();
    System.out.printf(Locale.ROOT, "Overload benchmark, %s%n", describe(s));
    System.out.println();
    // One JIT warm-up for the JVM (OkHttp, the server, the caller loop), so that the first config
    // does not pay for it: the plain loop through a short run of every phase, not reported.
    run(new Settings(s.capacity(), s.workers(), s.queue(), s.threads(), 0.5, 1, 2, 1, s.overloadFactor(),
        s.recoveryFactor(), s.lagMillis(), List.of("d")), all.get("d"));
    List<Result> results = new ArrayList<>();
    List<String> pending = new ArrayList<>();
    for (String id : s.configs()) {
      Config c = all.get(id.trim());
      if (c == null) {
        throw new IllegalArgumentException("unknown config '" + id + "', known: " + all.keySet());
      }
      try {
        results.add(run(s, c));
      } catch (UnsupportedOperationException e) {
        pending.add(c.name() + ": pending (" + e.getMessage() + ")");
      }
    }
    print(s, results);
    pending.forEach(System.out::println);
    System.out.printf(Locale.ROOT, "%ntotal %.1f s%n", (System.nanoTime() - started) / 1e9);
  }

  static String describe(Settings s) {
    long serviceMs = TimeUnit.SECONDS.toMillis(s.workers()) / s.capacity();
    return String.format(Locale.ROOT, "seed %d, loopback, POST /payments with a new idempotency key per"
        + " operation%nserver: capacity C = %d requests/s (%d workers x %d ms), FIFO queue of %d (<= %d ms),"
        + " beyond it 503 + Retry-After: 1%nopen load, evenly spaced: %.0f s warm-up (not counted) and %.0f s"
        + " baseline at %.1f x C, %.0f s at %.1f x C"
        + " (overload), %.0f s at %.1f x C (recovery); %d caller threads, an operation not started within"
        + " %d ms of its due time is dropped%ngoodput = successes completed during the overload per second; srv req/op and latency over the operations due in it;"
        + " latency from the due time%nrecovery = time from the drop to"
        + " %.1f x C until every later %d ms window of arrivals (sliding %d ms) has >= 99 %% of its"
        + " operations successful within the healthy bound, %d ms = 2 x (service time + a full queue's"
        + " wait)%nbefore the configs, one JIT warm-up run of (d) through every phase (4.5 s), not"
        + " reported",
        SEED, s.capacity(), s.workers(), serviceMs, s.queue(), s.queue() * 1000L / s.capacity(),
        s.warmupSeconds(), s.baselineSeconds(), s.recoveryFactor(), s.overloadSeconds(), s.overloadFactor(),
        s.recoverySeconds(), s.recoveryFactor(), s.threads(), s.lagMillis(), s.recoveryFactor(),
        WINDOW.toMillis(), STEP.toMillis(), TimeUnit.NANOSECONDS.toMillis(healthyBoundNanos(s)));
  }

  // ------------------------------------------------------------------------------------ running

  /** The due offsets (ns from the start) and phases of every operation. */
  record Schedule(long[] dueOffsets, Phase[] phases, long dropOffset, long endOffset) {
    static Schedule of(Settings s) {
      double[][] phases = {
          {s.warmupSeconds(), s.recoveryFactor() * s.capacity()},
          {s.baselineSeconds(), s.recoveryFactor() * s.capacity()},
          {s.overloadSeconds(), s.overloadFactor() * s.capacity()},
          {s.recoverySeconds(), s.recoveryFactor() * s.capacity()}};
      List<Long> due = new ArrayList<>();
      List<Phase> phase = new ArrayList<>();
      double t0 = 0;
      long drop = 0;
      for (int p = 0; p < phases.length; p++) {
        long n = Math.round(phases[p][0] * phases[p][1]);
        for (long i = 0; i < n; i++) {
          due.add(Math.round((t0 + i / phases[p][1]) * 1e9));
          phase.add(Phase.values()[p]);
        }
        t0 += phases[p][0];
        if (p == 2) {
          drop = Math.round(t0 * 1e9);
        }
      }
      return new Schedule(due.stream().mapToLong(Long::longValue).toArray(),
          phase.toArray(new Phase[0]), drop, Math.round(t0 * 1e9));
    }
  }

  static Result run(Settings s, Config config) throws Exception {
    Schedule schedule = Schedule.of(s);
    int n = schedule.dueOffsets().length;
    OkHttpClient okHttp = new OkHttpClient.Builder()
        .connectionPool(new ConnectionPool(2 * s.threads(), 1, TimeUnit.MINUTES))
        .build();
    try (FixedCapacityServer server =
        new FixedCapacityServer(s.capacity(), s.workers(), s.queue(), n).start()) {
      System.err.printf(Locale.ROOT, "running %s (%d operations) against %s%n", config.name(), n,
          server.url("/"));
      Caller caller = config.factory().create(okHttp);
      Op[] ops = new Op[n];
      AtomicInteger next = new AtomicInteger();
      long lagNanos = TimeUnit.MILLISECONDS.toNanos(s.lagMillis());
      long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
      List<Thread> threads = new ArrayList<>();
      List<Throwable> crashed = new java.util.concurrent.CopyOnWriteArrayList<>();
      for (int t = 0; t < s.threads(); t++) {
        Thread thread = new Thread(() -> {
          for (int i; (i = next.getAndIncrement()) < n; ) {
            long due = start + schedule.dueOffsets()[i];
            parkUntil(due);
            Phase phase = schedule.phases()[i];
            if (System.nanoTime() - due > lagNanos) {
              ops[i] = new Op(i, phase, due, System.nanoTime(), "dropped");
              continue;
            }
            String failure;
            try {
              failure = caller.call(request(server, i), i);
            } catch (Exception e) {
              failure = e.getClass().getSimpleName();
            } catch (Throwable e) {
              crashed.add(e);
              failure = e.getClass().getSimpleName();
            }
            ops[i] = new Op(i, phase, due, System.nanoTime(), failure);
          }
        }, "caller-" + t);
        thread.start();
        threads.add(thread);
      }
      for (Thread thread : threads) {
        thread.join();
      }
      if (!crashed.isEmpty()) {
        throw new IllegalStateException(config.name() + ": a caller thread failed", crashed.get(0));
      }
      long[] received = new long[n];
      long[] served = new long[n];
      for (int i = 0; i < n; i++) {
        received[i] = server.received(i);
        served[i] = server.served(i);
      }
      // Nothing is in flight: every caller thread returned, and each waited for its answers.
      return new Result(config, ops, received, served, server.requests(), server.rejected(),
          server.withoutKey(), server.maxQueued(), healthyBoundNanos(s), start + schedule.dropOffset(),
          start + schedule.endOffset());
    } finally {
      okHttp.dispatcher().cancelAll();
      okHttp.dispatcher().executorService().shutdownNow();
      okHttp.connectionPool().evictAll();
    }
  }

  private static Request request(FixedCapacityServer server, int index) {
    return new Request.Builder().url(server.url("/payments"))
        .header(FixedCapacityServer.OP_HEADER, Integer.toString(index))
        .post(RequestBody.create(("{\"order\":\"order-" + index + "\",\"amount\":1000}")
            .getBytes(StandardCharsets.UTF_8), JSON))
        .build();
  }

  // ------------------------------------------------------------------------------------ callers

  static Caller sdk(ResilientHttpClient client) {
    return (request, index) -> {
      try (Response r = client.operation(request).execute()) {
        return finish(r);
      }
    };
  }

  /**
   * A loop a caller writes by hand: 3 attempts, full-jitter exponential backoff from 100 ms (at most
   * 5 s, jitter seeded per operation), retrying I/O errors, 408, 429 and 5xx; it ignores
   * {@code Retry-After} and has no budget, breaker or deadline.
   */
  static Caller plainLoop(OkHttpClient okHttp) {
    return (request, index) -> {
      Request keyed = SuccessPath.withNewKey(request);
      SplittableRandom jitter = new SplittableRandom(SEED + index);
      String last = null;
      for (int attempt = 1; attempt <= 3; attempt++) {
        if (attempt > 1) {
          long ceiling = Math.min(5_000, 100L << (attempt - 2));
          long waitNanos = TimeUnit.MILLISECONDS.toNanos(jitter.nextLong(ceiling + 1));
          parkUntil(System.nanoTime() + waitNanos);
        }
        try (Response r = okHttp.newCall(keyed).execute()) {
          last = finish(r);
          int code = r.code();
          if (last == null || !(code == 408 || code == 429 || code >= 500)) {
            return last;
          }
        } catch (IOException e) {
          last = e.getClass().getSimpleName();
        }
      }
      return last;
    };
  }

  /** Failsafe's stack of {@link SuccessPath#newFailsafeStack()}, one per target, with a new key. */
  static Caller failsafe(OkHttpClient okHttp) {
    FailsafeExecutor<Response> stack = SuccessPath.newFailsafeStack();
    return (request, index) -> {
      try (Response r = FailsafeCall.with(stack)
          .compose(okHttp.newCall(SuccessPath.withNewKey(request))).execute()) {
        return finish(r);
      }
    };
  }

  /** resilience4j's stack of {@link SuccessPath}: {@code Retry(CircuitBreaker(Bulkhead(call)))}. */
  static Caller resilience4j(OkHttpClient okHttp) {
    Retry retry = SuccessPath.resilience4jRetry();
    CircuitBreakerRegistry breakers = SuccessPath.resilience4jBreakers();
    BulkheadRegistry bulkheads = SuccessPath.resilience4jBulkheads();
    return (request, index) -> {
      Request keyed = SuccessPath.withNewKey(request);
      String target = keyed.url().host();
      CircuitBreaker breaker = breakers.circuitBreaker(target);
      Bulkhead bulkhead = bulkheads.bulkhead(target);
      Response response;
      try {
        response = Retry.decorateCheckedSupplier(retry,
            CircuitBreaker.decorateCheckedSupplier(breaker,
                Bulkhead.decorateCheckedSupplier(bulkhead, () -> okHttp.newCall(keyed).execute())))
            .get();
      } catch (Exception | Error e) {
        throw e;
      } catch (Throwable t) {
        throw new IOException(t);
      }
      try (Response r = response) {
        return finish(r);
      }
    };
  }

  /** Reads the body; null for a 2xx, else "HTTP " and the status. */
  static String finish(Response r) throws IOException {
    r.body().string();
    return r.isSuccessful() ? null : "HTTP " + r.code();
  }

  // ------------------------------------------------------------------------------------ report

  static void print(Settings s, List<Result> results) {
    double c = s.capacity();
    System.out.println("| config | goodput ops/s (x C) | srv req/op | srv req/sent op | p50 ms | p99 ms | dropped | not sent"
        + " | recovery | ok % recovery | goal: >= 0.9 C / <= 1.2 req/op / <= 2 s |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for (Result r : results) {
      List<Op> overload = phase(r, Phase.OVERLOAD);
      List<Op> sent = overload.stream().filter(o -> r.received()[o.index()] > 0).toList();
      List<Op> recovery = phase(r, Phase.RECOVERY);
      double goodput = goodput(s, r);
      double reqPerOp = requestsPerOp(r, overload);
      long[] latency = sortedLatency(overload.stream().filter(o -> !o.dropped()).toList());
      Long recoveryMs = recoveryMillis(r, r.healthyBoundNanos());
      boolean fast = recoveryMs != null && recoveryMs <= 2_000;
      boolean meets = goodput >= 0.9 * c && reqPerOp <= 1.2 && fast;
      System.out.printf(Locale.ROOT, "| %s | %.1f (%.2f) | %.3f | %.3f | %.1f | %.1f | %d | %d | %s | %.1f | %s |%n",
          r.config().name(), goodput, goodput / c, reqPerOp, requestsPerOp(r, sent), ms(FaultComparison.percentile(latency, 0.50)),
          ms(FaultComparison.percentile(latency, 0.99)), count(overload, Op::dropped), notSent(r, overload),
          recoveryMs == null ? "> " + Math.round(s.recoverySeconds() * 1000) + " ms" : recoveryMs + " ms",
          100.0 * count(recovery, Op::success) / recovery.size(),
          (goodput >= 0.9 * c ? "yes" : "no") + " / " + (reqPerOp <= 1.2 ? "yes" : "no") + " / "
              + (fast ? "yes" : "no") + (meets ? " (met)" : ""));
    }
    System.out.println();
    System.out.println("| config | ops (overload) | ok % (overload) | p99 ms of successes (overload)"
        + " | ok % baseline | baseline p99 ms | healthy bound ms | server requests | server 503s | max queue"
        + " | without key | served twice | failures (overload) |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for (Result r : results) {
      List<Op> overload = phase(r, Phase.OVERLOAD);
      List<Op> base = phase(r, Phase.BASELINE);
      long[] baseline = sortedLatency(phase(r, Phase.BASELINE).stream().filter(o -> !o.dropped()).toList());
      long[] okLatency = sortedLatency(overload.stream().filter(Op::success).toList());
      long twice = Arrays.stream(r.served()).filter(v -> v > 1).count();
      System.out.printf(Locale.ROOT, "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %d | %d | %d | %d | %d | %s |%n",
          r.config().name(), overload.size(), 100.0 * count(overload, Op::success) / overload.size(),
          ms(FaultComparison.percentile(okLatency, 0.99)), 100.0 * count(base, Op::success) / base.size(), ms(FaultComparison.percentile(baseline, 0.99)),
          r.healthyBoundNanos() / 1e6, r.serverRequests(), r.serverRejected(), r.maxQueued(), r.withoutKey(),
          twice, failures(overload));
    }
    System.out.println();
    System.out.println("failures in the other phases:");
    for (Result r : results) {
      System.out.printf(Locale.ROOT, "%-44s warm-up: %s; baseline: %s; recovery: %s%n", r.config().name(),
          failures(phase(r, Phase.WARMUP)), failures(phase(r, Phase.BASELINE)),
          failures(phase(r, Phase.RECOVERY)));
    }
    System.out.println();
    System.out.println("successful operations per second of completion (baseline | overload | recovery):");
    for (Result r : results) {
      System.out.printf(Locale.ROOT, "%-44s %s%n", r.config().name(), timeline(s, r));
    }
    System.out.println();
  }

  /** Successful operations that completed during the overload phase, per second of it. */
  static double goodput(Settings s, Result r) {
    long to = r.dropNanos();
    long from = to - Math.round(s.overloadSeconds() * 1e9);
    long ok = Arrays.stream(r.ops()).filter(o -> o.success() && o.endNanos() >= from && o.endNanos() < to)
        .count();
    return ok / s.overloadSeconds();
  }

  /** Requests the server received for these operations, per operation (dropped ones count, as 0). */
  static double requestsPerOp(Result r, List<Op> ops) {
    return ops.stream().mapToLong(o -> r.received()[o.index()]).sum() / (double) ops.size();
  }

  /** Operations that failed without a request reaching the server, and were not dropped. */
  static int notSent(Result r, List<Op> ops) {
    return count(ops, o -> !o.success() && !o.dropped() && r.received()[o.index()] == 0);
  }

  private static List<Op> phase(Result r, Phase p) {
    return Arrays.stream(r.ops()).filter(o -> o.phase() == p).toList();
  }

  /**
   * 2 x the longest time the server takes for a request it serves (the service time plus a full
   * queue's wait): the same for every config, so that one config's noisy baseline does not move
   * its own bar. A slower operation waited in the client (a retry, a caller thread) or on the machine.
   */
  static long healthyBoundNanos(Settings s) {
    long serviceNanos = TimeUnit.SECONDS.toNanos(s.workers()) / s.capacity();
    return 2 * (serviceNanos + TimeUnit.SECONDS.toNanos(s.queue()) / s.capacity());
  }

  private static Long recoveryMillis(Result r, long boundNanos) {
    List<Op> recovery = phase(r, Phase.RECOVERY);
    return RecoveryTime.of(recovery, Op::dueNanos,
            o -> o.success() && o.latencyNanos() <= boundNanos, r.dropNanos(), r.endNanos(), WINDOW, STEP, 99)
        .map(Duration::toMillis).orElse(null);
  }

  /** Successful completions per second from the start of the baseline; " | " marks the phase changes. */
  private static String timeline(Settings s, Result r) {
    long first = r.dropNanos() - Math.round((s.baselineSeconds() + s.overloadSeconds()) * 1e9);
    int b = (int) Math.round(s.baselineSeconds());
    int e = (int) Math.round(s.baselineSeconds() + s.overloadSeconds());
    int seconds = (int) Math.ceil(s.baselineSeconds() + s.overloadSeconds() + s.recoverySeconds());
    int[] ok = new int[seconds];
    for (Op o : r.ops()) {
      long since = o.endNanos() - first;
      if (o.success() && since >= 0 && since / 1_000_000_000L < seconds) {
        ok[(int) (since / 1_000_000_000L)]++;
      }
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < seconds; i++) {
      sb.append(i == b || i == e ? " | " : i == 0 ? "" : " ").append(ok[i]);
    }
    return sb.toString();
  }

  private static long[] sortedLatency(List<Op> ops) {
    return ops.stream().mapToLong(Op::latencyNanos).sorted().toArray();
  }

  private static double ms(long nanos) {
    return nanos < 0 ? Double.NaN : nanos / 1e6;
  }

  private static int count(List<Op> ops, java.util.function.Predicate<Op> p) {
    int n = 0;
    for (Op o : ops) {
      n += p.test(o) ? 1 : 0;
    }
    return n;
  }

  private static String failures(List<Op> ops) {
    return FaultComparison.failures(ops, Op::failure);
  }

  static void parkUntil(long deadlineNanos) {
    for (long left; (left = deadlineNanos - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left);
    }
  }
}
