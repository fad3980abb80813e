package io.github.resilienthttp.bench;

import io.github.resilienthttp.ResilientHttpClient;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;

/**
 * Which stacks share the JVM, and in which order they are first run: the guard's GET table
 * ({@link CallerOverhead#stacks}) with only the named callers, in the order given. One JVM per run;
 * BENCHMARKS.md's twelfth run starts many and compares them.
 *
 * <pre>
 * java -Xms1g -Xmx1g -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.StackMix callers [rounds] [calls per round]
 * </pre>
 *
 * <p>{@code callers} is letters: {@code o} raw OkHttp, {@code s} the SDK stack, {@code f} Failsafe's
 * stack, {@code r} resilience4j's stack, {@code R} resilience4j's {@code Retry} alone, {@code c} raw
 * OkHttp on a second client configured as the SDK configures its own (an event listener, a network
 * interceptor, no silent retries, no call timeout, a tag on each call) with no SDK code. The last line
 * printed, {@code RESULT callers=… s=+… r=+…}, gives each caller's CPU per call over the first
 * caller's, in nanoseconds on the calling thread (the first's is {@code +0.0}).
 *
 * <p>{@code callers} {@code after:X} measures what caller {@code X} does to raw OkHttp's own cost
 * in the same JVM: raw OkHttp alone for {@code rounds} rounds, then {@code rounds} more in which
 * each round of raw OkHttp follows a round of {@code X}. It prints {@code PHASE after:X raw alone
 * …, with it …, delta …}: raw OkHttp's CPU per call, median of each phase's rounds after its first
 * quarter.
 *
 * <p>Prefixed with {@code hooks:} ({@code hooks:sr}, {@code hooks:after:s}), every caller runs on
 * an application client that already has an event listener (counting starts and ends, as a
 * metrics listener does) and a network interceptor, instead of OkHttp's defaults.
 *
 * <p>Prefixed with {@code wire:} ({@code wire:osr}, {@code wire:hooks:after:s}), every call runs
 * over a {@link MemoryWire}: OkHttp's whole call, its network half included, answered in the JVM,
 * instead of being answered by an application interceptor before the network half.
 *
 * <p>Prefixed with {@code post:} ({@code post:osr}, after {@code wire:} too: {@code wire:post:osr}),
 * the callers measure the guard's keyed POST table (a new key per call in every stack) instead of
 * GET.
 */
public final class StackMix {
  /** The prefix of {@code callers} that gives the application's client hooks of its own. */
  private static final String APP_HOOKS = "hooks:";

  /** The prefix of {@code callers} that runs every call over a {@link MemoryWire}. */
  private static final String MEMORY_WIRE = "wire:";

  /** The prefix of {@code callers} that measures the guard's keyed POST table instead of GET. */
  private static final String KEYED_POST = "post:";

  private StackMix() {}

  public static void main(String[] args) throws Throwable {
    boolean overWire = args[0].startsWith(MEMORY_WIRE);
    String spec = overWire ? args[0].substring(MEMORY_WIRE.length()) : args[0];
    boolean post = spec.startsWith(KEYED_POST);
    spec = post ? spec.substring(KEYED_POST.length()) : spec;
    String method = post ? "POST" : "GET";
    boolean appHooks = spec.startsWith(APP_HOOKS);
    String letters = appHooks ? spec.substring(APP_HOOKS.length()) : spec;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 40;
    int calls = args.length > 2 ? Integer.parseInt(args[2]) : 100_000;
    SuccessPath s = overWire
        ? CallerOverhead.overMemoryWire(method) : CallerOverhead.withoutNetwork(method);
    if (appHooks) {
      withApplicationHooks(s);
    }
    try {
      if (letters.startsWith("after:")) {
        if (letters.length() != "after:X".length()) {
          throw new IllegalArgumentException(letters + ": after: takes one caller letter");
        }
        after(s, letters, caller(s, letters.charAt(letters.length() - 1)).getValue(), rounds, calls);
        if (overWire) {
          checkOneConnection(s);
        }
        return;
      }
      Map<String, InterleavedLatency.Call> callers = new LinkedHashMap<>();
      for (char c : letters.toCharArray()) {
        Map.Entry<String, InterleavedLatency.Call> caller = caller(s, c);
        callers.put(caller.getKey(), caller.getValue());
      }
      if (callers.size() != letters.length()) {
        throw new IllegalArgumentException("callers " + letters + ": each letter once");
      }
      Map<String, CallerOverhead.Added> added = CallerOverhead.table(method + ", callers " + letters
          + " in one JVM (" + (overWire ? "memory wire" : "no network") + ", 1 thread)",
          callers, rounds, calls);
      StringBuilder result = new StringBuilder("RESULT callers=" + letters);
      int i = 0;
      for (CallerOverhead.Added a : added.values()) {
        result.append(String.format(Locale.ROOT, " %c=%+.1f", letters.charAt(i++), a.cpuNanos()));
      }
      System.out.println(result);
      if (overWire) {
        checkOneConnection(s);
      }
    } finally {
      s.tearDown();
    }
  }

