package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.AsyncJobServer.JobScript;
import io.github.resilienthttp.testkit.AsyncJobServer.Seen;
import io.github.resilienthttp.testkit.AsyncJobServer.StatusHeader;
import io.github.resilienthttp.testkit.AsyncJobServer;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Asynchronous operations (202 Accepted + status polling) on real loopback sockets against
 * {@link AsyncJobServer}: polled to success, to failure, past the deadline, resumed from a token in a
 * new client, Retry-After on every poll, transient poll failures, cancellation; blocking and async.
 */
class AsyncOperationTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  private final FakeTimeSource time = new FakeTimeSource();
  private final Recorder events = new Recorder();
  private AsyncJobServer server;

  @AfterEach
  void tearDown() {
    if (server != null) {
      server.close();
    }
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  /** Records attempt kinds and wait events. */
  static final class Recorder implements OperationListener {
    final List<AttemptKind> kinds = new CopyOnWriteArrayList<>();
    final List<Duration> pollDelays = new CopyOnWriteArrayList<>();
    final List<Boolean> pollFromRetryAfter = new CopyOnWriteArrayList<>();
    final List<PollStatus.State> states = new CopyOnWriteArrayList<>();
    final List<ResumeToken> accepted = new CopyOnWriteArrayList<>();
    final List<Duration> lateKeys = new CopyOnWriteArrayList<>();

    @Override
    public void attemptStarted(OperationInfo operation, int attempt, AttemptKind kind) {
      kinds.add(kind);
    }

    @Override
    public void asyncOperationAccepted(OperationInfo operation, ResumeToken token) {
      accepted.add(token);
    }

    @Override
    public void pollScheduled(OperationInfo operation, int poll, Duration delay,
        boolean fromRetryAfter) {
      pollDelays.add(delay);
      pollFromRetryAfter.add(fromRetryAfter);
    }

    @Override
    public void pollCompleted(OperationInfo operation, int poll, PollStatus status) {
      states.add(status.state());
    }

    @Override
    public void keyRetentionExceeded(OperationInfo operation, ResumeToken token, Duration keyAge,
        boolean refused) {
      lateKeys.add(keyAge);
    }
  }

  /** The resume token key every "process" of this test shares (a restarted one resumes tokens). */
  private static final byte[] TOKEN_KEY = "0123456789abcdef0123456789abcdef".getBytes(
      java.nio.charset.StandardCharsets.US_ASCII);

  private ResilientHttpClient client(TimeSource ts) {
    return ResilientHttpClient.wrap(okHttp).timeSource(ts).random(new SplittableRandom(7))
        .resumeTokenKey(TOKEN_KEY)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .addListener(events).build();
  }

  private Request submit() {
    return new Request.Builder().url(server.url("/jobs"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  private static AsyncOperationPolicy.Builder policy() {
    return AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(500))
        .maxPollInterval(Duration.ofSeconds(2)).jitter(0).deadline(Duration.ofSeconds(60));
  }

  private static AsyncOperationPolicy fastPolicy() {
    return AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(5))
        .maxPollInterval(Duration.ofMillis(20)).deadline(Duration.ofSeconds(10)).build();
  }

  @Test
  void acceptedThenPolledToSuccessFetchesTheResult() throws IOException {
    server = new AsyncJobServer(time).script(JobScript.succeedsAfterPolls(2));
    try (Response r = client(time).operation(submit()).awaitCompletion(policy().build())) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.body().string()).contains("\"result\":\"done\"");
      assertThat(r.request().url().encodedPath()).isEqualTo("/jobs/j1/result");
    }
    assertThat(server.jobsCreated()).isEqualTo(1);
    assertThat(server.seen("POST", "/jobs")).hasSize(1);
    assertThat(server.seen("GET", "/status")).hasSize(3);
    assertThat(server.seen("GET", "/result")).hasSize(1);
    // The submit, three polls, one result fetch: polls are not retries.
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.POLL,
        AttemptKind.POLL, AttemptKind.POLL, AttemptKind.POLL);
    assertThat(events.states).containsExactly(PollStatus.State.RUNNING, PollStatus.State.RUNNING,
        PollStatus.State.SUCCEEDED);
    // 500 ms growing by 2 up to 2 s, no jitter; waits on the injected clock.
    assertThat(events.pollDelays).containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1),
        Duration.ofSeconds(2));
    assertThat(events.accepted).singleElement()
        .satisfies(t -> assertThat(t.statusUrl()).contains(server.url("/jobs/j1/status")));
  }

  @Test
  void acceptedThenPolledToSuccessAsync() throws Exception {
    server = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(2));
    CompletableFuture<Response> f = client(TimeSource.system()).operation(submit())
        .awaitCompletionAsync(fastPolicy());
    try (Response r = f.get(10, TimeUnit.SECONDS)) {
      assertThat(r.body().string()).contains("\"result\":\"done\"");
    }
    assertThat(server.seen("POST", "/jobs")).hasSize(1);
    assertThat(server.seen("GET", "/status")).hasSize(3);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.POLL,
        AttemptKind.POLL, AttemptKind.POLL, AttemptKind.POLL);
  }

  @Test
  void polledToFailureIsATypedExceptionWithTheProblemAndTheToken() {
    server = new AsyncJobServer(time).script(JobScript.failsAfterPolls(1));
    assertThatThrownBy(() -> client(time).operation(submit()).awaitCompletion(policy().build()))
        .isInstanceOfSatisfying(AsyncOperationFailedException.class, e -> {
          assertThat(e.state()).isEqualTo(PollStatus.State.FAILED);
          assertThat(e.reason()).isEqualTo("async-failed");
          assertThat(e.details()).contains("InsufficientFunds");
          assertThat(e.resumeToken().statusUrl()).contains(server.url("/jobs/j1/status"));
          assertThat(e.attempts()).isEqualTo(3);
        });
    assertThat(server.seen("POST", "/jobs")).hasSize(1);
  }

  @Test
  void polledToFailureAsync() {
    server = new AsyncJobServer(TimeSource.system())
        .script(JobScript.failsAfterPolls(1).withEnd(JobScript.End.CANCELED));
    CompletableFuture<Response> f = client(TimeSource.system()).operation(submit())
        .awaitCompletionAsync(fastPolicy());
    assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOfSatisfying(AsyncOperationFailedException.class,
            e -> assertThat(e.reason()).isEqualTo("async-canceled"));
  }

  @Test
  void pastTheDeadlineTheExceptionCarriesTheTokenAndNoWaitRunsIntoIt() {
    server = new AsyncJobServer(time).script(JobScript.succeedsAfterPolls(1_000));
    AsyncOperationPolicy p = policy().deadline(Duration.ofSeconds(5)).build();
    assertThatThrownBy(() -> client(time).operation(submit()).awaitCompletion(p))
        .isInstanceOfSatisfying(AsyncOperationDeadlineExceededException.class, e -> {
          assertThat(e).isInstanceOf(DeadlineExceededException.class);
          assertThat(e.resumeToken().isAccepted()).isTrue();
          assertThat(ResumableFailure.of(e)).contains(e.resumeToken());
        });
    // 0.5 + 1 + 2 = 3.5 s of waits; the next (2 s) would end after the deadline: not slept.
    assertThat(time.elapsed()).isLessThan(Duration.ofSeconds(5));
    assertThat(server.seen("GET", "/status")).hasSize(3);
  }

  @Test
  void pastTheDeadlineAsync() {
    server = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(1_000));
    AsyncOperationPolicy p = AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(20))
        .maxPollInterval(Duration.ofMillis(40)).deadline(Duration.ofMillis(300)).build();
    CompletableFuture<Response> f = client(TimeSource.system()).operation(submit())
        .awaitCompletionAsync(p);
    assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).cause()
        .isInstanceOf(AsyncOperationDeadlineExceededException.class);
  }

  @Test
  void resumedFromItsTextTokenInANewClientWithoutResubmitting() throws IOException {
    server = new AsyncJobServer(time).script(JobScript.succeedsAfter(Duration.ofSeconds(20)));
    String saved;
    try {
      client(time).operation(submit()).awaitCompletion(policy().deadline(Duration.ofSeconds(4))
          .build());
      throw new AssertionError("expected the deadline to pass");
    } catch (AsyncOperationDeadlineExceededException e) {
      saved = e.resumeToken().toText();
    }
    time.advance(Duration.ofSeconds(30)); // the process restarts later
    ResilientHttpClient restarted = ResilientHttpClient.wrap(okHttp).timeSource(time)
        .resumeTokenKey(TOKEN_KEY).build();
    try (Response r = restarted.resume(ResumeToken.parse(saved), policy().build())) {
      assertThat(r.body().string()).contains("\"result\":\"done\"");
    }
    assertThat(server.seen("POST", "/jobs")).hasSize(1);
    assertThat(server.jobsCreated()).isEqualTo(1);
  }

  @Test
  void resumedAsync() throws Exception {
    server = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(1));
    Response accepted = client(TimeSource.system()).operation(submit()).execute();
    accepted.close();
    ResumeToken token = ResumeToken.forSubmit("POST", server.url("/jobs"), "k-1", true,
        java.time.Instant.now()).accepted(server.url("/jobs/j1/status"), null);
    // A token built by hand is unsigned: accepted for the server's origin only, as migration allows.
    ResilientHttpClient c = client(TimeSource.system()).newBuilder()
        .acceptUnsignedResumeTokens(List.of(server.url("/"))).build();
    try (Response r = c.resumeAsync(token, fastPolicy())
        .get(10, TimeUnit.SECONDS)) {
      assertThat(r.body().string()).contains("\"result\":\"done\"");
    }
    assertThat(server.seen("POST", "/jobs")).hasSize(1);
  }

  @Test
  void retryAfterIsHonouredOnEveryPollNeverEarly() throws IOException {
    server = new AsyncJobServer(time)
        .script(JobScript.succeedsAfterPolls(3).withRetryAfter(Duration.ofSeconds(3)));
    try (Response r = client(time).operation(submit()).awaitCompletion(policy().build())) {
      assertThat(r.code()).isEqualTo(200);
    }
    List<Seen> polls = server.seen("GET", "/status");
    assertThat(polls).hasSize(4);
    Duration previous = server.seen("POST", "/jobs").get(0).at();
    for (Seen poll : polls) {
      assertThat(Duration.between(java.time.Instant.EPOCH.plus(previous),
          java.time.Instant.EPOCH.plus(poll.at()))).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
      previous = poll.at();
    }
    assertThat(events.pollFromRetryAfter).containsOnly(true).hasSize(4);
  }

  @Test
  void aTransientPollFailureIsRetriedWithoutResubmitting() throws IOException {
    server = new AsyncJobServer(time)
        .script(JobScript.succeedsAfterPolls(1).withPollFaults(503, 429));
    try (Response r = client(time).operation(submit()).awaitCompletion(policy().build())) {
      assertThat(r.body().string()).contains("done");
    }
    assertThat(server.seen("POST", "/jobs")).hasSize(1);
    assertThat(server.jobsCreated()).isEqualTo(1);
    assertThat(events.kinds).containsExactly(AttemptKind.FIRST, AttemptKind.POLL,
        AttemptKind.RETRY, AttemptKind.RETRY, AttemptKind.POLL, AttemptKind.POLL);
    // The poll's own retries honoured the 503/429's Retry-After: 1.
    assertThat(time.sleeps()).contains(Duration.ofSeconds(1));
  }

  @Test
  void aTransientPollFailureAsync() throws Exception {
    server = new AsyncJobServer(TimeSource.system())
        .script(JobScript.succeedsAfterPolls(0).withPollFaults(503));
    // The poll's retry waits the 503's Retry-After: 1 s, on real time.
    try (Response r = client(TimeSource.system()).operation(submit()).awaitCompletionAsync(fastPolicy())
        .get(10, TimeUnit.SECONDS)) {
      assertThat(r.body().string()).contains("done");
    }
    assertThat(server.seen("POST", "/jobs")).hasSize(1);
    assertThat(events.kinds).contains(AttemptKind.RETRY);
  }

  @Test
  void everyStatusStyleIsFollowed() throws IOException {
    List<JobScript> scripts = List.of(
        JobScript.succeedsAfterPolls(1).withStatusHeader(StatusHeader.AZURE_ASYNC_OPERATION),
        JobScript.succeedsAfterPolls(1).withStatusHeader(StatusHeader.LOCATION).withResultInline(),
        JobScript.succeedsAfterPolls(1).withStatusHeader(StatusHeader.BODY_FIELD).withResultInline(),
        JobScript.succeedsAfterPolls(1).withSeeOther());
    server = new AsyncJobServer(time);
    AsyncOperationPolicy p = policy().statusLocator(StatusLocator.standardHeaders()
        .orElse(StatusLocator.bodyField("statusUrl"))).build();
    for (JobScript s : scripts) {
      server.script(s);
      try (Response r = client(time).operation(submit()).awaitCompletion(p)) {
        assertThat(r.code()).as(s.toString()).isEqualTo(200);
        assertThat(r.body().string()).as(s.toString()).contains("\"result\":\"done\"");
      }
    }
    assertThat(server.jobsCreated()).isEqualTo(4);
  }

  @Test
  void aLostJobEndsThePollWithTheToken() {
    server = new AsyncJobServer(time)
        .script(JobScript.succeedsAfterPolls(1).withEnd(JobScript.End.LOST));
    assertThatThrownBy(() -> client(time).operation(submit()).awaitCompletion(policy().build()))
        .isInstanceOfSatisfying(PollFailedException.class, e -> {
          assertThat(e.statusCode()).isEqualTo(404);
          assertThat(e.resumeToken().isAccepted()).isTrue();
        });
  }

  @Test
  void aNon202IsReturnedAsIs() throws IOException {
    server = new AsyncJobServer(time);
    Request get = new Request.Builder().url(server.url("/jobs/none/status")).build();
    try (Response r = client(time).operation(get).awaitCompletion(policy().build())) {
      assertThat(r.code()).isEqualTo(404);
    }
  }

  @Test
  void cancellingTheAsyncWaitStopsPolling() throws Exception {
    server = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(1_000));
    CompletableFuture<Response> f = client(TimeSource.system()).operation(submit())
        .awaitCompletionAsync(fastPolicy());
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> server.seen("GET", "/status").size() >= 2);
    f.cancel(true);
    Thread.sleep(100); // a poll in flight when cancelled may still arrive
    int after = server.seen("GET", "/status").size();
    Thread.sleep(200);
    assertThat(server.seen("GET", "/status")).hasSize(after);
    assertThat(f).isCancelled();
  }

  @Test
  void cancellingTheBlockingWaitStopsPolling() throws Exception {
    server = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(1_000));
    Operation op = client(TimeSource.system()).operation(submit());
    CompletableFuture<Throwable> thrown = CompletableFuture.supplyAsync(() -> {
      try {
        op.awaitCompletion(fastPolicy()).close();
        return null;
      } catch (IOException e) {
        return e;
      }
    });
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> server.seen("GET", "/status").size() >= 2);
    op.cancel();
    assertThat(thrown.get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(PollFailedException.class,
        e -> assertThat(e.reason()).isEqualTo("canceled"));
  }

  @Test
  void cancellingTheAsyncWaitBeforeTheSubmitAnsweredSendsNoPoll() throws Exception {
    server = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(1));
    CompletableFuture<Response> f = client(TimeSource.system()).operation(submit())
        .awaitCompletionAsync(fastPolicy());
    f.cancel(true);
    Thread.sleep(200);
    assertThat(f).isCancelled();
    assertThat(server.seen("GET", "/status")).isEmpty();
  }

  @Test
  void aStatusResourceOnAnotherOriginIsNotFollowedUnlessAllowed() throws Exception {
    server = new AsyncJobServer(time).script(JobScript.succeedsAfterPolls(0));
    try (mockwebserver3.MockWebServer other = new mockwebserver3.MockWebServer()) {
      other.start();
      other.enqueue(new mockwebserver3.MockResponse.Builder().code(202)
          .addHeader("Operation-Location", server.url("/jobs/j1/status").toString()).build());
      Request toOther = new Request.Builder().url(other.url("/jobs"))
          .post(RequestBody.create("{}", JSON)).build();
      assertThatThrownBy(() -> client(time).operation(toOther).awaitCompletion(policy().build()))
          .isInstanceOfSatisfying(PollFailedException.class,
              e -> assertThat(e.reason()).isEqualTo("other-origin"));
      assertThat(server.seen()).isEmpty();
      // Allowed: the job j1 does not exist on the status server until submitted there; submit it.
      client(time).operation(submit()).execute().close();
      other.enqueue(new mockwebserver3.MockResponse.Builder().code(202)
          .addHeader("Operation-Location", server.url("/jobs/j1/status").toString()).build());
      try (Response r = client(time).operation(toOther)
          .awaitCompletion(policy().allowOtherOrigins(true).build())) {
        assertThat(r.body().string()).contains("done");
      }
    }
  }

  @Test
  void retryAfterIsHonouredOnEveryPollAsync() throws Exception {
    server = new AsyncJobServer(TimeSource.system())
        .script(JobScript.succeedsAfterPolls(2).withRetryAfter(Duration.ofSeconds(1)));
    try (Response r = client(TimeSource.system()).operation(submit())
        .awaitCompletionAsync(fastPolicy()).get(20, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(200);
    }
    List<Seen> seen = server.seen();
    List<Seen> polls = server.seen("GET", "/status");
    assertThat(polls).hasSize(3);
    Duration previous = seen.get(0).at();
    for (Seen poll : polls) {
      assertThat(poll.at().minus(previous)).isGreaterThanOrEqualTo(Duration.ofMillis(990));
      previous = poll.at();
    }
    assertThat(events.pollFromRetryAfter).containsOnly(true);
  }
}
