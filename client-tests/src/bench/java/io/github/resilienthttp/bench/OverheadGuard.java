package io.github.resilienthttp.bench;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The regression guard of the healthy path's cost, run by {@code mvn -Pbench verify} in this module
 * (and by hand): it measures {@link CallerOverhead#stacks the like-for-like stacks} without the
 * network, in one JVM, and fails (exit status 1) when
 *
 * <ul>
 *   <li>the SDK's added CPU per call is above the lighter peer stack's by more than
 *       {@value #CPU_TOLERANCE_PERCENT} % (the peers are measured in the same run, so a slower or
 *       busier machine moves both sides), or
 *   <li>the SDK's added bytes per call are above the lighter peer stack's, or above the recorded
 *       ceiling in {@code overhead-baseline.properties} (allocation is nearly exact and does not
 *       depend on the machine's speed), by more than {@value #BYTES_SLACK} bytes.
 * </ul>
 *
 * <pre>
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.OverheadGuard [rounds] [calls per round]
 * </pre>
 */
public final class OverheadGuard {
  static final int CPU_TOLERANCE_PERCENT = 10;
  static final int BYTES_SLACK = 16;

  private OverheadGuard() {}

  public static void main(String[] args) throws Throwable {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
    Properties baseline = baseline();
    List<String> failures = new ArrayList<>();
    for (String method : new String[] {"GET", "POST"}) {
      Map<String, CallerOverhead.Added> added = CallerOverhead.stacks(method, rounds, calls);
      CallerOverhead.Added sdk = added.get(CallerOverhead.SDK_STACK);
      CallerOverhead.Added failsafe = added.get(CallerOverhead.FAILSAFE_STACK);
      CallerOverhead.Added r4j = added.get(CallerOverhead.R4J_STACK);
      double lighterCpu = Math.min(failsafe.cpuNanos(), r4j.cpuNanos());
      double lighterBytes = Math.min(failsafe.bytes(), r4j.bytes());
      if (sdk.cpuNanos() > lighterCpu * (1 + CPU_TOLERANCE_PERCENT / 100.0)) {
        failures.add(String.format(Locale.ROOT, "%s: the SDK adds %.0f ns per call, the lighter peer"
            + " stack %.0f ns (+%d %% allowed)", method, sdk.cpuNanos(), lighterCpu, CPU_TOLERANCE_PERCENT));
      }
      if (sdk.bytes() > lighterBytes + BYTES_SLACK) {
        failures.add(String.format(Locale.ROOT, "%s: the SDK adds %.0f B per call, the lighter peer"
            + " stack %.0f B", method, sdk.bytes(), lighterBytes));
      }
      double ceiling = Double.parseDouble(baseline.getProperty(method + ".sdk.addedBytes"));
      if (sdk.bytes() > ceiling + BYTES_SLACK) {
        failures.add(String.format(Locale.ROOT, "%s: the SDK adds %.0f B per call, over the recorded"
            + " %.0f B (overhead-baseline.properties)", method, sdk.bytes(), ceiling));
      }
    }
    if (failures.isEmpty()) {
      System.out.println("OverheadGuard: within bounds");
      return;
    }
    failures.forEach(f -> System.out.println("OverheadGuard FAILED: " + f));
    System.exit(1);
  }

  private static Properties baseline() throws IOException {
    Properties p = new Properties();
    try (InputStream in = OverheadGuard.class.getResourceAsStream("/overhead-baseline.properties")) {
      if (in == null) {
        throw new IllegalStateException("overhead-baseline.properties is not on the class path");
      }
      p.load(in);
    }
    return p;
  }
}
