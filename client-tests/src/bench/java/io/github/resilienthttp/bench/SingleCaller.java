package io.github.resilienthttp.bench;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Locale;

/**
 * One caller of {@link SuccessPath} alone in its JVM, without the network, for a fixed time: the
 * calling thread's CPU per call, and what the garbage collector did meanwhile (collections and
 * their accumulated time, from the JVM's collector beans). One caller per JVM, as in
 * {@link AllocationInventory}, so no other caller's profile changes what the JIT compiles; and a
 * cost another thread or the collector pays for the caller shows here, which the calling thread's
 * CPU does not.
 *
 * <pre>
 * java -Xms1g -Xmx1g -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.SingleCaller \
 *   GET|POST raw|sdk|r4j|failsafe [seconds, default 10]
 * </pre>
 *
 * <p>Warms up with 2,000,000 calls first. Compare callers on the same heap size: the collector's
 * figures depend on it.
 */
public final class SingleCaller {
  private SingleCaller() {}

  public static void main(String[] args) throws Throwable {
    String method = args[0];
    String name = args[1];
    long seconds = args.length > 2 ? Long.parseLong(args[2]) : 10;
    SuccessPath s = CallerOverhead.withoutNetwork(method);
    try {
      InterleavedLatency.Call call = warmedCaller(s, name);
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      List<GarbageCollectorMXBean> collectors = ManagementFactory.getGarbageCollectorMXBeans();
      long[] gcBefore = gc(collectors);
      long cpuBefore = threads.getCurrentThreadCpuTime();
      long calls = runFor(call, seconds * 1_000_000_000L);
      long cpu = threads.getCurrentThreadCpuTime() - cpuBefore;
      long[] gcAfter = gc(collectors);
      long collections = gcAfter[0] - gcBefore[0];
      long gcMillis = gcAfter[1] - gcBefore[1];
      System.out.printf(Locale.ROOT,
          "%s %s: %d calls in %d s; calling thread %.1f CPU ns/call; %d collections, %d ms"
              + " (%.2f ns/call)%n",
          method, name, calls, seconds, (double) cpu / calls, collections, gcMillis,
          gcMillis * 1e6 / calls);
    } finally {
      s.tearDown();
    }
  }

  /** The caller {@code name} of {@code s}, after 2,000,000 calls on this thread. */
  static InterleavedLatency.Call warmedCaller(SuccessPath s, String name) throws Throwable {
    InterleavedLatency.Call call = AllocationInventory.caller(s, name);
    for (int i = 0; i < 2_000_000; i++) {
      call.run();
    }
    return call;
  }

  /** Calls {@code call} on this thread in batches of 10,000 for about {@code nanos}; the calls. */
  static long runFor(InterleavedLatency.Call call, long nanos) throws Throwable {
    long end = System.nanoTime() + nanos;
    long calls = 0;
    while (System.nanoTime() - end < 0) {
      for (int i = 0; i < 10_000; i++) {
        call.run();
      }
      calls += 10_000;
    }
    return calls;
  }

  /** Collections and their accumulated time in ms, summed over the JVM's collectors. */
  private static long[] gc(List<GarbageCollectorMXBean> collectors) {
    long count = 0;
    long millis = 0;
    for (GarbageCollectorMXBean c : collectors) {
      count += Math.max(0, c.getCollectionCount());
      millis += Math.max(0, c.getCollectionTime());
    }
    return new long[] {count, millis};
  }
}