  /**
   * Fails the run if the memory wire made more than one connection: every call of this one-thread
   * run should reuse OkHttp's pooled connection, and a row that also paid for a connection's
   * set-up would not compare calls alone.
   */
  private static void checkOneConnection(SuccessPath s) {
    int sockets = ((MemoryWire) s.okHttp.socketFactory()).socketsCreated();
    System.out.println("memory wire: " + sockets + " connection(s)");
    if (sockets != 1) {
      throw new IllegalStateException("the memory wire made " + sockets
          + " connections; one thread's calls should all reuse one");
    }
  }

  /**
   * Gives the application's own client, under every caller, the hooks a production client often has
   * (a metrics event listener, a network interceptor), and rebuilds the stacks on it.
   */
  private static void withApplicationHooks(SuccessPath s) {
    LongAdder started = new LongAdder();
    LongAdder ended = new LongAdder();
    EventListener metrics = new EventListener() {
      @Override
      public void callStart(Call call) {
        started.increment();
      }

      @Override
      public void callEnd(Call call) {
        ended.increment();
      }
    };
    s.okHttp = s.okHttp.newBuilder()
        .eventListenerFactory(call -> metrics)
        .addNetworkInterceptor(chain -> chain.proceed(chain.request()))
        .build();
    s.sdk = ResilientHttpClient.wrap(s.okHttp).build();
    s.rebuildStacks();
  }

  private static Map.Entry<String, InterleavedLatency.Call> caller(SuccessPath s, char c) {
    return switch (c) {
      case 'o' -> Map.entry(CallerOverhead.RAW, s::rawOkHttpCall);
      case 's' -> Map.entry(CallerOverhead.SDK_STACK, s::sdkWithBulkheadCall);
      case 'f' -> Map.entry(CallerOverhead.FAILSAFE_STACK,
          "POST".equals(s.method) ? s::failsafeStackWithNewKeyCall : s::failsafeStackCall);
      case 'r' -> Map.entry(CallerOverhead.R4J_STACK,
          "POST".equals(s.method) ? s::resilience4jStackWithNewKeyCall : s::resilience4jStackCall);
      case 'R' -> Map.entry("resilience4j `Retry` alone", s::resilience4jRetryCall);
      case 'c' -> Map.entry("OkHttp on a client configured like the SDK's", likeTheSdks(s));
      default -> throw new IllegalArgumentException("caller '" + c + "': one of o, s, f, r, R, c");
    };
  }

  /** Plain OkHttp calls on a client with the kinds of hooks the SDK's own client carries. */
  private static InterleavedLatency.Call likeTheSdks(SuccessPath s) {
    OkHttpClient client = s.okHttp.newBuilder()
        .eventListenerFactory(call -> new EventListener() {
          @Override
          public void callEnd(Call call) {}
        })
        .addNetworkInterceptor(chain -> chain.proceed(chain.request()))
        .retryOnConnectionFailure(false)
        .callTimeout(Duration.ZERO)
        .build();
    KClass<Marker> tag = JvmClassMappingKt.getKotlinClass(Marker.class);
    Marker marker = new Marker();
    return () -> {
      Call call = client.newCall(s.request);
      call.tag(tag, marker);
      return SuccessPath.consume(call.execute());
    };
  }

  /** A call tag, as the SDK's attempt tag: its own value, computed if absent. */
  private static final class Marker implements Function0<Marker> {
    @Override
    public Marker invoke() {
      return this;
    }
  }

  private static void after(SuccessPath s, String name, InterleavedLatency.Call other, int rounds,
      int calls) throws Throwable {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    double[] alone = new double[rounds];
    double[] with = new double[rounds];
    for (int r = 0; r < 2 * rounds; r++) {
      if (r >= rounds) {
        for (int k = 0; k < calls; k++) {
          other.run();
        }
      }
      long t0 = mx.getCurrentThreadCpuTime();
      for (int k = 0; k < calls; k++) {
        s.rawOkHttpCall();
      }
      double perCall = (mx.getCurrentThreadCpuTime() - t0) / (double) calls;
      if (r < rounds) {
        alone[r] = perCall;
      } else {
        with[r - rounds] = perCall;
      }
    }
    int skip = rounds / 4;
    double a = InterleavedLatency.median(Arrays.copyOfRange(alone, skip, rounds));
    double w = InterleavedLatency.median(Arrays.copyOfRange(with, skip, rounds));
    System.out.printf(Locale.ROOT, "PHASE %s raw alone %.1f, with it %.1f, delta %+.1f%n", name, a,
        w, w - a);
  }
}
