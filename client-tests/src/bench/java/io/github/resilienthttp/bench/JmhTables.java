package io.github.resilienthttp.bench;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.commons.math3.distribution.TDistribution;
import org.apache.commons.math3.stat.StatUtils;

/**
 * Turns the JSON results of the {@code SuccessPath*Benchmark} run into the Markdown tables of
 * BENCHMARKS.md, with ratios against raw OkHttp.
 *
 * <p>Error bars are 99.9 % confidence intervals (Student's t) over <em>iterations</em>, every fork's
 * measurement iterations pooled. For throughput and allocation that is what JMH prints too. For
 * sample mode JMH's own interval treats every sampled call as independent, which on a shared
 * two-core machine understates the run-to-run variance by an order of magnitude; here the mean of
 * each iteration is one observation instead. A ratio's interval combines the two relative
 * half-widths in quadrature (first-order error propagation).
 *
 * <p>With {@code -prof comp} in the run, the last column is JMH's {@code compiler.time.profiled}:
 * the milliseconds the JIT compiled during one fork's measured iterations, the mean over the forks;
 * "-" without it. More than a few per cent of the measured time means the warm-up was too
 * short and the row measures compiling as well as calling.
 *
 * <pre>
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.JmhTables jmh-result.json
 * </pre>
 */
public final class JmhTables {
  private static final String PACKAGE = "io.github.resilienthttp.bench.";
  private static final Map<String, String> CALLERS = new LinkedHashMap<>();

  static {
    CALLERS.put("rawOkHttp", "OkHttp `newCall().execute()`");
    CALLERS.put("sdkSync", "SDK `operation(req).execute()`");
    CALLERS.put("sdkAsync", "SDK `operation(req).executeAsync().get()`");
    CALLERS.put("failsafe", "Failsafe `FailsafeCall...execute()`");
    CALLERS.put("resilience4j", "resilience4j `Retry.decorateCheckedSupplier`");
    CALLERS.put("rawOkHttpWithCallTimeout", "(diagnostic) OkHttp + 30 s call timeout");
    CALLERS.put("rawOkHttpAsync", "(diagnostic) OkHttp `enqueue` + future");
    CALLERS.put("sdkStack", "SDK + bulkhead (like-for-like stack)");
    CALLERS.put("failsafeStack", "Failsafe retry + breaker + bulkhead (+ key for POST)");
    CALLERS.put("resilience4jStack", "resilience4j retry + breaker + bulkhead (+ key for POST)");
  }

  private JmhTables() {}

  /** One benchmark's figures: a value with the half-width of its interval. */
  record Estimate(double value, double error) {
    Estimate ratioTo(Estimate base) {
      double r = value / base.value;
      double rel = Math.hypot(error / value, base.error / base.value);
      return new Estimate(r, r * rel);
    }
  }

  record Row(String method, String param, String unit, Estimate score, double p50, double p99,
      double p99IterMin, double p99IterMax, Estimate alloc, double jitMillis) {}

  public static void main(String[] args) throws IOException {
    // Plain maps, lists, numbers and strings; JMH writes NaN for a missing error estimate.
    Object json = JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build()
        .readValue(Path.of(args[0]).toFile(), Object.class);
    Map<String, List<Row>> byTable = new LinkedHashMap<>();
    for (Object o : (List<?>) json) {
      Map<?, ?> b = (Map<?, ?>) o;
      String full = (String) b.get("benchmark");
      String simple = full.substring(PACKAGE.length());
      String cls = simple.substring(0, simple.indexOf('.'));
      String method = simple.substring(simple.indexOf('.') + 1);
      String param = String.valueOf(((Map<?, ?>) b.get("params")).get("method"));
      Map<?, ?> primary = (Map<?, ?>) b.get("primaryMetric");
      String mode = (String) b.get("mode");
      Estimate score;
      double p50 = Double.NaN;
      double p99 = Double.NaN;
      double p99Min = Double.NaN;
      double p99Max = Double.NaN;
      if ("sample".equals(mode)) {
        List<double[]> iterations = histogramIterations(primary.get("rawDataHistogram"));
        double[] means = new double[iterations.size()];
        double[] p99s = new double[iterations.size()];
        for (int i = 0; i < means.length; i++) {
          means[i] = iterations.get(i)[0];
          p99s[i] = iterations.get(i)[1];
        }
        score = estimate(means);
        Map<?, ?> pct = (Map<?, ?>) primary.get("scorePercentiles");
        p50 = num(pct.get("50.0"));
        p99 = num(pct.get("99.0"));
        p99Min = StatUtils.min(p99s);
        p99Max = StatUtils.max(p99s);
      } else {
        score = estimate(flatten(primary.get("rawData")));
      }
      Map<?, ?> secondary = (Map<?, ?>) b.get("secondaryMetrics");
      Map<?, ?> norm = secondary == null ? null : (Map<?, ?>) secondary.get("gc.alloc.rate.norm");
      Estimate alloc = norm == null ? null : estimate(flatten(norm.get("rawData")));
      Map<?, ?> jit = secondary == null ? null : (Map<?, ?>) secondary.get("compiler.time.profiled");
      double jitMillis = jit == null ? Double.NaN
          : StatUtils.sum(flatten(jit.get("rawData"))) / ((List<?>) jit.get("rawData")).size();
      byTable.computeIfAbsent(cls + " " + param, k -> new ArrayList<>()).add(new Row(method, param,
          (String) primary.get("scoreUnit"), score, p50, p99, p99Min, p99Max, alloc, jitMillis));
    }
    byTable.entrySet().stream()
        .sorted(Map.Entry.comparingByKey()) // Latency GET, Latency POST, Throughput GET, Throughput POST
        .forEach(e -> print(e.getKey(), e.getValue()));
  }

