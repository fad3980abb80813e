package io.github.resilienthttp.examples;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.testkit.Effect;
import io.github.resilienthttp.testkit.FaultMix;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The main demo: creates payments against a payments server that fails about one request in three,
 * once through Resilient HTTP and once through a hand-written retry loop, then prints what each
 * client did and how many payments the server charged twice.
 *
 * <p>The server ({@link IdempotentTestServer}) stores the result of each request that carries an
 * {@code Idempotency-Key} and replays it for a retry with the same key. Among its faults is the one
 * that matters: it charges, then drops the connection before answering. A client retrying without a
 * key then charges the order twice; the SDK retries with the operation's key and gets the first
 * result back.
 *
 * <p>Run {@code java -jar examples/target/resilient-http-demo.jar --help} for the options. The
 * same jar's {@code probe} command ({@link ProbeCommand}) checks a server's idempotency instead.
 */
public final class PaymentsDemo {

  /** The server's faults, drawn per request from a seeded random: about 30% of requests fail. */
  static final FaultMix FAULTS = FaultMix.builder()
      .lostResponse(0.10)         // charged, then the connection dropped: the dangerous one
      .status503(0.08)
      .status429(0.01)            // Retry-After 0 or 1 s, and the SDK really waits: keep it rare
      .status500(0.05)
      .dropBeforeProcessing(0.05) // connection dropped, nothing charged
      .build();

  private static final MediaType JSON = MediaType.get("application/json");
  private static final Pattern ORDER_ID = Pattern.compile("\"order\":\"([^\"]+)\"");
  private static final String TABLE =
      "%-14s  %10s  %8s  %7s  %7s  %15s  %6s  %15s  %7s  %17s%n";
  private static final String COUNTS = "%-14s  %10s  %8s  %7s  %7s  %15s  %6s%n";

