package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.AsyncJobServer.JobScript;
import io.github.resilienthttp.testkit.AsyncJobServer;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Resuming an intent from its token: re-submitting one whose acceptance was never seen with the same
 * key (one job), and keys older than the key retention (warned or refused; blocking and async).
 */
class ResumeTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  private final FakeTimeSource time = new FakeTimeSource();
  private final List<String> late = new CopyOnWriteArrayList<>();
  private final AsyncJobServer server = new AsyncJobServer(time).script(JobScript.succeedsAfterPolls(1));

  @AfterEach
  void tearDown() {
    server.close();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  private ResilientHttpClient client() {
    // The tokens here are built by hand (unsigned, as an earlier version stored them): accepted for
    // the test server's origin only.
    return ResilientHttpClient.wrap(okHttp).timeSource(time)
        .acceptUnsignedResumeTokens(List.of(server.url("/"))).addListener(new OperationListener() {
      @Override
      public void keyRetentionExceeded(OperationInfo operation, ResumeToken token, Duration keyAge,
          boolean refused) {
        late.add(keyAge + (refused ? " refused" : " warned"));
      }
    }).build();
  }

  private Request submit() {
    return new Request.Builder().url(server.url("/jobs"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  private static AsyncOperationPolicy.Builder policy() {
    return AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(100)).jitter(0)
        .deadline(Duration.ofSeconds(30));
  }

  /** A token as a crashed process saved it before it saw the 202: the key, not the status URL. */
  private ResumeToken savedBeforeAcceptance() {
    return ResumeToken.forSubmit("POST", server.url("/jobs"), "order-42", true, time.now());
  }

  @Test
  void aTokenNeverSeenAcceptedIsResubmittedWithTheSameKeyOneJob() throws IOException {
    // The first process sent the submit (the server created the job), then crashed.
    client().operation(submit()).idempotencyKey("order-42").execute().close();
    try (Response r = client().resume(savedBeforeAcceptance(), submit(), policy().build())) {
      assertThat(r.body().string()).contains("\"result\":\"done\"");
    }
    assertThat(server.seen("POST", "/jobs")).extracting(AsyncJobServer.Seen::idempotencyKey)
        .containsExactly("order-42", "order-42");
    assertThat(server.jobsCreated()).isEqualTo(1);
  }

  @Test
  void aResubmitAsync() throws Exception {
    try (Response r = client().resumeAsync(savedBeforeAcceptance(), submit(), policy().build())
        .get(10, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(server.jobsCreated()).isEqualTo(1);
  }

  @Test
  void aResubmitThatIsNotSafeOrNotTheTokensRequestIsRefused() {
    ResumeToken noKey = ResumeToken.forSubmit("POST", server.url("/jobs"), "k", false, time.now());
    assertThatThrownBy(() -> client().resume(noKey, submit(), policy().build()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not safe");
    Request other = new Request.Builder().url(server.url("/other"))
        .post(RequestBody.create("{}", JSON)).build();
    assertThatThrownBy(() -> client().resume(savedBeforeAcceptance(), other, policy().build()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> client().resume(savedBeforeAcceptance(), policy().build()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(server.seen()).isEmpty();
  }

  @Test
  void aLateResumeIsWarnedAndGoesOn() throws IOException {
    ResumeToken token = savedBeforeAcceptance();
    time.advance(Duration.ofHours(25));
    try (Response r = client().resume(token, submit(), policy().build())) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(late).containsExactly("PT25H warned");
  }

  @Test
  void aLateResumeIsRefusedByPolicyAndNothingIsSent() {
    ResumeToken token = savedBeforeAcceptance().accepted(server.url("/jobs/j1/status"), null);
    time.advance(Duration.ofMinutes(11));
    AsyncOperationPolicy refuse = policy()
        .keyRetention(Duration.ofMinutes(10), AsyncOperationPolicy.LateResume.REFUSE).build();
    assertThatThrownBy(() -> client().resume(token, refuse))
        .isInstanceOfSatisfying(KeyRetentionExceededException.class, e -> {
          assertThat(e.keyAge()).isEqualTo(Duration.ofMinutes(11));
          assertThat(e.retention()).isEqualTo(Duration.ofMinutes(10));
          assertThat(e.resumeToken()).isEqualTo(token);
          assertThat(e.reason()).isEqualTo("key-retention-exceeded");
        });
    assertThat(late).containsExactly("PT11M refused");
    assertThat(server.seen()).isEmpty();
  }

  @Test
  void aLateResumeIsRefusedAsync() {
    ResumeToken token = savedBeforeAcceptance();
    time.advance(Duration.ofHours(2));
    AsyncOperationPolicy refuse = policy()
        .keyRetention(Duration.ofHours(1), AsyncOperationPolicy.LateResume.REFUSE).build();
    assertThat(client().resumeAsync(token, submit(), refuse)).failsWithin(Duration.ofSeconds(5))
        .withThrowableThat().havingCause().isInstanceOf(KeyRetentionExceededException.class);
    assertThat(server.seen()).isEmpty();
  }

  @Test
  void noRetentionMeansNoCheck() throws IOException {
    ResumeToken token = savedBeforeAcceptance();
    time.advance(Duration.ofDays(30));
    AsyncOperationPolicy unknown = policy()
        .keyRetention(null, AsyncOperationPolicy.LateResume.REFUSE).build();
    client().resume(token, submit(), unknown).close();
    assertThat(late).isEmpty();
  }
}
