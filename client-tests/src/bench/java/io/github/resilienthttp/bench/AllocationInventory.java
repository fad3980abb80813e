package io.github.resilienthttp.bench;

import io.github.resilienthttp.ResilientHttpClient;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * What one caller of {@link SuccessPath} allocates per call, <em>by class</em>: the objects a call
 * leaves on the heap, counted exactly. Run it with Epsilon, the GC that never collects, so that
 * every object a call allocated is still on the heap; a class histogram of all objects
 * ({@code GC.class_histogram -all}) is taken after the warm-up and after the measured calls, and
 * the difference divided by the calls is the inventory. Objects the JIT's escape analysis
 * scalar-replaced are not on the heap and so not counted, as in {@link CallerOverhead}. One caller
 * per JVM, so no other caller's profile changes what the JIT compiles.
 *
 * <pre>
 * java -XX:+UnlockExperimentalVMOptions -XX:+UseEpsilonGC -Xms3g -Xmx3g \
 *   -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.AllocationInventory \
 *   GET|POST raw|sdk|r4j|failsafe [nonet|wire|loopback] [warm-up calls] [measured calls]
 * </pre>
 *
 * <p>{@code nonet} (the default) answers every request in the client's last application
 * interceptor, as {@link CallerOverhead} does; {@code wire} runs OkHttp's whole call over a
 * {@link MemoryWire} (the network half included, no socket); {@code loopback} sends it to a
 * {@link LoopbackHttpServer}. The heap must hold every call's objects: about 1.5 KB per call
 * without the network, 9 KB over the memory wire or on loopback (the defaults, 600,000 + 100,000
 * calls, fit in 3 GB without the network; use 100,000 + 50,000 and 6 GB over the wire or on
 * loopback).
 *
 * <p>Reading it: compare stacks by their own classes, or over several JVMs each. A JVM's total
 * also carries its JIT's choices in shared code (over the wire, OkHttp's {@code Arrays$ArrayList}
 * is 2 or 9 per call, 48 or 216 B, by JVM, in every stack) and, in the {@code int[]} row, the
 * filler the JVM writes at the end of each thread's allocation buffer. {@code -XX:-UseTLAB} removes
 * the filler but also changes what escape analysis keeps (OkHttp's {@code Response$Builder}: 6 per
 * call with the buffers, 1 or 2 without), so it is not used (BENCHMARKS.md, "Seventeenth run").
 */
public final class AllocationInventory {
  private static final Pattern ROW = Pattern.compile("\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+).*");

  private AllocationInventory() {}

  public static void main(String[] args) throws Throwable {
    String method = args[0];
    String caller = args[1];
    String where = args.length > 2 ? args[2] : "nonet";
    int warmUp = args.length > 3 ? Integer.parseInt(args[3]) : 600_000;
    int calls = args.length > 4 ? Integer.parseInt(args[4]) : 100_000;
    SuccessPath s;
    switch (where) {
      case "nonet" -> s = CallerOverhead.withoutNetwork(method);
      case "wire" -> s = CallerOverhead.overMemoryWire(method);
      case "loopback" -> {
        s = new SuccessPathLatencyBenchmark();
        s.method = method;
        s.setUp();
      }
      default -> throw new IllegalArgumentException(
          "where '" + where + "': one of nonet, wire, loopback");
    }
    InterleavedLatency.Call call = caller(s, caller);
    try {
      for (int i = 0; i < warmUp; i++) {
        call.run();
      }
      // Parsed after both are taken, so that parsing the first is not counted as the calls'.
      String before = histogram();
      for (int i = 0; i < calls; i++) {
        call.run();
      }
      String after = histogram();
      String label = switch (where) {
        case "wire" -> "memory wire";
        case "loopback" -> "loopback";
        default -> "no network";
      };
      print(method + " " + caller + " (" + label + ")", before, after, calls);
    } finally {
      s.tearDown();
    }
  }

