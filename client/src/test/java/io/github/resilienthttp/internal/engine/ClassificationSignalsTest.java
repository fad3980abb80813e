package io.github.resilienthttp.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.ResponseClassifier;
import java.io.IOException;
import java.net.ProtocolException;
import java.time.Duration;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The defaults read what the answer says: a 409 is "key in progress" and a 422 (or Stripe's 400)
 * "key mismatch" only with a signal; HTTP/2 refusals are "not sent"; a redirect loop is permanent.
 */
class ClassificationSignalsTest {
  private static final ResponseClassifier DEFAULTS = ResponseClassifier.defaults();
  private static final String PROBLEM = "application/problem+json";

  @Test
  void ordinaryConflictIsFinal() {
    Decision d = classify(409, "application/json", "{\"error\":\"email already taken\"}", null);
    assertThat(d).isEqualTo(Decision.fail("status-409"));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "{\"type\":\"https://developer.example.com/idempotency\",\"title\":\"in use\"}",
      "{\"type\": \"https://resilienthttp.github.io/problems/idempotency-key-in-use\"}",
      "{\"error\":{\"code\":\"idempotency_key_in_use\",\"type\":\"invalid_request_error\"}}"})
  void conflictNamingTheKeyIsInProgress(String body) {
    assertThat(classify(409, PROBLEM, body, null))
        .isEqualTo(Decision.retry("idempotency-key-in-progress"));
  }

  @Test
  void conflictWithRetryAfterIsInProgress() {
    Decision d = classify(409, "text/plain", "busy", "2");
    assertThat(d.kind()).isEqualTo(Decision.Kind.RETRY);
    assertThat(d.reason()).isEqualTo("idempotency-key-in-progress");
    assertThat(d.retryAfter()).contains(Duration.ofSeconds(2));
  }

  @Test
  void conflictWithoutKeyIsFinalWhateverItSays() {
    Response r = response(409, PROBLEM, "{\"type\":\"idempotency-key-in-use\"}", "1");
    assertThat(DEFAULTS.classify(AttemptOutcome.ofResponse(r, 1, false)))
        .isEqualTo(Decision.fail("status-409"));
  }

  @Test
  void validationErrorIsNotAKeyMismatch() {
    assertThat(classify(422, PROBLEM, "{\"type\":\"https://api.example/validation\"}", null))
        .isEqualTo(Decision.fail("status-422"));
    assertThat(classify(422, "text/html", "<p>idempotency</p>", null))
        .isEqualTo(Decision.fail("status-422"));
  }

  @Test
  void unprocessableNamingTheKeyIsAMismatch() {
    assertThat(classify(422, PROBLEM,
        "{\"type\":\"https://resilienthttp.github.io/problems/idempotency-key-mismatch\"}", null))
        .isEqualTo(Decision.fail("idempotency-key-mismatch"));
  }

  @Test
  void stripeIdempotencyErrorIsAMismatch() {
    String stripe = "{\"error\":{\"message\":\"Keys for idempotent requests can only be used with"
        + " the same parameters\",\"type\":\"idempotency_error\"}}";
    assertThat(classify(400, "application/json; charset=utf-8", stripe, null))
        .isEqualTo(Decision.fail("idempotency-key-mismatch"));
    assertThat(classify(400, PROBLEM, "{\"type\":\"invalid_request_error\"}", null))
        .isEqualTo(Decision.fail("status-400"));
  }

  @Test
  void sniffingIsBoundedAndLeavesTheBodyToTheCaller() throws IOException {
    String padding = " ".repeat(9 * 1024);
    String late = "{" + padding + "\"type\":\"idempotency-key-in-use\"}";
    Response r = response(409, PROBLEM, late, null);
    assertThat(DEFAULTS.classify(AttemptOutcome.ofResponse(r, 1, true)))
        .isEqualTo(Decision.fail("status-409"));
    assertThat(r.body().string()).isEqualTo(late);

    Response early = response(409, PROBLEM, "{\"code\":\"idempotency_key_in_use\"}" + padding, null);
    assertThat(DEFAULTS.classify(AttemptOutcome.ofResponse(early, 1, true)).kind())
        .isEqualTo(Decision.Kind.RETRY);
    assertThat(early.body().string()).isEqualTo("{\"code\":\"idempotency_key_in_use\"}" + padding);
  }

  @Test
  void tooManyFollowUpsIsPermanent() {
    Decision d = DEFAULTS.classify(AttemptOutcome.ofException(post(),
        new ProtocolException("Too many follow-up requests: 21"), 1, true, true));
    assertThat(d).isEqualTo(Decision.fail("too-many-follow-ups"));
  }

  @Test
  void otherProtocolErrorsAfterSendingStayUnknown() {
    Decision d = DEFAULTS.classify(AttemptOutcome.ofException(post(),
        new ProtocolException("Unexpected status line: x"), 1, true, true));
    assertThat(d).isEqualTo(Decision.retryIfIdempotent("outcome-unknown"));
  }

  static Decision classify(int code, String contentType, String body, String retryAfter) {
    return DEFAULTS.classify(AttemptOutcome.ofResponse(response(code, contentType, body, retryAfter),
        1, true));
  }

  static Request post() {
    return new Request.Builder().url("http://localhost/pay").post(RequestBody.create(new byte[0]))
        .build();
  }

  static Response response(int code, String contentType, String body, String retryAfter) {
    Response.Builder b = new Response.Builder().request(post()).protocol(Protocol.HTTP_1_1)
        .code(code).message("x")
        .body(ResponseBody.create(body, MediaType.get(contentType)));
    if (retryAfter != null) {
      b.header("Retry-After", retryAfter);
    }
    return b.build();
  }
}
