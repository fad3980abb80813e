package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.AsyncOperationDeadlineExceededException;
import io.github.resilienthttp.AsyncOperationPolicy;
import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OutcomeQuery;
import io.github.resilienthttp.OutcomeQueryPolicy;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.PollFailedException;
import io.github.resilienthttp.PollStatus;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResumeToken;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.testkit.AsyncJobServer;
import io.github.resilienthttp.testkit.AsyncJobServer.JobScript;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.LookupPaymentsServer;
import io.github.resilienthttp.testkit.LookupPaymentsServer.Submit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The features above the retry loop are steps of the operation's one run (issue 21): the 202 wait
 * and the outcome query run under the run's one deadline (the operation's own retry policy's, not
 * the client's) and stop on its one cancel signal; each is written once, so the blocking and the
 * non-blocking drivers take the same steps. Real sockets; an injected clock where the test waits.
 */
@Timeout(30)
class StepRunTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  private final FakeTimeSource time = new FakeTimeSource();
  private final List<String> events = new CopyOnWriteArrayList<>();
  private AsyncJobServer jobs;
  private LookupPaymentsServer payments;

  @AfterEach
  void tearDown() {
    if (jobs != null) {
      jobs.close();
    }
    if (payments != null) {
      payments.close();
    }
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  private ResilientHttpClient client(TimeSource ts) {
    return ResilientHttpClient.wrap(okHttp).timeSource(ts)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10)))
            .deadline(Duration.ofSeconds(30)).build())
        .addListener(new OperationListener() {
          @Override
          public void attemptStarted(OperationInfo operation, int attempt, AttemptKind kind) {
            events.add("attempt " + kind);
          }

          @Override
          public void asyncOperationAccepted(OperationInfo operation, ResumeToken token) {
            events.add("accepted");
          }

          @Override
          public void pollScheduled(OperationInfo operation, int poll, Duration delay,
              boolean fromRetryAfter) {
            events.add("poll " + poll + " in " + delay.toMillis() + " ms");
          }

          @Override
          public void pollCompleted(OperationInfo operation, int poll, PollStatus status) {
            events.add("poll " + poll + " " + status.state());
          }

          @Override
          public void outcomeQueried(OperationInfo operation, OutcomeQuery.Answer answer) {
            events.add("queried " + answer);
          }
        }).build();
  }

  private Request submit() {
    return new Request.Builder().url(jobs.url("/jobs"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  private static Response await(Operation op, AsyncOperationPolicy policy, boolean async)
      throws Exception {
    return async ? join(op.awaitCompletionAsync(policy)) : op.awaitCompletion(policy);
  }

  private static Response run(Operation op, boolean async) throws Exception {
    return async ? join(op.executeAsync()) : op.execute();
  }

  /** The future's response, or the failure it completed with. */
  private static Response join(CompletableFuture<Response> f) throws Exception {
    try {
      return f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void theBlockingAndTheNonBlockingWaitTakeTheSameSteps(boolean async) throws Exception {
    jobs = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(2));
    AsyncOperationPolicy policy = AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(5))
        .maxPollInterval(Duration.ofMillis(5)).jitter(0).deadline(Duration.ofSeconds(10)).build();
    try (Response r = await(client(TimeSource.system()).operation(submit()), policy, async)) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.request().url().encodedPath()).isEqualTo("/jobs/j1/result");
    }
    // One machine, two drivers: the same events in the same order, whichever drove it.
    assertThat(events).containsExactly("attempt FIRST", "accepted", "poll 1 in 5 ms",
        "attempt POLL", "poll 1 RUNNING", "poll 2 in 5 ms", "attempt POLL", "poll 2 RUNNING",
        "poll 3 in 5 ms", "attempt POLL", "poll 3 SUCCEEDED", "attempt POLL");
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void theWaitRunsUnderTheOperationsOwnRetryPolicyDeadline(boolean async) {
    jobs = new AsyncJobServer(time).script(JobScript.succeedsAfterPolls(2));
    // No deadline on the wait's policy: the operation's own retry policy's 1 s, not the client's
    // 30 s, bounds the whole run, so a first poll due in 2 s is refused at once.
    AsyncOperationPolicy policy = AsyncOperationPolicy.builder().minPollInterval(Duration.ofSeconds(2))
        .jitter(0).build();
    Operation op = client(time).operation(submit())
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofSeconds(1)).build());
    assertThatThrownBy(() -> await(op, policy, async))
        .isInstanceOf(AsyncOperationDeadlineExceededException.class)
        .hasMessageContaining("could only start after the deadline");
    assertThat(jobs.seen("GET", "/status")).isEmpty();
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void theOutcomeQueryRunsUnderTheOperationsOwnRetryPolicyDeadline(boolean async) {
    payments = new LookupPaymentsServer();
    payments.script(Submit.CHARGE_THEN_DROP);
    Request post = new Request.Builder().url(payments.url("/payments"))
        .post(RequestBody.create("{\"amount\":100,\"reference\":\"order-42\"}", JSON)).build();
    // The grace delay (2 s) does not fit in the operation's own 1 s deadline: no query is sent,
    // although the client's deadline (30 s) would have left time for it.
    Operation op = client(time).operation(post).sendIdempotencyKey(false)
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofSeconds(1)).build())
        .outcomeQuery(OutcomeQueryPolicy.builder(
            OutcomeQuery.lookup((request, key) -> payments.lookupUrl("order-42"))).build());
    assertThatThrownBy(() -> run(op, async)).isInstanceOfSatisfying(OutcomeUnknownException.class,
        e -> assertThat(e.getSuppressed()).singleElement()
            .isInstanceOf(DeadlineExceededException.class));
    assertThat(events).containsExactly("attempt FIRST", "queried CANNOT_TELL");
    assertThat(payments.submits()).isEqualTo(1);
  }

  @Test
  void operationCancelBetweenPollsEndsTheAsyncWaitAtOnceAndSendsNoPoll() throws Exception {
    jobs = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(1));
    AsyncOperationPolicy policy = AsyncOperationPolicy.builder().minPollInterval(Duration.ofSeconds(20))
        .jitter(0).deadline(Duration.ofSeconds(60)).build();
    Operation op = client(TimeSource.system()).operation(submit());
    CompletableFuture<Response> f = op.awaitCompletionAsync(policy);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> events.contains("poll 1 in 20000 ms"));
    // The run is the one cancel target: it cuts the scheduled wait short, and the future the SDK
    // returned ends now, not when the 20 s wait would have passed.
    op.cancel();
    assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).isInstanceOf(CancellationException.class);
    assertThat(jobs.seen("GET", "/status")).isEmpty();
  }

  @Test
  void operationCancelBetweenPollsWakesTheBlockingWaitAtOnce() throws Exception {
    jobs = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(1));
    AsyncOperationPolicy policy = AsyncOperationPolicy.builder().minPollInterval(Duration.ofSeconds(20))
        .jitter(0).deadline(Duration.ofSeconds(60)).build();
    Operation op = client(TimeSource.system()).operation(submit());
    CompletableFuture<Throwable> thrown = CompletableFuture.supplyAsync(() -> {
      try {
        op.awaitCompletion(policy).close();
        return null;
      } catch (Exception e) {
        return e;
      }
    });
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> events.contains("poll 1 in 20000 ms"));
    op.cancel();
    assertThat(thrown.get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(PollFailedException.class,
        e -> assertThat(e.reason()).isEqualTo("canceled"));
    assertThat(jobs.seen("GET", "/status")).isEmpty();
  }

  @Test
  void aCancelBeforeTheStartEndsTheWaitWithoutSendingAnything() {
    jobs = new AsyncJobServer(TimeSource.system()).script(JobScript.succeedsAfterPolls(1));
    Operation op = client(TimeSource.system()).operation(submit());
    op.cancel();
    assertThatThrownBy(() -> op.awaitCompletion(AsyncOperationPolicy.defaults()))
        .hasMessageContaining("cancel");
    assertThat(jobs.seen()).isEmpty();
  }
}
