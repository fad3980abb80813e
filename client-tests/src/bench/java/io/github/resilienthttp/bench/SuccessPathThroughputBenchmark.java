package io.github.resilienthttp.bench;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Operations per millisecond on the healthy path with four caller threads sharing one client (on a
 * two-core machine the server's threads compete with them). See {@link SuccessPath}.
 *
 * <p>30 s of warm-up per fork: with 3 s, JMH's compiler profiler ({@code -prof comp}) counted 0.6
 * to 2.0 s of JIT compiling inside the 8 s measured on a 2-core machine, more for the heavier
 * stacks (BENCHMARKS.md, ninth run).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(2)
@Warmup(iterations = 15, time = 2)
@Measurement(iterations = 4, time = 2)
@Threads(4)
public class SuccessPathThroughputBenchmark extends SuccessPath {

  @Benchmark
  public int rawOkHttp() throws IOException {
    return rawOkHttpCall();
  }

  @Benchmark
  public int sdkSync() throws IOException {
    return sdkSyncCall();
  }

  @Benchmark
  public int sdkAsync() throws IOException, InterruptedException {
    return sdkAsyncCall();
  }

  @Benchmark
  public int failsafe() throws IOException {
    return failsafeCall();
  }

  @Benchmark
  public int resilience4j() throws Throwable {
    return resilience4jCall();
  }

  /** Like for like: the SDK with a bulkhead, see {@link SuccessPath}. */
  @Benchmark
  public int sdkStack() throws IOException {
    return sdkWithBulkheadCall();
  }

  /** Like for like: Failsafe retry + breaker + bulkhead (a new key per POST). */
  @Benchmark
  public int failsafeStack() throws IOException {
    return "POST".equals(method) ? failsafeStackWithNewKeyCall() : failsafeStackCall();
  }

  /** Like for like: resilience4j retry + breaker + bulkhead (a new key per POST). */
  @Benchmark
  public int resilience4jStack() throws Throwable {
    return "POST".equals(method) ? resilience4jStackWithNewKeyCall() : resilience4jStackCall();
  }
}
