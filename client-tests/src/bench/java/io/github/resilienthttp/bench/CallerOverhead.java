package io.github.resilienthttp.bench;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * What each caller of {@link SuccessPath} adds to a call, <em>without the network</em>: the CPU time
 * and the bytes allocated by the calling thread per call, over raw OkHttp. The wrapped client's last
 * application interceptor answers every request at once with the same {@code 200}, so nothing but
 * the callers' own code differs between the rows, and the loopback round trip (about 50 µs, and
 * noisy) does not hide a few hundred nanoseconds. Allocation is counted with
 * {@link ThreadMXBean#getThreadAllocatedBytes(long)} on the calling thread only, so it is exact up
 * to the JIT's escape analysis. CPU is the calling thread's, and also that of all Java threads
 * (which counts the work a caller hands to other threads, such as OkHttp's call timeout waking
 * Okio's watchdog thread; a little noisier). OkHttp's network half is not reached here, so neither
 * is what a stack does per network request (the SDK's network interceptor, one more
 * {@code RealInterceptorChain} of 112 B, and its "sent" event); {@link #overMemoryWire} runs the
 * whole call without a socket ({@code StackMix wire:…}, {@code AllocationInventory … wire};
 * BENCHMARKS.md's sixteenth run).
 *
 * <pre>
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.CallerOverhead [rounds] [calls per round]
 * </pre>
 */
public final class CallerOverhead {
  /** The body of the {@code 200} that answers every call of the no-network and wire harnesses. */
  private static final String ANSWER = "{\"id\":\"pay_1\",\"status\":\"succeeded\"}";

  private static volatile Object published;

  private CallerOverhead() {}

  private static int publish(Object o) {
    published = o;
    return 0;
  }

  public static void main(String[] args) throws Throwable {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
    System.out.printf(Locale.ROOT, "No-network caller overhead: %d rounds x %d calls per caller, the"
        + " first 3 rounds warm-up; medians over the remaining rounds%n%n", rounds, calls);
    for (String method : new String[] {"GET", "POST"}) {
      measure(method, rounds, calls);
      stacks(method, rounds, calls);
      deadlineStacks(method, rounds, calls);
    }
    measureKeys(rounds, calls);
  }

  /**
   * The callers of {@link SuccessPath} for {@code method} (the same as the JMH run's), on a client
   * whose last application interceptor answers every request with the same {@code 200}: it never
   * reaches the network. The caller tears it down.
   */
  static SuccessPath withoutNetwork(String method) throws Throwable {
    byte[] body = ANSWER.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    MediaType json = MediaType.get("application/json");
    Interceptor answer = chain -> new Response.Builder().request(chain.request())
        .protocol(Protocol.HTTP_1_1).code(200).message("OK")
        .body(ResponseBody.create(body, json)).build();
    return onClient(method, b -> b.addInterceptor(answer));
  }

  /**
   * The callers of {@link SuccessPath} for {@code method} on a client whose sockets are a
   * {@link MemoryWire}: OkHttp runs the whole call, its network half included, and every request is
   * answered with the same {@code 200} that {@link #withoutNetwork} gives, without the kernel's
   * sockets or a server thread. What a stack does per network request (the SDK's network
   * interceptor and its "sent" event) is counted here and not there. The caller tears it down.
   */
  static SuccessPath overMemoryWire(String method) throws Throwable {
    byte[] body = ANSWER.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return onClient(method,
        b -> b.socketFactory(new MemoryWire("200 OK", "application/json", body)));
  }

  /** The callers of {@link SuccessPath} for {@code method}, every stack on the changed client. */
  private static SuccessPath onClient(String method,
      java.util.function.UnaryOperator<okhttp3.OkHttpClient.Builder> change) throws Throwable {
    SuccessPath s = new SuccessPathLatencyBenchmark();
    s.method = method;
    s.setUp();
    s.okHttp = change.apply(s.okHttp.newBuilder()).build();
    s.sdk = io.github.resilienthttp.ResilientHttpClient.wrap(s.okHttp).build();
    s.rebuildStacks();
    return s;
  }

  private static void measure(String method, int rounds, int calls) throws Throwable {
    SuccessPath s = withoutNetwork(method);
    try {
      Map<String, InterleavedLatency.Call> callers = new LinkedHashMap<>();
      callers.put("OkHttp `newCall().execute()`", s::rawOkHttpCall);
      callers.put("SDK `operation(req).execute()`", s::sdkSyncCall);
      callers.put("Failsafe `FailsafeCall...execute()`", s::failsafeCall);
      callers.put("resilience4j `Retry.decorateCheckedSupplier`", s::resilience4jCall);
      if ("POST".equals(method)) {
        // Like for like: a peer that retries a POST safely must add a key, as the SDK does.
        callers.put("Failsafe + key (`UUID.randomUUID()`, request copy)", s::failsafeWithNewKeyCall);
        callers.put("resilience4j + key (`UUID.randomUUID()`, request copy)",
            s::resilience4jWithNewKeyCall);
        callers.put("OkHttp + key (`UUID.randomUUID()`, request copy), no retries",
            s::rawOkHttpWithNewKeyCall);
      }
      table(method + " (no network, 1 thread)", callers, rounds, calls);

    } finally {
      s.tearDown();
    }
  }


  /** What making a key costs alone: the SDK's generator against {@code UUID.randomUUID()}. */
  private static void measureKeys(int rounds, int calls) throws Throwable {
    SuccessPath s = new SuccessPathLatencyBenchmark();
    s.method = "GET"; // a GET operation makes its key only when asked for it
    s.setUp();
    try {
      Map<String, InterleavedLatency.Call> callers = new LinkedHashMap<>();
      callers.put("nothing (the loop alone)", () -> 0);
      // Each result is published, so that the JIT cannot leave out what it allocates.
      callers.put("`UUID.randomUUID().toString()`", () -> publish(UUID.randomUUID().toString()));
      callers.put("SDK `client.operation(get)`", () -> publish(s.sdk.operation(s.request)));
      callers.put("SDK `client.operation(get).idempotencyKey()`",
          () -> {
            io.github.resilienthttp.Operation op = s.sdk.operation(s.request);
            publish(op);
            return publish(op.idempotencyKey());
          });
      table("Keys (no network, 1 thread): the last row minus the one before is the SDK's key",
          callers, rounds, calls);
    } finally {
      s.tearDown();
    }
  }

  /**
   * One caller's medians, each over raw OkHttp: the calling thread's CPU ns, all Java threads' CPU
   * ns (which counts what a caller makes other threads do, such as waking Okio's watchdog thread
   * for a call timeout) and the calling thread's allocated bytes per call.
   */
  record Added(double cpuNanos, double allThreadsCpuNanos, double bytes) {}

  /**
   * The like-for-like stacks of {@code method} (raw OkHttp first, then the SDK with a bulkhead and
   * the two peers' retry + breaker + bulkhead stacks), printed as a table.
   *
   * @return each caller's added cost over raw OkHttp, by name, in the table's order
   */
  static Map<String, Added> stacks(String method, int rounds, int calls) throws Throwable {
    SuccessPath s = withoutNetwork(method);
    try {
      boolean post = "POST".equals(method);
      Map<String, InterleavedLatency.Call> stacks = new LinkedHashMap<>();
      stacks.put(RAW, s::rawOkHttpCall);
      stacks.put(SDK_STACK, s::sdkWithBulkheadCall);
      stacks.put(FAILSAFE_STACK, post ? s::failsafeStackWithNewKeyCall : s::failsafeStackCall);
      stacks.put(R4J_STACK, post ? s::resilience4jStackWithNewKeyCall : s::resilience4jStackCall);
      return table(method + " like-for-like stacks (no network, 1 thread; POST: a new key per call in"
          + " every stack)", stacks, rounds, calls);
    } finally {
      s.tearDown();
    }
  }

  /**
   * The like-for-like stacks with a deadline, which the SDK always runs (30 s by default) and the
   * stacks above do not: OkHttp's own call timeout (Okio's {@code AsyncTimeout}, per call, so per
   * attempt, not over retries) on raw OkHttp and under resilience4j's stack, and Failsafe's
   * {@code Timeout} around its whole stack (over retries, cancelling the call when it fires: the
   * SDK's deadline). resilience4j's own {@code TimeLimiter} needs a future run on another thread,
   * which no blocking caller of OkHttp would add per call.
   */
  static Map<String, Added> deadlineStacks(String method, int rounds, int calls) throws Throwable {
    SuccessPath s = withoutNetwork(method);
    try {
      boolean post = "POST".equals(method);
      java.time.Duration deadline = java.time.Duration.ofSeconds(30);
      OkHttpClient timed = s.okHttp.newBuilder().callTimeout(deadline).build();
      dev.failsafe.FailsafeExecutor<Response> failsafeTimed =
          SuccessPath.newFailsafeStackWithTimeout(deadline);
      Map<String, InterleavedLatency.Call> stacks = new LinkedHashMap<>();
      stacks.put(RAW, s::rawOkHttpCall);
      stacks.put("OkHttp with `callTimeout(30 s)`",
          () -> SuccessPath.consume(timed.newCall(
              post ? SuccessPath.withNewKey(s.request) : s.request).execute()));
      stacks.put(SDK_STACK + ", its 30 s deadline", s::sdkWithBulkheadCall);
      stacks.put(FAILSAFE_STACK + " + `Timeout` (30 s)",
          () -> s.failsafeStackWithTimeoutCall(failsafeTimed,
              post ? SuccessPath.withNewKey(s.request) : s.request));
      stacks.put(R4J_STACK + ", client `callTimeout(30 s)`",
          () -> s.resilience4jStackCall(timed,
              post ? SuccessPath.withNewKey(s.request) : s.request));
      return table(method + " like-for-like stacks with a deadline (no network, 1 thread; POST: a new"
          + " key per call in every row but the first)", stacks, rounds, calls);
    } finally {
      s.tearDown();
    }
  }

  static final String RAW = "OkHttp `newCall().execute()`";
  static final String SDK_STACK = "SDK + bulkhead (`operation(req).execute()`)";
  static final String FAILSAFE_STACK = "Failsafe retry + breaker + bulkhead";
  static final String R4J_STACK = "resilience4j retry + breaker + bulkhead";

  /**
   * Prints one table of {@code callers}, measured in turn in each round, and returns each one's
   * cost over the first caller's (the first 3 rounds are warm-up; medians of the rest).
   */
  static Map<String, Added> table(String title, Map<String, InterleavedLatency.Call> callers,
      int rounds, int calls) throws Throwable {
    ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    int n = callers.size();
    double[][] cpu = new double[n][rounds];
    double[][] processCpu = new double[n][rounds];
    double[][] bytes = new double[n][rounds];
    for (int r = 0; r < rounds; r++) {
      int i = 0;
      for (InterleavedLatency.Call c : callers.values()) {
        long b0 = mx.getThreadAllocatedBytes(tid);
        long t0 = mx.getCurrentThreadCpuTime();
        long p0 = javaThreadsCpuTime(mx);
        for (int k = 0; k < calls; k++) {
          c.run();
        }
        cpu[i][r] = (mx.getCurrentThreadCpuTime() - t0) / (double) calls;
        processCpu[i][r] = (javaThreadsCpuTime(mx) - p0) / (double) calls;
        bytes[i][r] = (mx.getThreadAllocatedBytes(tid) - b0) / (double) calls;
        i++;
      }
    }
    System.out.println("#### " + title);
    System.out.println();
    System.out.println("| caller | CPU ns/call | added CPU ns/call | added all threads' CPU ns/call"
        + " | allocated B/call | added B/call |");
    System.out.println("|---|---:|---:|---:|---:|---:|");
    Map<String, Added> added = new LinkedHashMap<>();
    int i = 0;
    for (String name : callers.keySet()) {
      double c = medianAfterWarmup(cpu[i]);
      double b = medianAfterWarmup(bytes[i]);
      double p = medianAfterWarmup(processCpu[i]);
      double c0 = medianAfterWarmup(cpu[0]);
      double p0 = medianAfterWarmup(processCpu[0]);
      double b0 = medianAfterWarmup(bytes[0]);
      System.out.printf(Locale.ROOT, "| %s | %.0f | %s | %s | %.0f | %s |%n", name, c,
          i == 0 ? "—" : String.format(Locale.ROOT, "%+.0f", c - c0),
          i == 0 ? "—" : String.format(Locale.ROOT, "%+.0f", p - p0), b,
          i == 0 ? "—" : String.format(Locale.ROOT, "%+.0f", b - b0));
      added.put(name, new Added(c - c0, p - p0, b - b0));
      i++;
    }
    System.out.println();
    return added;
  }

  /**
   * The CPU time of every live Java thread, in nanoseconds: the caller's and what it hands to others
   * (Okio's watchdog thread, OkHttp's and the SDK's threads). The JIT's and the GC's threads are not
   * Java threads and are not counted.
   */
  private static long javaThreadsCpuTime(ThreadMXBean mx) {
    long sum = 0;
    for (long t : mx.getThreadCpuTime(mx.getAllThreadIds())) {
      if (t > 0) {
        sum += t;
      }
    }
    return sum;
  }

  private static double medianAfterWarmup(double[] perRound) {
    int warmup = Math.min(3, perRound.length - 1);
    return InterleavedLatency.median(java.util.Arrays.copyOfRange(perRound, warmup, perRound.length));
  }
}
