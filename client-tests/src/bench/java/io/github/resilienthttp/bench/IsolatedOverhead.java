package io.github.resilienthttp.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The like-for-like stacks' added cost without the network, each caller alone in a JVM of its own,
 * in paired rounds: what {@link OverheadGuard} measures in one shared JVM, with JMH's isolation.
 * In a shared JVM the JIT profiles OkHttp's code (the call, its chain, its listener) over every
 * caller at once, so one stack's shape changes what is compiled for another; a JVM per caller
 * removes that, and pairing (every caller once per round, in a rotated order, raw OkHttp in the
 * same round) keeps a busier or quieter minute of the shared machine from moving one caller alone.
 *
 * <p>Each child JVM ({@code -Xms1g -Xmx1g}) warms its caller on the calling thread with 2,000,000
 * calls, then in 1 s passes until one compiles for under {@value #QUIET_JIT_MILLIS} ms (at most
 * {@value #MAX_WARMUP_SECONDS} s more), then measures the calling thread's CPU and allocated bytes
 * per call over the given seconds, and how long the JIT compiled meanwhile.
 *
 * <pre>
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.IsolatedOverhead \
 *   [GET|POST, default GET] [rounds, default 10] [seconds per caller, default 8]
 * </pre>
 *
 * <p>Prints each round (raw OkHttp's CPU per call, each stack's added CPU over it, and the JIT's
 * time in each measurement), the medians of CPU, added CPU and added bytes per call, and the SDK's
 * gap to the lighter peer stack per round: its median, a bootstrap 95 % interval of that median,
 * and in how many rounds the SDK was at or under the lighter stack.
 */
public final class IsolatedOverhead {
  static final long QUIET_JIT_MILLIS = 10;
  static final int MAX_WARMUP_SECONDS = 30;
  private static final String[] CALLERS = {"raw", "sdk", "r4j", "failsafe"};
  private static final String RESULT = "RESULT ";

  private IsolatedOverhead() {}

  public static void main(String[] args) throws Throwable {
    if (args.length > 0 && args[0].equals("child")) {
      child(args[1], args[2], Long.parseLong(args[3]));
      return;
    }
    String method = args.length > 0 ? args[0] : "GET";
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    long seconds = args.length > 2 ? Long.parseLong(args[2]) : 8;
    System.out.printf(Locale.ROOT, "Isolated overhead (%s, no network): %d rounds, one JVM per"
        + " caller per round (-Xms1g -Xmx1g), %d s measured each, order rotated per round%n%n",
        method, rounds, seconds);
    double[][] cpu = new double[CALLERS.length][rounds];
    double[][] bytes = new double[CALLERS.length][rounds];
    long[][] jit = new long[CALLERS.length][rounds];
    System.out.println("| round | raw OkHttp ns/call | SDK stack + ns | r4j stack + ns"
        + " | Failsafe stack + ns | SDK - lighter, ns"
        + " | JIT ms measured (raw, SDK, r4j, Failsafe) |");
    System.out.println("|---:|---:|---:|---:|---:|---:|---|");
    double[] gaps = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      for (int k = 0; k < CALLERS.length; k++) {
        int i = (k + r) % CALLERS.length;
        double[] m = runChild(method, CALLERS[i], seconds);
        cpu[i][r] = m[0];
        bytes[i][r] = m[1];
        jit[i][r] = (long) m[2];
      }
      gaps[r] = (cpu[1][r] - cpu[0][r])
          - Math.min(cpu[2][r] - cpu[0][r], cpu[3][r] - cpu[0][r]);
      System.out.printf(Locale.ROOT,
          "| %d | %.1f | %+.1f | %+.1f | %+.1f | %+.1f | %d, %d, %d, %d |%n", r + 1, cpu[0][r],
          cpu[1][r] - cpu[0][r], cpu[2][r] - cpu[0][r], cpu[3][r] - cpu[0][r], gaps[r],
          jit[0][r], jit[1][r], jit[2][r], jit[3][r]);
    }
    System.out.println();
    System.out.println("| caller | median ns/call | median added ns | median added B/call |");
    System.out.println("|---|---:|---:|---:|");
    String[] names = {"raw OkHttp", "SDK stack", "resilience4j stack", "Failsafe stack"};
    for (int i = 0; i < CALLERS.length; i++) {
      double[] added = new double[rounds];
      double[] addedBytes = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        added[r] = cpu[i][r] - cpu[0][r];
        addedBytes[r] = bytes[i][r] - bytes[0][r];
      }
      System.out.printf(Locale.ROOT, "| %s | %.1f | %+.1f | %+.0f |%n", names[i],
          InterleavedLatency.median(cpu[i]), InterleavedLatency.median(added),
          InterleavedLatency.median(addedBytes));
    }
    int atOrUnder = 0;
    for (double g : gaps) {
      if (g <= 0) {
        atOrUnder++;
      }
    }
    Random boot = new Random(20_261_203L);
    System.out.printf(Locale.ROOT, "%nSDK stack - lighter peer stack, per round: median %+.1f ns"
        + " [95 %% bootstrap interval %+.1f, %+.1f]; at or under it in %d of %d rounds%n",
        InterleavedLatency.median(gaps), InterleavedLatency.bootstrapMedian(gaps, boot, 0.025),
        InterleavedLatency.bootstrapMedian(gaps, boot, 0.975), atOrUnder, rounds);
  }

  /** Runs one caller in a JVM of its own: CPU ns per call, bytes per call, JIT ms measured. */
  private static double[] runChild(String method, String caller, long seconds)
      throws IOException, InterruptedException {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-Xms1g", "-Xmx1g", "-cp",
        System.getProperty("java.class.path"), IsolatedOverhead.class.getName(), "child", method,
        caller, Long.toString(seconds)));
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String result = null;
    try (BufferedReader out = new BufferedReader(
        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        if (line.startsWith(RESULT)) {
          result = line.substring(RESULT.length());
        }
      }
    }
    int status = p.waitFor();
    if (status != 0 || result == null) {
      // Its standard error is discarded (the benchmarks' SLF4J warns once per JVM): run it by hand
      // to see why it failed.
      throw new IllegalStateException(caller + ": the child JVM exited with " + status
          + (result == null ? " and no result" : "") + "; its command: "
          + String.join(" ", command));
    }
    String[] f = result.trim().split(" ");
    return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]),
        Double.parseDouble(f[2])};
  }

  /** The child: one caller, warmed until the JIT is quiet, measured on the calling thread. */
  private static void child(String method, String caller, long seconds) throws Throwable {
    SuccessPath s = CallerOverhead.withoutNetwork(method);
    try {
      InterleavedLatency.Call call = SingleCaller.warmedCaller(s, caller);
      CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
      long warmEnd = System.nanoTime() + MAX_WARMUP_SECONDS * 1_000_000_000L;
      while (System.nanoTime() - warmEnd < 0) {
        long compiling = jit.getTotalCompilationTime();
        SingleCaller.runFor(call, 1_000_000_000L);
        if (jit.getTotalCompilationTime() - compiling < QUIET_JIT_MILLIS) {
          break;
        }
      }
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      long jitBefore = jit.getTotalCompilationTime();
      long bytesBefore = threads.getCurrentThreadAllocatedBytes();
      long cpuBefore = threads.getCurrentThreadCpuTime();
      long calls = SingleCaller.runFor(call, seconds * 1_000_000_000L);
      long cpu = threads.getCurrentThreadCpuTime() - cpuBefore;
      long allocated = threads.getCurrentThreadAllocatedBytes() - bytesBefore;
      long jitMillis = jit.getTotalCompilationTime() - jitBefore;
      System.out.printf(Locale.ROOT, "%s%.2f %.2f %d%n", RESULT, (double) cpu / calls,
          (double) allocated / calls, jitMillis);
    } finally {
      s.tearDown();
    }
  }
}