  private PaymentsDemo() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("probe")) {
      System.exit(ProbeCommand.run(java.util.Arrays.copyOfRange(args, 1, args.length),
          System.out, System.err));
      return;
    }
    DemoOptions options;
    try {
      options = DemoOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.err.print(DemoOptions.USAGE);
      System.exit(2);
      return;
    }
    if (options.help()) {
      System.out.print(DemoOptions.USAGE);
    } else if (options.url() != null) {
      System.exit(runAgainst(options.url(), options.operations(), System.out));
    } else {
      printHeading(options.operations(), options.seed(), System.out);
      DemoResult result = run(options.operations(), options.seed());
      printTable(result, System.out);
      // Usable as a smoke test: the SDK must never charge an order twice.
      System.exit(result.resilient().duplicateCharges() == 0 ? 0 : 1);
    }
  }

  /**
   * Runs {@code operations} payments through each client against a new embedded server whose
   * faults are seeded with {@code seed}. One payment at a time: the server draws one fault per
   * request in arrival order, so a sequential run gives the same table for the same seed.
   */
  public static DemoResult run(int operations, long seed) throws IOException, InterruptedException {
    try (IdempotentTestServer server = IdempotentTestServer.startDefault()) {
      HttpUrl url = server.url("/payments");
      server.randomFaults(seed, FAULTS);
      ClientRun resilient = runResilient(server, url, operations);
      // Same seed: the naive client meets the same faults in the same order of requests.
      server.reset().randomFaults(seed, FAULTS);
      ClientRun naive = runNaive(server, url, operations);
      return new DemoResult(operations, seed, resilient, naive);
    }
  }

  /**
   * The SDK client of the demo: the code to copy. The waits are tiny so that the demo takes
   * seconds; {@link RetryPolicy#defaults()} suits real services.
   */
  static ResilientHttpClient resilientClient(OkHttpClient okHttp, OperationListener listener) {
    return ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder()
            .maxAttempts(5)
            .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(5), Duration.ofMillis(100)))
            .deadline(Duration.ofSeconds(5))
            .maxRetryAfter(Duration.ofSeconds(2))
            .build())
        // The default budget allows about one retry per ten operations (plus 3 a second): right
        // for a healthy service, too few for this one, which fails 30% of requests on purpose.
        // One retry per two operations still caps the extra load of an outage at about 50%.
        .retryBudget(RetryBudget.tokenBucketBuilder().retryRatio(0.5).build())
        .addListener(listener)
        .build();
  }

  private static ClientRun runResilient(IdempotentTestServer server, HttpUrl url, int operations) {
    CountingListener counts = new CountingListener();
    OkHttpClient okHttp = new OkHttpClient();
    ResilientHttpClient client = resilientClient(okHttp, counts);
    try {
      for (int i = 1; i <= operations; i++) {
        createPayment(client, paymentRequest(url, i));
      }
    } finally {
      shutDown(okHttp);
    }
    return summarize("resilient-http", counts, server);
  }

  private static void createPayment(ResilientHttpClient client, Request request) {
    try (Response response = client.operation(request).execute()) {
      response.body().string(); // a real caller would read the new payment here
    } catch (OutcomeUnknownException e) {
      // The listener counted it. A real caller would store e.idempotencyKey() and later resume
      // this intent with it, so that the server can replay instead of charging again.
    } catch (IOException e) {
      // The listener counted it: the SDK gave up, and nothing was charged twice.
    }
  }

  private static ClientRun runNaive(IdempotentTestServer server, HttpUrl url, int operations)
      throws InterruptedException {
    OkHttpClient okHttp = new OkHttpClient(); // OkHttp's defaults, as most code has them
    NaiveRetryClient naive = new NaiveRetryClient(okHttp);
    try {
      for (int i = 1; i <= operations; i++) {
        naive.send(paymentRequest(url, i));
      }
    } finally {
      shutDown(okHttp);
    }
    return summarize("naive retry", naive, server);
  }

  /**
   * Against a real server: the SDK only, with its default policy and budget, to stay polite.
   *
   * @return the process's exit code: 0 when at least one operation got a 2xx answer, 1 when every
   *     operation failed (no 2xx), so that a script notices a wrong URL or a server that is down
   */
  static int runAgainst(HttpUrl url, int operations, PrintStream out) {
    int succeeded = 0;
    CountingListener counts = new CountingListener();
    OkHttpClient okHttp = new OkHttpClient();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).addListener(counts).build();
    out.printf("Resilient HTTP demo: %d \"create payment\" operations against %s%n",
        operations, url.redact());
    try {
      for (int i = 1; i <= operations; i++) {
        Operation operation = client.operation(paymentRequest(url, i));
        Attempted attempted = execute(operation);
        if (attempted.succeeded()) {
          succeeded++;
        }
        out.printf("%-10s %s%n", orderId(i), attempted.line());
      }
    } finally {
      shutDown(okHttp);
    }
    out.println();
    out.printf(COUNTS, "client", "operations", "attempts", "retries", "replays", "outcome-unknown",
        "failed");
    out.printf(COUNTS, "resilient-http", counts.operations(), counts.attempts(), counts.retries(),
        counts.replays(), counts.outcomeUnknown(), counts.failed());
    if (succeeded == 0) {
      out.printf("%nno operation succeeded (no 2xx answer): exit code 1%n");
      return 1;
    }
    return 0;
  }

  /** One operation's printed outcome, and whether it got a 2xx answer. */
  private record Attempted(boolean succeeded, String line) {}

  private static Attempted execute(Operation operation) {
    try (Response response = operation.execute()) {
      return new Attempted(response.isSuccessful(),
          "HTTP " + response.code() + " after " + attempts(operation.attempts()));
    } catch (OutcomeUnknownException e) {
      return new Attempted(false, "outcome unknown after " + attempts(e.attempts()) + " ("
          + e.reason() + "); the same intent can be resumed with Idempotency-Key "
          + e.idempotencyKey());
    } catch (IOException e) {
      return new Attempted(false, "failed: " + e.getMessage());
    }
  }

  private static String attempts(int n) {
    return n + (n == 1 ? " attempt" : " attempts");
  }

  /** A "create payment" request for order {@code n}: the order id is the business identity. */
  static Request paymentRequest(HttpUrl url, int n) {
    String json = "{\"order\":\"" + orderId(n) + "\",\"amount\":1000}";
    return new Request.Builder().url(url).post(RequestBody.create(json, JSON)).build();
  }

  private static String orderId(int n) {
    return "order-" + n;
  }

  /** The order a charge was for, read back from the request body the server recorded. */
  static String orderId(Effect charge) {
    Matcher m = ORDER_ID.matcher(charge.body());
    return m.find() ? m.group(1) : charge.body();
  }

  private static ClientRun summarize(String client, ClientCounts counts,
      IdempotentTestServer server) {
    return new ClientRun(client, counts.operations(), counts.succeeded(), counts.attempts(),
        counts.retries(), counts.replays(), counts.outcomeUnknown(), counts.failed(),
        server.stats().requests(), server.stats().effects(),
        server.duplicateEffects(PaymentsDemo::orderId));
  }

  /** Closes the client's idle connections and threads: the caller owns an OkHttpClient. */
  private static void shutDown(OkHttpClient okHttp) {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  // ---------------------------------------------------------------- the output

  static void printHeading(int operations, long seed, PrintStream out) {
    out.printf("Resilient HTTP demo: %d \"create payment\" operations against a faulty payments"
        + " server (seed %d)%n", operations, seed);
    out.printf("faults per request: %.0f%% response lost after the charge, %.0f%% 503, %.0f%% 429,"
        + " %.0f%% 500, %.0f%% connection dropped before the charge%n%n",
        100 * FAULTS.lostResponse(), 100 * FAULTS.status503(), 100 * FAULTS.status429(),
        100 * FAULTS.status500(), 100 * FAULTS.dropBeforeProcessing());
  }

  static void printTable(DemoResult result, PrintStream out) {
    out.printf(TABLE, "client", "operations", "attempts", "retries", "replays", "outcome-unknown",
        "failed", "server requests", "charges", "duplicate charges");
    printRow(result.resilient(), out);
    printRow(result.naive(), out);
    out.println();
    explain(result, out);
  }

  private static void printRow(ClientRun run, PrintStream out) {
    out.printf(TABLE, run.client(), run.operations(), run.attempts(), run.retries(), run.replays(),
        run.outcomeUnknown(), run.failed(), run.serverRequests(), run.charges(),
        run.duplicateCharges());
  }

  private static void explain(DemoResult result, PrintStream out) {
    ClientRun sdk = result.resilient();
    ClientRun naive = result.naive();
    out.printf("resilient-http sent one Idempotency-Key per payment, the same on every attempt:"
        + " %d retries found the payment%n  already made, and the server replayed its result"
        + " instead of charging again (%d duplicate charges).%n",
        sdk.replays(), sdk.duplicateCharges());
    out.printf("naive retry sent no key, so the server took every retry for a new order:"
        + " %d duplicate charges.%n", naive.duplicateCharges());
    if (naive.serverRequests() > naive.attempts()) {
      out.printf("  Its loop counted %d attempts, yet the server got %d requests: OkHttp's"
          + " retryOnConnectionFailure re-sent%n  %d POSTs on its own (the SDK turns that off and"
          + " counts every request it sends).%n", naive.attempts(), naive.serverRequests(),
          naive.serverRequests() - naive.attempts());
    }
    if (sdk.outcomeUnknown() > 0) {
      out.printf("resilient-http ran out of attempts without learning the outcome of %d"
          + " payment(s); resuming them with%n  their keys cannot charge twice.%n",
          sdk.outcomeUnknown());
    }
  }
}
