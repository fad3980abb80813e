package io.github.resilienthttp.bench;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Locale;

/**
 * One caller of {@link SuccessPath} alone in its JVM, on the loopback network (the in-JVM
 * {@link LoopbackHttpServer}), on a number of caller threads for a fixed time: operations per
 * second and the whole process's CPU per operation (callers, OkHttp's threads, the server, the
 * collector and the JIT). Where {@link SingleCaller} shows the calling thread's CPU without the
 * network, this shows what a caller adds on the real path: network interceptors and event
 * listeners run only there. One caller per JVM, so no other caller's profile changes what the JIT
 * compiles; run callers alternately to pair them.
 *
 * <pre>
 * java -Xms1g -Xmx1g -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.LoopbackCaller \
 *   GET|POST raw|sdk|sdk-bare|r4j|... [threads, default 16] [seconds, default 10] [warm-up s, default 60]
 * </pre>
 *
 * <p>Warms up first until the JIT is quiet, at most for the warm-up time
 * ({@link ScalingThroughput#warmUntilJitQuiet}), and prints how long the JIT compiled while it
 * measured: from one JVM to the next, a run that still compiles moves by tens of percent.
 */
public final class LoopbackCaller {
  private LoopbackCaller() {}

  public static void main(String[] args) throws Throwable {
    String method = args[0];
    String name = args[1];
    int threads = args.length > 2 ? Integer.parseInt(args[2]) : 16;
    long seconds = args.length > 3 ? Long.parseLong(args[3]) : 10;
    long warmupSeconds = args.length > 4 ? Long.parseLong(args[4]) : 60;
    SuccessPath s = ScalingThroughput.loopback(method, threads);
    try {
      InterleavedLatency.Call call = AllocationInventory.caller(s, name);
      ScalingThroughput.warmUntilJitQuiet(List.of(call), threads, warmupSeconds * 1000);
      com.sun.management.OperatingSystemMXBean os =
          (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
      long[] switchesBefore = contextSwitches();
      java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
      long jitBefore = jit.getTotalCompilationTime();
      long gcBefore = gcMillis();
      long cpuBefore = os.getProcessCpuTime();
      long[] done = ScalingThroughput.run(call, threads, seconds * 1000);
      long calls = done[0];
      long elapsed = done[1];
      long cpu = os.getProcessCpuTime() - cpuBefore;
      long[] switchesAfter = contextSwitches();
      long jitMillis = jit.getTotalCompilationTime() - jitBefore;
      long gcMillis = gcMillis() - gcBefore;
      System.out.printf(Locale.ROOT,
          "%s %s, %d threads: %.0f ops/s; process %.0f CPU ns/op; context switches per op: %.2f"
              + " voluntary, %.2f involuntary; JIT %d ms, GC %d ms; %d connections accepted, %d"
              + " requests served%n",
          method, name, threads, calls * 1e9 / elapsed, (double) cpu / calls,
          (double) (switchesAfter[0] - switchesBefore[0]) / calls,
          (double) (switchesAfter[1] - switchesBefore[1]) / calls, jitMillis, gcMillis,
          s.server.acceptedCount(), s.server.requestCount());
    } finally {
      s.tearDown();
    }
  }

  /** The collectors' accumulated time so far, in ms. */
  private static long gcMillis() {
    long millis = 0;
    for (java.lang.management.GarbageCollectorMXBean c
        : ManagementFactory.getGarbageCollectorMXBeans()) {
      millis += Math.max(0, c.getCollectionTime());
    }
    return millis;
  }

  /**
   * The voluntary and involuntary context switches of this process's threads so far, from Linux's
   * {@code /proc/self/task/<tid>/status} (threads that ended are not counted); zeros elsewhere.
   */
  private static long[] contextSwitches() throws java.io.IOException {
    long[] sum = new long[2];
    java.nio.file.Path tasks = java.nio.file.Path.of("/proc/self/task");
    if (!java.nio.file.Files.isDirectory(tasks)) {
      return sum;
    }
    try (java.util.stream.Stream<java.nio.file.Path> all = java.nio.file.Files.list(tasks)) {
      for (java.nio.file.Path task : (Iterable<java.nio.file.Path>) all::iterator) {
        List<String> lines;
        try {
          lines = java.nio.file.Files.readAllLines(task.resolve("status"));
        } catch (java.io.IOException ended) {
          continue; // the thread ended meanwhile
        }
        for (String line : lines) {
          if (line.startsWith("voluntary_ctxt_switches:")) {
            sum[0] += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
          } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
            sum[1] += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
          }
        }
      }
    }
    return sum;
  }
}