  /**
   * One of {@link SuccessPath}'s like-for-like callers by name: {@code raw}, {@code sdk} (with a
   * bulkhead), {@code r4j} or {@code failsafe} (their stacks; a new key per POST); or a stack
   * without some of its parts, to see what each part costs: {@code sdk-nobulkhead} (the SDK's
   * defaults), {@code sdk-nobreaker} ({@code noCircuitBreaker()}, the bulkhead kept),
   * {@code sdk-bare} (neither), {@code r4j-nobulkhead} (retry and breaker), {@code r4j-nobreaker}
   * (retry and bulkhead) and {@code r4j-retry} (retry alone). Call it after the client's last
   * change: the partial SDK clients are built on {@code s.okHttp} here.
   */
  static InterleavedLatency.Call caller(SuccessPath s, String caller) {
    boolean post = "POST".equals(s.method);
    return switch (caller) {
      case "raw" -> s::rawOkHttpCall;
      case "sdk" -> s::sdkWithBulkheadCall;
      case "r4j" -> post ? s::resilience4jStackWithNewKeyCall : s::resilience4jStackCall;
      case "failsafe" -> post ? s::failsafeStackWithNewKeyCall : s::failsafeStackCall;
      case "sdk-nobulkhead" -> sdk(s, ResilientHttpClient.wrap(s.okHttp));
      case "sdk-nobreaker" ->
          sdk(s, ResilientHttpClient.wrap(s.okHttp).bulkhead(SuccessPath.stackBulkhead())
              .noCircuitBreaker());
      case "sdk-bare" -> sdk(s, ResilientHttpClient.wrap(s.okHttp).noCircuitBreaker());
      case "r4j-nobulkhead" -> () -> s.resilience4jPartCall(true);
      case "r4j-nobreaker" -> () -> s.resilience4jPartCall(false);
      case "r4j-retry" -> s::resilience4jRetryCall;
      default -> throw new IllegalArgumentException("caller must be raw, sdk, r4j, failsafe,"
          + " sdk-nobulkhead, sdk-nobreaker, sdk-bare, r4j-nobulkhead, r4j-nobreaker or r4j-retry: "
          + caller);
    };
  }

  private static InterleavedLatency.Call sdk(SuccessPath s, ResilientHttpClient.Builder builder) {
    ResilientHttpClient client = builder.build();
    return () -> SuccessPath.consume(client.operation(s.request).execute());
  }

  private static void print(String title, String beforeText, String afterText, int calls) {
    Map<String, long[]> before = byClass(beforeText);
    Map<String, long[]> after = byClass(afterText);
    record Row(String type, double count, double bytes) {}
    List<Row> rows = new ArrayList<>();
    double total = 0;
    for (Map.Entry<String, long[]> e : after.entrySet()) {
      long[] b = before.getOrDefault(e.getKey(), new long[2]);
      double bytes = (e.getValue()[1] - b[1]) / (double) calls;
      if (bytes >= 0.5) {
        rows.add(new Row(e.getKey(), (e.getValue()[0] - b[0]) / (double) calls, bytes));
        total += bytes;
      }
    }
    rows.sort((x, y) -> Double.compare(y.bytes(), x.bytes()));
    System.out.printf(Locale.ROOT, "#### Objects per call: %s, %d calls%n%n", title, calls);
    System.out.println("| class | objects/call | B/call |");
    System.out.println("|---|---:|---:|");
    for (Row r : rows) {
      System.out.printf(Locale.ROOT, "| `%s` | %.2f | %.1f |%n", r.type(), r.count(), r.bytes());
    }
    System.out.printf(Locale.ROOT, "| total | | %.1f |%n", total);
  }

  /** The class histogram of every object on the heap (reachable or not), as text. */
  private static String histogram() throws Exception {
    return (String) ManagementFactory.getPlatformMBeanServer().invoke(
        new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
        new Object[] {new String[] {"-all"}}, new String[] {String[].class.getName()});
  }

  /** Instances and bytes by class, from a class histogram's text. */
  private static Map<String, long[]> byClass(String text) {
    Map<String, long[]> byClass = new HashMap<>();
    for (String line : text.split("\n")) {
      Matcher m = ROW.matcher(line);
      if (m.matches()) {
        // Lambda classes are numbered per JVM: one name for all of a class's lambdas.
        String type = m.group(3).replaceAll("\\$\\$Lambda\\$\\d+/0x\\p{XDigit}+", "\\$\\$Lambda");
        long[] v = byClass.computeIfAbsent(type, k -> new long[2]);
        v[0] += Long.parseLong(m.group(1));
        v[1] += Long.parseLong(m.group(2));
      }
    }
    return byClass;
  }
}
