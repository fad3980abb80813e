package io.github.resilienthttp.internal.classify;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.ResponseClassifier;
import java.io.IOException;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pins OkHttp's internal HTTP/2 exception types (not API, not exported by its module) to what
 * {@link RefusedStream} expects: if OkHttp renames them, these tests fail rather than the SDK
 * silently calling refused streams "outcome unknown".
 */
class RefusedStreamTest {

  @Test
  void okHttpTypesAreWhereTheSdkLooks() throws Exception {
    assertThat(Class.forName(RefusedStream.STREAM_RESET)).isAssignableTo(IOException.class);
    assertThat(Class.forName(RefusedStream.CONNECTION_SHUTDOWN)).isAssignableTo(IOException.class);
    assertThat(Class.forName(RefusedStream.STREAM_RESET).getField("errorCode")).isNotNull();
  }

  @Test
  void refusedStreamIsNotSentForAnyMethod() throws Exception {
    IOException refused = streamReset("REFUSED_STREAM");
    assertThat(RefusedStream.reason(refused)).isEqualTo("http2-refused-stream");
    // A keyless POST, bytes written: still not processed (RFC 9113 §8.7).
    assertThat(ResponseClassifier.defaults().classify(
        AttemptOutcome.ofException(post(), refused, 1, true, false)))
        .isEqualTo(Decision.retry("http2-refused-stream"));
  }

  @Test
  void connectionShutdownIsNotSent() throws Exception {
    IOException shutdown = (IOException) Class.forName(RefusedStream.CONNECTION_SHUTDOWN)
        .getConstructor().newInstance();
    assertThat(ResponseClassifier.defaults().classify(
        AttemptOutcome.ofException(post(), shutdown, 1, true, false)))
        .isEqualTo(Decision.retry("http2-connection-shutdown"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"CANCEL", "INTERNAL_ERROR", "PROTOCOL_ERROR", "NO_ERROR"})
  void otherResetsAfterSendingStayUnknown(String code) throws Exception {
    IOException reset = streamReset(code);
    assertThat(RefusedStream.reason(reset)).isNull();
    assertThat(ResponseClassifier.defaults().classify(
        AttemptOutcome.ofException(post(), reset, 1, true, false)))
        .isEqualTo(Decision.retryIfIdempotent("outcome-unknown"));
  }

  @Test
  void wrappedRefusalIsFoundAsTheCause() throws Exception {
    assertThat(RefusedStream.reason(new IOException("wrapped", streamReset("REFUSED_STREAM"))))
        .isEqualTo("http2-refused-stream");
  }

  @Test
  void errorCodeFallsBackToOkHttpsMessage() {
    assertThat(RefusedStream.errorCode(new IOException("stream was reset: REFUSED_STREAM")))
        .isEqualTo("REFUSED_STREAM");
    assertThat(RefusedStream.errorCode(new IOException((String) null))).isNull();
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static IOException streamReset(String code) throws Exception {
    Class errorCode = Class.forName("okhttp3.internal.http2.ErrorCode");
    return (IOException) Class.forName(RefusedStream.STREAM_RESET).getConstructor(errorCode)
        .newInstance(Enum.valueOf(errorCode, code));
  }

  static Request post() {
    return new Request.Builder().url("http://localhost/").post(RequestBody.create(new byte[0]))
        .build();
  }
}
