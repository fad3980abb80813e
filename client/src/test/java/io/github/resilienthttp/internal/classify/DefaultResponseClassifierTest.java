package io.github.resilienthttp.internal.classify;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.ResponseClassifier;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import javax.net.ssl.SSLPeerUnverifiedException;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DefaultResponseClassifierTest {
  private static final ResponseClassifier DEFAULTS = ResponseClassifier.defaults();

  @ParameterizedTest(name = "{0} keySent={1} -> {2}")
  @CsvSource({
      "200, true, SUCCESS", "201, false, SUCCESS", "204, true, SUCCESS", "301, false, SUCCESS",
      "304, true, SUCCESS",
      "400, true, FAIL", "401, true, FAIL", "403, false, FAIL", "404, true, FAIL",
      "408, false, RETRY", "429, false, RETRY", "503, false, RETRY",
      "409, true, FAIL", "409, false, FAIL",
      "422, true, FAIL", "422, false, FAIL",
      "500, true, RETRY_IF_IDEMPOTENT", "502, false, RETRY_IF_IDEMPOTENT",
      "504, true, RETRY_IF_IDEMPOTENT", "599, true, RETRY_IF_IDEMPOTENT",
      "501, true, FAIL", "505, true, FAIL", "600, true, FAIL", "999, true, FAIL"})
  void statusTable(int code, boolean keySent, Decision.Kind expected) {
    Decision d = DEFAULTS.classify(AttemptOutcome.ofResponse(response(code, null), 1, keySent));
    assertThat(d.kind()).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({"409, true, status-409", "422, true, status-422", "503, false, status-503"})
  void reasons(int code, boolean keySent, String reason) {
    assertThat(DEFAULTS.classify(AttemptOutcome.ofResponse(response(code, null), 1, keySent)).reason())
        .isEqualTo(reason);
  }

  @ParameterizedTest
  @CsvSource({"429", "503", "500", "409"})
  void retryAfterIsCarriedOnRetryableStatuses(int code) {
    Decision d = DEFAULTS.classify(AttemptOutcome.ofResponse(response(code, "3"), 1, true));
    assertThat(d.retryAfter()).contains(Duration.ofSeconds(3));
  }

  @org.junit.jupiter.api.Test
  void exceptionsBeforeSendingAreSafeAfterSendingUnknown() {
    Request post = new Request.Builder().url("http://localhost/").post(okhttp3.RequestBody.create(new byte[0])).build();
    assertThat(DEFAULTS.classify(AttemptOutcome.ofException(post, new ConnectException("refused"), 1, false, false)))
        .isEqualTo(Decision.retry("not-sent"));
    assertThat(DEFAULTS.classify(AttemptOutcome.ofException(post, new SocketTimeoutException("timeout"), 1, true, false)))
        .isEqualTo(Decision.retryIfIdempotent("outcome-unknown"));
    assertThat(DEFAULTS.classify(AttemptOutcome.ofException(post, new SSLPeerUnverifiedException("pin"), 1, false, false)).kind())
        .isEqualTo(Decision.Kind.FAIL);
  }

  @org.junit.jupiter.api.Test
  void customContractComposesWithTheDefaults() {
    ResponseClassifier teapot = o -> o.statusCode() == 418 ? Decision.retry("teapot") : Decision.defer();
    ResponseClassifier contract = teapot.orElse(ResponseClassifier.defaults());
    assertThat(contract.classify(AttemptOutcome.ofResponse(response(418, null), 1, true)))
        .isEqualTo(Decision.retry("teapot"));
    assertThat(contract.classify(AttemptOutcome.ofResponse(response(404, null), 1, true)))
        .isEqualTo(Decision.fail("status-404"));
  }

  @Property(tries = 2000)
  void everyStatusGetsADecision(@ForAll @IntRange(min = 100, max = 999) int code,
      @ForAll boolean keySent, @ForAll boolean withRetryAfter) {
    Decision d = DEFAULTS.classify(AttemptOutcome.ofResponse(response(code, withRetryAfter ? "x" : null), 2, keySent));
    assertThat(d).isNotNull();
    assertThat(d.kind()).isNotEqualTo(Decision.Kind.DEFER);
  }

  @Property(tries = 200)
  void everyExceptionGetsADecision(@ForAll boolean sent, @ForAll boolean keySent, @ForAll String message) {
    Request get = new Request.Builder().url("http://localhost/").build();
    for (IOException e : new IOException[] {new IOException(message), new ConnectException(message),
        new SocketTimeoutException(message), new SSLPeerUnverifiedException(message)}) {
      Decision d = DEFAULTS.classify(AttemptOutcome.ofException(get, e, 1, sent, keySent));
      assertThat(d.kind()).isNotEqualTo(Decision.Kind.DEFER).isNotEqualTo(Decision.Kind.SUCCESS);
    }
  }

  static Response response(int code, String retryAfter) {
    Response.Builder b = new Response.Builder()
        .request(new Request.Builder().url("http://localhost/pay").post(okhttp3.RequestBody.create(new byte[0])).build())
        .protocol(Protocol.HTTP_1_1).code(code).message("x");
    if (retryAfter != null) {
      b.header("Retry-After", retryAfter);
    }
    return b.build();
  }
}
