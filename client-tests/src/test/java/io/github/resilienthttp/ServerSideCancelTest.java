package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.AsyncJobServer.CancelLink;
import io.github.resilienthttp.testkit.AsyncJobServer.JobScript;
import io.github.resilienthttp.testkit.AsyncJobServer;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Cancelling the server's job, offered only when the server gave a cancel URL: the wait stops at its
 * deadline with a token that carries the URL, {@code cancelOnServer} cancels the job (a later poll
 * reads {@code Canceled}); without a URL it refuses and sends nothing; a URL on another origin is
 * refused like a status URL.
 */
class ServerSideCancelTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  private final FakeTimeSource time = new FakeTimeSource();
  private final AsyncJobServer jobs = new AsyncJobServer(time);
  private final ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(time).build();
  private final AsyncOperationPolicy policy = AsyncOperationPolicy.builder()
      .minPollInterval(Duration.ofSeconds(1)).jitter(0).deadline(Duration.ofSeconds(5)).build();

  @AfterEach
  void tearDown() {
    jobs.close();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  /** Submits a job that runs for a minute, waits 5 s for it, and returns the token of the failure. */
  private ResumeToken submitAndGiveUp() {
    jobs.script(JobScript.succeedsAfter(Duration.ofMinutes(1)));
    Request submit = new Request.Builder().url(jobs.url("/jobs"))
        .post(RequestBody.create("{}", JSON)).build();
    Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
        () -> client.operation(submit).awaitCompletion(policy));
    assertThat(thrown).isInstanceOf(AsyncOperationDeadlineExceededException.class);
    return ((ResumableFailure) thrown).resumeToken();
  }

  @Test
  void aLinkRelCancelCancelsTheServersJobAndALaterPollSeesCanceled() throws Exception {
    jobs.cancelLink(CancelLink.LINK_HEADER);
    ResumeToken token = submitAndGiveUp();
    assertThat(token.cancelUrl()).contains(jobs.url("/jobs/j1/cancel"));
    assertThat(ResumeToken.parse(token.toText())).isEqualTo(token);

    try (Response r = client.cancelOnServer(token)) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(jobs.seen("DELETE", "/jobs/j1/cancel")).singleElement()
        .satisfies(s -> assertThat(s.idempotencyKey()).isNull()); // the submit's key is not sent
    assertThat(jobs.jobsCanceled()).isEqualTo(1);
    assertThatThrownBy(() -> client.resume(token, policy))
        .isInstanceOfSatisfying(AsyncOperationFailedException.class,
            e -> assertThat(e.state()).isEqualTo(PollStatus.State.CANCELED));
    assertThat(jobs.seen("POST", "/jobs")).hasSize(1);
  }

  @Test
  void aCancelUrlBodyFieldWithPost() throws Exception {
    jobs.cancelLink(CancelLink.BODY_FIELD);
    ResumeToken token = submitAndGiveUp();
    AsyncOperationPolicy post = policy.toBuilder()
        .cancelMethod(AsyncOperationPolicy.CancelMethod.POST).build();
    try (Response r = client.cancelOnServer(token, post)) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(jobs.seen("POST", "/jobs/j1/cancel")).hasSize(1);
    assertThat(jobs.seen("DELETE", "/cancel")).isEmpty();
    assertThat(jobs.jobsCanceled()).isEqualTo(1);
  }

  @Test
  void withoutACancelUrlItRefusesAndSendsNothing() {
    ResumeToken token = submitAndGiveUp();
    assertThat(token.cancelUrl()).isEmpty();
    int before = jobs.seen().size();
    assertThatThrownBy(() -> client.cancelOnServer(token))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no cancel URL").hasMessageContaining("only stops polling");
    assertThat(jobs.seen()).hasSize(before);
    assertThat(jobs.jobsCanceled()).isZero();
  }

  @Test
  void aCancelUrlOnAnotherOriginIsRefusedLikeAStatusUrl() {
    jobs.cancelLink(CancelLink.OTHER_ORIGIN);
    ResumeToken token = submitAndGiveUp(); // the link elsewhere does not fail the wait itself
    assertThat(token.cancelUrl()).map(HttpUrl::host).contains("elsewhere.invalid");
    int before = jobs.seen().size();
    assertThatThrownBy(() -> client.cancelOnServer(token))
        .isInstanceOfSatisfying(PollFailedException.class,
            e -> assertThat(e.reason()).isEqualTo("other-origin"));
    assertThat(jobs.seen()).hasSize(before);
  }

  @Test
  void aTokenWithoutACancelUrlPrintsAsBefore() {
    ResumeToken plain = ResumeToken.forSubmit("POST", HttpUrl.get("https://api.example.com/jobs"),
        "key-1", true, Instant.ofEpochMilli(1_000)).accepted(
            HttpUrl.get("https://api.example.com/jobs/7/status"), null);
    String decoded = new String(Base64.getUrlDecoder().decode(plain.toText().substring(5)));
    assertThat(decoded.split("\n", -1)).hasSize(7);
    ResumeToken withCancel = plain.withCancelUrl(HttpUrl.get("https://api.example.com/jobs/7/cancel"));
    assertThat(ResumeToken.parse(withCancel.toText())).isEqualTo(withCancel)
        .isNotEqualTo(plain);
    assertThat(ResumeToken.parse(plain.toText()).cancelUrl()).isEmpty();
  }

  @Test
  void theLinkLocatorReadsRelListsAndIgnoresOtherRels() {
    StatusLocator cancel = StatusLocator.linkRel("cancel");
    Request req = new Request.Builder().url("https://api.example.com/jobs").build();
    Response r = new Response.Builder().request(req).protocol(okhttp3.Protocol.HTTP_1_1).code(202)
        .message("Accepted").addHeader("Link", "</jobs/7>; rel=\"self\"")
        .addHeader("Link", "</jobs/7/cancel-not>; rel=\"cancellation\", </jobs/7/stop>; rel=\"stop cancel\"")
        .build();
    assertThat(cancel.locate(r, "")).isEqualTo(HttpUrl.get("https://api.example.com/jobs/7/stop"));
    Response none = r.newBuilder().removeHeader("Link").build();
    assertThat(StatusLocator.standardCancelLinks().locate(none, "{\"cancelLocation\":\"/jobs/7/x\"}"))
        .isEqualTo(HttpUrl.get("https://api.example.com/jobs/7/x"));
    assertThat(cancel.locate(none, "")).isNull();
  }
}
