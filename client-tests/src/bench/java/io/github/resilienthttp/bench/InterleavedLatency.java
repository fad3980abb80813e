package io.github.resilienthttp.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.commons.math3.stat.StatUtils;

/**
 * Healthy-path latency of every caller of {@link SuccessPath}, measured <em>paired</em>: one JVM,
 * one server, and in each round every caller runs one block of calls, in a shuffled order. Each
 * caller's block is compared with raw OkHttp's block of the same round, so load from other
 * processes, which on a shared two-core machine drifts by tens of percent over a minute, affects
 * both sides of each comparison about equally. The JMH run gives the absolute figures and the
 * allocation; this program gives the overhead ratios with usable intervals when the machine is busy.
 *
 * <p>Per caller: the median over rounds of (block mean / raw OkHttp's block mean in the same round),
 * with a 95 % bootstrap interval of that median (2,000 resamples of the rounds, seeded), the median
 * added time per call, and p50/p99 over every timed call. Not JMH: no forks, one JIT profile shared
 * by all callers (the same for each of them), calls timed with {@link System#nanoTime()}.
 *
 * <pre>
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.InterleavedLatency [rounds] [calls per block] [GET,POST]
 * </pre>
 */
public final class InterleavedLatency {
  private static final long SEED = 20_261_129L;

  private InterleavedLatency() {}

  /** One caller under test. */
  interface Call {
    int run() throws Throwable;
  }

  public static void main(String[] args) throws Throwable {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
    int block = args.length > 1 ? Integer.parseInt(args[1]) : 400;
    System.out.printf(Locale.ROOT, "Interleaved paired latency: %d rounds x %d calls per caller per round,"
        + " shuffled order per round (seed %d), after %d warm-up rounds; loopback server as in the JMH run%n%n",
        rounds, block, SEED, rounds / 6);
    // A third argument picks the methods, e.g. POST: each method then gets a JVM whose JIT profile
    // no other method's calls have shaped, as in a JMH fork.
    List<String> methods = args.length > 2 ? List.of(args[2].split(",")) : List.of("GET", "POST");
    for (String method : methods) {
      measure(method, rounds, block);
    }
  }

  private static final String SDK_STACK = "SDK + bulkhead (like-for-like stack)";
  private static final String FAILSAFE_STACK = "Failsafe retry + breaker + bulkhead (+ key for POST)";
  private static final String R4J_STACK = "resilience4j retry + breaker + bulkhead (+ key for POST)";

