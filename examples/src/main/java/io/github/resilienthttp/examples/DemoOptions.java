package io.github.resilienthttp.examples;

import okhttp3.HttpUrl;

/**
 * The command line of {@link PaymentsDemo}.
 *
 * @param help print the usage and stop
 * @param operations operations to run
 * @param seed the seed of the embedded server's random faults
 * @param url a real server to run against instead of the embedded one, or {@code null}
 */
record DemoOptions(boolean help, int operations, long seed, HttpUrl url) {
  static final int DEFAULT_OPERATIONS = 300;
  static final int MAX_OPERATIONS = 10_000;
  static final long DEFAULT_SEED = 42;
  // A real server gets few operations by default, and never more than this many.
  static final int DEFAULT_URL_OPERATIONS = 10;
  static final int MAX_URL_OPERATIONS = 1000;

  static final String USAGE = """
      Usage: java -jar examples/target/resilient-http-demo.jar [--operations N] [--seed N]
             java -jar examples/target/resilient-http-demo.jar --url URL [--operations N]
             java -jar examples/target/resilient-http-demo.jar probe --help

      Creates payments (POST /payments, JSON body) against an embedded payments server that
      injects seeded faults: once through Resilient HTTP, once through a naive retry loop. Then
      prints what each client did and how many payments the server charged twice.
      Exit code: 0 when Resilient HTTP caused no duplicate charge, 1 otherwise, 2 for bad arguments.

        --operations N  payments per client: 1..10000, default 300
        --seed N        seed of the server's random faults, default 42
        --url URL       POST the payments to this http(s) URL instead, through Resilient HTTP
                        only, and print each outcome: 1..1000 operations, default 10. Each one
                        sends an Idempotency-Key; only a server that honours it is safe to retry.
        --help          print this help

      The probe command checks whether a server honours Idempotency-Key: see probe --help.
      """;

  /**
   * Parses {@code args}.
   *
   * @throws IllegalArgumentException with a message for the user when an argument is wrong
   */
  static DemoOptions parse(String... args) {
    boolean help = false;
    Integer operations = null;
    Long seed = null;
    HttpUrl url = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--help", "-h" -> help = true;
        case "--operations" -> operations = parseInt("--operations", valueOf(args, ++i));
        case "--seed" -> seed = parseLong("--seed", valueOf(args, ++i));
        case "--url" -> url = parseUrl(valueOf(args, ++i));
        default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
      }
    }
    if (url == null) {
      int n = operations != null ? operations : DEFAULT_OPERATIONS;
      checkRange("--operations", n, MAX_OPERATIONS);
      return new DemoOptions(help, n, seed != null ? seed : DEFAULT_SEED, null);
    }
    if (seed != null) {
      throw new IllegalArgumentException("--seed applies to the embedded server, not to --url");
    }
    int n = operations != null ? operations : DEFAULT_URL_OPERATIONS;
    checkRange("--operations", n, MAX_URL_OPERATIONS);
    return new DemoOptions(help, n, DEFAULT_SEED, url);
  }

  private static String valueOf(String[] args, int i) {
    if (i >= args.length) {
      throw new IllegalArgumentException(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  private static int parseInt(String option, String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a number but was '" + value + "'");
    }
  }

  private static long parseLong(String option, String value) {
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a number but was '" + value + "'");
    }
  }

  /** Only http and https: the demo sends real POSTs, so nothing else is worth guessing at. */
  private static HttpUrl parseUrl(String value) {
    HttpUrl url = HttpUrl.parse(value);
    if (url == null) {
      throw new IllegalArgumentException("--url must be an http:// or https:// URL but was '"
          + value + "'");
    }
    return url;
  }

  private static void checkRange(String option, int value, int max) {
    if (value < 1 || value > max) {
      throw new IllegalArgumentException(option + " must be in 1.." + max + " but was " + value);
    }
  }
}
