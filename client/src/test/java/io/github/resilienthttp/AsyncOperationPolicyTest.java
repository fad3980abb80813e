package io.github.resilienthttp;

import io.github.resilienthttp.internal.async.PollLoop;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import okhttp3.HttpUrl;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/** The wait policy's validation and poll intervals, and the default status contract and locator. */
class AsyncOperationPolicyTest {

  private static Response response(int code, String... headers) {
    Response.Builder b = new Response.Builder()
        .request(new Request.Builder().url("https://api.example/jobs").build())
        .protocol(Protocol.HTTP_1_1).code(code).message("x");
    for (int i = 0; i < headers.length; i += 2) {
      b.addHeader(headers[i], headers[i + 1]);
    }
    return b.build();
  }

  @Test
  void defaultsAreDocumented() {
    AsyncOperationPolicy p = AsyncOperationPolicy.defaults();
    assertThat(p.minPollInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(p.maxPollInterval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(p.jitter()).isEqualTo(0.2);
    assertThat(p.deadline()).isEmpty();
    assertThat(p.keyRetention()).contains(Duration.ofHours(24));
    assertThat(p.lateResume()).isEqualTo(AsyncOperationPolicy.LateResume.WARN);
    assertThat(p.maxStatusBodyBytes()).isEqualTo(64 * 1024);
  }

  @Test
  void buildValidates() {
    assertThatThrownBy(() -> AsyncOperationPolicy.builder().minPollInterval(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AsyncOperationPolicy.builder().minPollInterval(Duration.ofSeconds(5))
        .maxPollInterval(Duration.ofSeconds(1)).build()).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AsyncOperationPolicy.builder().jitter(1.5).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AsyncOperationPolicy.builder().jitter(Double.NaN).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AsyncOperationPolicy.builder().maxStatusBodyBytes(0).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AsyncOperationPolicy.builder().deadline(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AsyncOperationPolicy.builder()
        .keyRetention(Duration.ZERO, AsyncOperationPolicy.LateResume.REFUSE).build())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void intervalsDoubleFromTheMinimumToTheMaximum() {
    AsyncOperationPolicy p = AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(300))
        .maxPollInterval(Duration.ofSeconds(1)).build();
    assertThat(PollLoop.baseInterval(p, 1)).isEqualTo(Duration.ofMillis(300));
    assertThat(PollLoop.baseInterval(p, 2)).isEqualTo(Duration.ofMillis(600));
    assertThat(PollLoop.baseInterval(p, 3)).isEqualTo(Duration.ofSeconds(1));
    assertThat(PollLoop.baseInterval(p, 1_000_000)).isEqualTo(Duration.ofSeconds(1));
    assertThat(PollLoop.baseInterval(p.toBuilder().build(), 2)).isEqualTo(Duration.ofMillis(600));
  }

  @Test
  void theDefaultContractReadsCommonStatusFields() {
    StatusContract c = StatusContract.defaults();
    assertThat(c.classify(response(200), "{\"status\": \"InProgress\"}").state())
        .isEqualTo(PollStatus.State.RUNNING);
    assertThat(c.classify(response(200), "{\"status\":\"succeeded\",\"resourceLocation\":\"/r/1\"}"))
        .satisfies(s -> {
          assertThat(s.state()).isEqualTo(PollStatus.State.SUCCEEDED);
          assertThat(s.resultLocation()).contains(HttpUrl.get("https://api.example/r/1"));
        });
    assertThat(c.classify(response(200), "{\"status\":\"Failed\",\"error\":{}}").state())
        .isEqualTo(PollStatus.State.FAILED);
    assertThat(c.classify(response(200), "{\"status\":\"Cancelled\"}").state())
        .isEqualTo(PollStatus.State.CANCELED);
    assertThat(c.classify(response(303, "Location", "/r/2"), "").resultLocation())
        .contains(HttpUrl.get("https://api.example/r/2"));
    // No status field: by status code.
    assertThat(c.classify(response(202), "").state()).isEqualTo(PollStatus.State.RUNNING);
    assertThat(c.classify(response(200), "{\"id\":1}").state()).isEqualTo(PollStatus.State.SUCCEEDED);
    // An unknown word or an error status: cannot tell.
    assertThat(StatusContract.jsonStatusField("status").classify(response(200),
        "{\"status\":\"weird\"}")).isNull();
    assertThat(c.classify(response(500), "{\"status\":\"Running\"}")).isNull();
  }

  @Test
  void contractsCompose() {
    StatusContract mine = (r, body) -> body.contains("\"state\":\"DONE\"")
        ? PollStatus.of(PollStatus.State.SUCCEEDED, null, body) : null;
    StatusContract c = mine.orElse(StatusContract.defaults());
    assertThat(c.classify(response(200), "{\"state\":\"DONE\"}").state())
        .isEqualTo(PollStatus.State.SUCCEEDED);
    assertThat(c.classify(response(200), "{\"status\":\"running\"}").state())
        .isEqualTo(PollStatus.State.RUNNING);
  }

  @Test
  void theBoundedPatternIsFastOnAHostileBody() {
    String hostile = "{\"status\":\"" + "a".repeat(200_000);
    long start = System.nanoTime();
    assertThat(StatusContract.jsonStatusField("status").classify(response(200), hostile)).isNull();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  void theLocatorPrefersAzureThenOperationLocationThenLocation() {
    StatusLocator l = StatusLocator.standardHeaders().orElse(StatusLocator.bodyField("statusUrl"));
    assertThat(l.locate(response(202, "Location", "/a", "Operation-Location", "/b"), ""))
        .isEqualTo(HttpUrl.get("https://api.example/b"));
    assertThat(l.locate(response(202, "Operation-Location", "/b", "Azure-AsyncOperation", "/c"), ""))
        .isEqualTo(HttpUrl.get("https://api.example/c"));
    assertThat(l.locate(response(202), "{\"statusUrl\": \"/d\"}"))
        .isEqualTo(HttpUrl.get("https://api.example/d"));
    assertThat(l.locate(response(202), "{}")).isNull();
  }
}