  private static void measure(String method, int rounds, int block) throws Throwable {
    SuccessPath s = new SuccessPathLatencyBenchmark();
    s.method = method;
    s.setUp();
    try {
      Map<String, Call> calls = new LinkedHashMap<>();
      calls.put("OkHttp `newCall().execute()`", s::rawOkHttpCall);
      calls.put("SDK `operation(req).execute()`", s::sdkSyncCall);
      calls.put("SDK `operation(req).executeAsync().get()`", s::sdkAsyncCall);
      calls.put("Failsafe `FailsafeCall...execute()`", s::failsafeCall);
      calls.put("resilience4j `Retry.decorateCheckedSupplier`", s::resilience4jCall);
      calls.put("(diagnostic) OkHttp + 30 s call timeout", s::rawOkHttpWithCallTimeoutCall);
      calls.put("(diagnostic) OkHttp + a fixed key header", s::rawOkHttpWithKeyHeaderCall);
      if ("POST".equals(method)) {
        // Like for like: a caller who retries a POST safely with a peer adds a key by hand.
        calls.put("(diagnostic) OkHttp + a new key per call", s::rawOkHttpWithNewKeyCall);
        calls.put("Failsafe + a new key per call", s::failsafeWithNewKeyCall);
        calls.put("resilience4j + a new key per call", s::resilience4jWithNewKeyCall);
      }
      calls.put("(diagnostic) OkHttp `enqueue` + future", s::rawOkHttpAsyncCall);
      // Like for like: retry + per-target breaker + bulkhead in every stack (SuccessPath).
      boolean post = "POST".equals(method);
      calls.put(SDK_STACK, s::sdkWithBulkheadCall);
      calls.put(FAILSAFE_STACK, post ? s::failsafeStackWithNewKeyCall : s::failsafeStackCall);
      calls.put(R4J_STACK, post ? s::resilience4jStackWithNewKeyCall : s::resilience4jStackCall);
      List<String> names = new ArrayList<>(calls.keySet());
      int n = names.size();
      Random order = new Random(SEED);
      int warmup = rounds / 6;
      double[][] blockMeans = new double[n][rounds];
      long[][] samples = new long[n][rounds * block];
      for (int r = -warmup; r < rounds; r++) {
        List<Integer> idx = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          idx.add(i);
        }
        java.util.Collections.shuffle(idx, order);
        for (int i : idx) {
          Call c = calls.get(names.get(i));
          long sum = 0;
          for (int k = 0; k < block; k++) {
            long t0 = System.nanoTime();
            c.run();
            long dt = System.nanoTime() - t0;
            sum += dt;
            if (r >= 0) {
              samples[i][r * block + k] = dt;
            }
          }
          if (r >= 0) {
            blockMeans[i][r] = sum / (double) block / 1000.0;
          }
        }
      }
      System.out.println("#### " + method + " (interleaved, 1 caller thread)");
      System.out.println();
      System.out.println("| caller | mean µs | p50 µs | p99 µs | median of per-round ratio to raw [95 % CI]"
          + " | median added µs per call |");
      System.out.println("|---|---:|---:|---:|---:|---:|");
      Random boot = new Random(SEED);
      for (int i = 0; i < n; i++) {
        long[] all = samples[i].clone();
        Arrays.sort(all);
        double mean = Arrays.stream(blockMeans[i]).average().orElse(Double.NaN);
        double[] ratios = new double[rounds];
        double[] added = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          ratios[r] = blockMeans[i][r] / blockMeans[0][r];
          added[r] = blockMeans[i][r] - blockMeans[0][r];
        }
        String ratio = i == 0 ? "1" : String.format(Locale.ROOT, "%.3f [%.3f, %.3f]",
            median(ratios), bootstrapMedian(ratios, boot, 0.025), bootstrapMedian(ratios, boot, 0.975));
        String plus = i == 0 ? "—" : String.format(Locale.ROOT, "%+.1f", median(added));
        System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %s | %s |%n", names.get(i), mean,
            FaultComparison.percentile(all, 0.50) / 1000.0, FaultComparison.percentile(all, 0.99) / 1000.0,
            ratio, plus);
      }
      System.out.println();
      // Side by side without raw OkHttp in between: is the SDK slower than a peer, and by how much?
      System.out.println("| pair (same round) | median of per-round ratio [95 % CI] | median difference µs |");
      System.out.println("|---|---:|---:|");
      int sdk = names.indexOf("SDK `operation(req).execute()`");
      int async = names.indexOf("SDK `operation(req).executeAsync().get()`");
      int[][] pairs = {
          {sdk, names.indexOf("Failsafe `FailsafeCall...execute()`")},
          {sdk, names.indexOf("resilience4j `Retry.decorateCheckedSupplier`")},
          {async, names.indexOf("(diagnostic) OkHttp `enqueue` + future")},
          {sdk, names.indexOf("Failsafe + a new key per call")},
          {sdk, names.indexOf("resilience4j + a new key per call")},
          {names.indexOf(SDK_STACK), names.indexOf(FAILSAFE_STACK)},
          {names.indexOf(SDK_STACK), names.indexOf(R4J_STACK)}};
      for (int[] pair : pairs) {
        if (pair[1] < 0) {
          continue; // the keyed peers run for POST only
        }
        double[] ratios = new double[rounds];
        double[] diffs = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          ratios[r] = blockMeans[pair[0]][r] / blockMeans[pair[1]][r];
          diffs[r] = blockMeans[pair[0]][r] - blockMeans[pair[1]][r];
        }
        System.out.printf(Locale.ROOT, "| %s / %s | %.3f [%.3f, %.3f] | %+.1f |%n", names.get(pair[0]),
            names.get(pair[1]), median(ratios), bootstrapMedian(ratios, boot, 0.025),
            bootstrapMedian(ratios, boot, 0.975), median(diffs));
      }
      System.out.println();
    } finally {
      s.tearDown();
    }
  }

  static double median(double[] xs) {
    return StatUtils.percentile(xs, 50); // the middle value, or the mean of the two middle ones
  }

  /** A percentile of the bootstrap distribution of the median (2,000 resamples). */
  static double bootstrapMedian(double[] xs, Random random, double q) {
    int resamples = 2_000;
    double[] medians = new double[resamples];
    double[] pick = new double[xs.length];
    for (int b = 0; b < resamples; b++) {
      for (int i = 0; i < xs.length; i++) {
        pick[i] = xs[random.nextInt(xs.length)];
      }
      medians[b] = median(pick);
    }
    Arrays.sort(medians);
    return medians[(int) Math.min(resamples - 1, Math.floor(q * resamples))];
  }
}
