package io.github.resilienthttp.examples;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.json.JsonCodec;
import io.github.resilienthttp.json.ProblemDetails;
import java.util.Optional;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * A retry contract driven by RFC 9457 problem types rather than status codes alone: the server says
 * why it refused, and the classifier acts on that reason.
 *
 * <ul>
 *   <li>{@code .../idempotency-key-in-use}: the key's first request is still running, so retrying
 *       later with the same key is safe (honouring {@code Retry-After});
 *   <li>{@code .../idempotency-key-mismatch}: the key was reused with another payload; retrying
 *       cannot help;
 *   <li>anything else: {@link ResponseClassifier#defaults()}.
 * </ul>
 *
 * <p>{@link ProblemDetails#from(AttemptOutcome)} only peeks at the body, so the SDK (or
 * {@code JsonCodec.execute}) can still read it afterwards. Needs {@code jackson-databind} on the
 * classpath. Run {@link #main} to see the contract classify a few synthetic responses (no network).
 */
public final class ProblemDetailsContractExample {

  private ProblemDetailsContractExample() {}

  /** The contract; install it with {@code ResilientHttpClient.wrap(ok).classifier(contract())}. */
  public static ResponseClassifier contract() {
    ResponseClassifier byProblemType = outcome -> {
      Optional<ProblemDetails> problem = ProblemDetails.from(outcome);
      if (problem.isEmpty()) {
        return Decision.defer();
      }
      String type = problem.get().type();
      if (type.endsWith("idempotency-key-in-use")) {
        return Decision.retry("idempotency-key-in-use", outcome.retryAfter());
      }
      if (type.endsWith("idempotency-key-mismatch")) {
        return Decision.fail("idempotency-key-mismatch");
      }
      return Decision.defer();
    };
    return byProblemType.orElse(ResponseClassifier.defaults());
  }

  public static void main(String[] args) {
    ResponseClassifier contract = contract();
    String base = "https://api.example.com/problems/";
    Response[] responses = {
        problem(409, base + "idempotency-key-in-use", "3"),
        problem(400, base + "idempotency-key-in-use", null),
        problem(422, base + "idempotency-key-mismatch", null),
        problem(404, "about:blank", null),
        plain(503, "2"),
        plain(201, null),
    };
    for (Response response : responses) {
      try (response) {
        AttemptOutcome outcome = AttemptOutcome.ofResponse(response, 1, true);
        String type =
            ProblemDetails.from(outcome).map(ProblemDetails::type).orElse("(not a problem)");
        System.out.printf("%d %-52s -> %s%n", response.code(), type, contract.classify(outcome));
      }
    }
  }

  private static Response problem(int code, String type, String retryAfter) {
    String json = "{\"type\":\"" + type + "\",\"status\":" + code + "}";
    return response(code, ResponseBody.create(json, MediaType.get("application/problem+json")),
        retryAfter);
  }

  private static Response plain(int code, String retryAfter) {
    return response(code, ResponseBody.create("{}", MediaType.get("application/json")), retryAfter);
  }

  private static Response response(int code, ResponseBody body, String retryAfter) {
    Response.Builder b = new Response.Builder()
        .request(new Request.Builder().url("https://api.example.com/payments")
            .post(RequestBody.create(new byte[0])).build())
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message("")
        .body(body);
    if (retryAfter != null) {
      b.header("Retry-After", retryAfter);
    }
    return b.build();
  }
}
