package io.github.resilienthttp.examples;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.testkit.BusinessHandler;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.github.resilienthttp.testkit.ServerResponse;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import mockwebserver3.RecordedRequest;
import okhttp3.Headers;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * A custom {@link ResponseClassifier} for a payments provider whose contract differs from the
 * defaults in two places, composed with {@link ResponseClassifier#defaults()} by
 * {@link ResponseClassifier#orElse(ResponseClassifier) orElse}, so that every other case is
 * decided as usual:
 *
 * <ul>
 *   <li>Its 503 comes from a gateway that stopped waiting for the backend, which may have charged
 *       anyway: the outcome is unknown. (The defaults read 503 as "not processed" and retry.)
 *   <li>A 500 with {@code X-Retryable: true} means the backend rolled the payment back: safe to
 *       retry. (The defaults read 500 as "outcome unknown".)
 * </ul>
 *
 * <p>The provider supports no idempotency keys, so the clients here send none: their POSTs are not
 * idempotent, and the contract alone decides what may be sent again. Each scenario runs once with
 * the defaults and once with the provider's contract, against an {@link IdempotentTestServer}
 * playing the provider.
 *
 * <p>Run: {@code java -cp examples/target/resilient-http-demo.jar
 * io.github.resilienthttp.examples.CustomContractExample}
 */
public final class CustomContractExample {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final String ROW = "%-24s  %-8s  %-30s  %8s  %7s";

  private CustomContractExample() {}

  /** The provider's contract: its own two rules first, then the defaults for everything else. */
  static ResponseClassifier providerContract() {
    ResponseClassifier providerRules = CustomContractExample::classifyProviderAnswer;
    return providerRules.orElse(ResponseClassifier.defaults());
  }

  /** Decides the two answers this provider means differently; defers on all others. */
  static Decision classifyProviderAnswer(AttemptOutcome outcome) {
    int status = outcome.statusCode();
    if (status == 503) {
      // The gateway answers 503 when it stops waiting for the backend, which may have charged.
      return Decision.retryIfIdempotent("gateway-503", outcome.retryAfter());
    }
    if (status == 500 && markedRetryable(outcome)) {
      // The backend rolled the payment back and says so: sending it again cannot charge twice.
      return Decision.retry("rolled-back-500", outcome.retryAfter());
    }
    return Decision.defer();
  }

  private static boolean markedRetryable(AttemptOutcome outcome) {
    String header = outcome.response().map(r -> r.header("X-Retryable")).orElse(null);
    return "true".equalsIgnoreCase(header);
  }

  public static void main(String[] args) throws Exception {
    List<String> rows = run();
    PrintStream out = System.out;
    out.println("Custom contract example: one payment per scenario, to a provider that takes no"
        + " idempotency keys");
    out.println();
    out.println(String.format(ROW, "scenario", "contract", "result", "attempts", "charges"));
    rows.forEach(out::println);
    out.println();
    out.println("defaults: 503 means \"not processed\" and is retried, so the payment behind the"
        + " gateway's 503 was charged twice;");
    out.println("  500 may have been processed, so not even the rolled-back one is retried.");
    out.println("provider: its 503 is outcome unknown (ask the provider before paying again), its"
        + " X-Retryable 500 is retried;");
    out.println("  a plain 500 and the 429 fall through to the defaults.");
  }

  /** Runs every scenario with both contracts; returns one table row per run. */
  static List<String> run() throws IOException {
    ProviderBackend backend = new ProviderBackend();
    OkHttpClient okHttp = new OkHttpClient();
    List<Contract> contracts = List.of(
        new Contract("defaults", client(okHttp, ResponseClassifier.defaults())),
        new Contract("provider", client(okHttp, providerContract())));
    // No effect methods: the provider keeps no idempotency records; its backend counts charges.
    try (IdempotentTestServer server =
        IdempotentTestServer.builder().handler(backend).effectMethods().build().start()) {
      HttpUrl url = server.url("/payments");
      List<String> rows = new ArrayList<>();
      for (Scenario scenario : scenarios()) {
        for (Contract contract : contracts) {
          server.reset().script(scenario.serverFaults().toArray(new Fault[0]));
          backend.reset(scenario.backendAnswers());
          Operation operation = contract.client().operation(paymentRequest(url));
          String result = execute(operation);
          rows.add(String.format(ROW, scenario.name(), contract.name(), result,
              operation.attempts(), backend.charges()));
        }
      }
      return rows;
    } finally {
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }
  }

  private static List<Scenario> scenarios() {
    return List.of(
        new Scenario("503 after the charge", List.of(), List.of(Answer.CHARGE_THEN_503)),
        new Scenario("500, X-Retryable: true", List.of(), List.of(Answer.ROLLED_BACK_500)),
        new Scenario("500", List.of(Fault.status(500)), List.of()),
        new Scenario("429, Retry-After: 0", List.of(Fault.status(429, "0")), List.of()));
  }

  private static ResilientHttpClient client(OkHttpClient okHttp, ResponseClassifier contract) {
    return ResilientHttpClient.wrap(okHttp)
        .classifier(contract)
        .idempotencyKeys(IdempotencyKeyPolicy.builder()
            .send(IdempotencyKeyPolicy.Send.NEVER) // the provider does not support keys
            .build())
        .retryPolicy(RetryPolicy.builder()
            .maxAttempts(3)
            .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(5), Duration.ofMillis(50)))
            .deadline(Duration.ofSeconds(5))
            .build())
        .build();
  }

  private static Request paymentRequest(HttpUrl url) {
    RequestBody body = RequestBody.create("{\"order\":\"order-1\",\"amount\":1000}", JSON);
    return new Request.Builder().url(url).post(body).build();
  }

  private static String execute(Operation operation) {
    try (Response response = operation.execute()) {
      return "HTTP " + response.code();
    } catch (OutcomeUnknownException e) {
      return "outcome unknown (" + e.reason() + ")";
    } catch (ResilientHttpException e) {
      return "failed (" + e.reason() + ")";
    } catch (IOException e) {
      return "failed (" + e + ")";
    }
  }

  /** A named client with one contract. */
  private record Contract(String name, ResilientHttpClient client) {}

  /** One scenario: faults the server injects, then what the provider's backend answers. */
  private record Scenario(String name, List<Fault> serverFaults, List<Answer> backendAnswers) {}

  /** What the provider's backend does with one payment it receives. */
  private enum Answer {
    /** Charges and answers 201: what it does when nothing else is queued. */
    CHARGE,
    /** Charges, but its gateway has already given up and answers 503. */
    CHARGE_THEN_503,
    /** Fails, rolls the payment back, and says so with {@code X-Retryable: true}. */
    ROLLED_BACK_500
  }

  /**
   * The provider's backend, as the test server's business logic: answers from a queue set per
   * scenario, then {@link Answer#CHARGE}. Counts charges itself, since the server keeps no effect
   * records here. Thread-safe.
   */
  private static final class ProviderBackend implements BusinessHandler {
    private final Queue<Answer> answers = new ArrayDeque<>();
    private int charges;

    synchronized void reset(List<Answer> next) {
      answers.clear();
      answers.addAll(next);
      charges = 0;
    }

    synchronized int charges() {
      return charges;
    }

    @Override
    public synchronized ServerResponse handle(RecordedRequest request, int effectNumber) {
      Answer answer = answers.isEmpty() ? Answer.CHARGE : answers.remove();
      switch (answer) {
        case ROLLED_BACK_500:
          return new ServerResponse(500, Headers.of("Content-Type", "application/json",
              "X-Retryable", "true"), "{\"error\":\"rolled back\"}");
        case CHARGE_THEN_503:
          charges++;
          return ServerResponse.json(503, "{\"error\":\"gateway timeout\"}");
        default:
          charges++;
          return ServerResponse.json(201, "{\"id\":\"pay_" + charges + "\"}");
      }
    }
  }
}
