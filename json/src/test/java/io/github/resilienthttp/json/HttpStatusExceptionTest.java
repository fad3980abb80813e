package io.github.resilienthttp.json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.ResilientHttpException;
import okhttp3.Headers;
import org.junit.jupiter.api.Test;

/** The message of {@link HttpStatusException} is safe to log whatever the server sends. */
class HttpStatusExceptionTest {
  private static final String KEY = "0123456789abcdef";

  @Test
  void withoutAProblemTheMessageIsTheStatusAndTheOperation() {
    HttpStatusException e = new HttpStatusException(
        KEY, true, 3, 503, Headers.of("Retry-After", "5"), null);

    assertThat(e).isInstanceOf(ResilientHttpException.class).isInstanceOf(OperationFailure.class);
    assertThat(e.getMessage()).isEqualTo("HTTP 503 [key=01234567…, attempts=3, reason=status-503]");
    assertThat(e.statusCode()).isEqualTo(503);
    assertThat(e.idempotencyKey()).isEqualTo(KEY);
    assertThat(e.idempotencyKeySent()).isTrue();
    assertThat(e.attempts()).isEqualTo(3);
    assertThat(e.reason()).isEqualTo("status-503");
    assertThat(e.headers().get("Retry-After")).isEqualTo("5");
    assertThat(e.problem()).isEmpty();
    assertThat(e.getCause()).isNull();
  }

  @Test
  void serverSuppliedTypeAndTitleCannotForgeLogLinesOrFloodThem() {
    ProblemDetails problem = ProblemDetails.parse("{\"type\":\"urn:" + "t".repeat(300) + "\","
        + "\"title\":\"Bad\\r\\nINFO forged log line\",\"detail\":\"card 4111111111111111\"}",
        new ObjectMapper()).orElseThrow();

    HttpStatusException e = new HttpStatusException(KEY, false, 1, 400, Headers.EMPTY, problem);

    assertThat(e.getMessage()).isEqualTo("HTTP 400 (problem type=urn:" + "t".repeat(196) + "…,"
        + " title=\"Bad  INFO forged log line\") [key=01234567…, attempts=1, reason=status-400]");
    assertThat(e.problem()).contains(problem);
  }
}