  private static void print(String table, List<Row> rows) {
    boolean latency = table.startsWith("SuccessPathLatency");
    Row raw = rows.stream().filter(r -> r.method().equals("rawOkHttp")).findFirst().orElseThrow();
    List<Row> ordered = new ArrayList<>();
    for (String m : CALLERS.keySet()) {
      rows.stream().filter(r -> r.method().equals(m)).findFirst().ifPresent(ordered::add);
    }
    System.out.println("#### " + table + " (" + (latency
        ? "SampleTime, 1 thread" : "Throughput, 4 threads") + ")");
    System.out.println();
    if (latency) {
      System.out.println("| caller | mean µs | mean / raw | p50 µs | p99 µs | p99 / raw | p99 range over"
          + " iterations µs | alloc B/op | alloc − raw B/op | JIT ms measured |");
      System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    } else {
      System.out.println("| caller | ops/ms | ops/ms / raw | alloc B/op | alloc − raw B/op | JIT ms measured |");
      System.out.println("|---|---:|---:|---:|---:|---:|");
    }
    for (Row r : ordered) {
      boolean isRaw = r == raw;
      String ratio = isRaw ? "1" : fmt(r.score().ratioTo(raw.score()), 3);
      String allocText = r.alloc() == null ? "-" : fmt(r.alloc(), 0);
      String allocDiff = r.alloc() == null || isRaw ? "—" : diff(r.alloc(), raw.alloc());
      String jit = Double.isNaN(r.jitMillis()) ? "-" : String.format(Locale.ROOT, "%.0f", r.jitMillis());
      if (latency) {
        System.out.printf(Locale.ROOT, "| %s | %s | %s | %.1f | %.1f | %.2f | %.0f–%.0f | %s | %s | %s |%n",
            CALLERS.get(r.method()), fmt(r.score(), 1), ratio, r.p50(), r.p99(),
            r.p99() / raw.p99(), r.p99IterMin(), r.p99IterMax(), allocText, allocDiff, jit);
      } else {
        System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |%n",
            CALLERS.get(r.method()), fmt(r.score(), 2), ratio, allocText, allocDiff, jit);
      }
    }
    System.out.println();
  }

  private static String diff(Estimate a, Estimate base) {
    return String.format(Locale.ROOT, "%+.0f ± %.0f", a.value() - base.value(),
        Math.hypot(a.error(), base.error()));
  }

  private static String fmt(Estimate e, int decimals) {
    return String.format(Locale.ROOT, "%." + decimals + "f ± %." + decimals + "f", e.value(), e.error());
  }

  /** Mean and 99.9 % t-interval half-width. */
  static Estimate estimate(double[] xs) {
    int n = xs.length;
    double mean = StatUtils.mean(xs);
    if (n < 2) {
      return new Estimate(mean, Double.NaN);
    }
    double sd = Math.sqrt(StatUtils.variance(xs, mean));
    double t = new TDistribution(n - 1).inverseCumulativeProbability(1 - 0.001 / 2);
    return new Estimate(mean, t * sd / Math.sqrt(n));
  }

  /** rawData: forks × iterations of numbers. */
  private static double[] flatten(Object rawData) {
    List<Double> out = new ArrayList<>();
    for (Object fork : (List<?>) rawData) {
      for (Object v : (List<?>) fork) {
        out.add(num(v));
      }
    }
    return out.stream().mapToDouble(Double::doubleValue).toArray();
  }

  /**
   * rawDataHistogram: forks × iterations × [value, count] pairs. Returns, per iteration, its mean
   * and its 99th percentile.
   */
  private static List<double[]> histogramIterations(Object histogram) {
    List<double[]> out = new ArrayList<>();
    for (Object fork : (List<?>) histogram) {
      for (Object iteration : (List<?>) fork) {
        List<double[]> pairs = new ArrayList<>();
        double sum = 0;
        long count = 0;
        for (Object pair : (List<?>) iteration) {
          List<?> p = (List<?>) pair;
          double v = num(p.get(0));
          long c = (long) num(p.get(1));
          pairs.add(new double[] {v, c});
          sum += v * c;
          count += c;
        }
        pairs.sort((a, b) -> Double.compare(a[0], b[0]));
        long rank = (long) Math.ceil(0.99 * count);
        double p99 = Double.NaN;
        long seen = 0;
        for (double[] p : pairs) {
          seen += (long) p[1];
          if (seen >= rank) {
            p99 = p[0];
            break;
          }
        }
        out.add(new double[] {sum / count, p99});
      }
    }
    return out;
  }

  private static double num(Object o) {
    return o instanceof Number n ? n.doubleValue() : Double.parseDouble(String.valueOf(o));
  }
}
