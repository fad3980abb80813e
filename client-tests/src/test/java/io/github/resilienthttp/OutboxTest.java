package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.AsyncJobServer.JobScript;
import io.github.resilienthttp.testkit.AsyncJobServer;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The failure exit: an operation without a definite outcome parks its intent in an {@link Outbox}
 * (a listener event), and an {@link OutboxResumer} drains it later with the same key: one charge;
 * bounded by batch size and tries; definite failures are not parked; async variants.
 */
class OutboxTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  private final FakeTimeSource time = new FakeTimeSource();
  private final Outbox outbox = Outbox.inMemory();
  private final List<String> events = new CopyOnWriteArrayList<>();
  private IdempotentTestServer server;

  @BeforeEach
  void setUp() throws IOException {
    server = IdempotentTestServer.startDefault();
  }

  @AfterEach
  void tearDown() {
    server.close();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  /** The resume token key every "process" of this test shares (a restarted one resumes tokens). */
  private static final byte[] TOKEN_KEY = "0123456789abcdef0123456789abcdef".getBytes(
      java.nio.charset.StandardCharsets.US_ASCII);

  private ResilientHttpClient client() {
    return ResilientHttpClient.wrap(okHttp).timeSource(time).resumeTokenKey(TOKEN_KEY)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .addListener(new OperationListener() {
          @Override
          public void operationParked(OperationInfo operation, OutboxEntry entry) {
            events.add("parked " + entry.reason());
          }

          @Override
          public void parkedOperationTried(OperationInfo operation, OutboxEntry entry,
              String outcome) {
            events.add(outcome);
          }
        }).build();
  }

  private Request charge() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  private OutboxResumer.Builder resumer(ResilientHttpClient c) {
    return OutboxResumer.builder(c, outbox).requestFor(token -> charge())
        .retryDelay(Duration.ofSeconds(30));
  }

  @Test
  void anUnknownOutcomeIsParkedAndResumedLaterWithOneCharge() throws IOException {
    server.script(Fault.processThenDrop(), Fault.processThenDrop(), Fault.processThenDrop());
    Operation op = client().operation(charge()).parkIndefiniteOutcomes(outbox);
    assertThatThrownBy(op::execute).isInstanceOf(OutcomeUnknownException.class);
    assertThat(outbox.size()).isEqualTo(1);
    OutboxEntry parked = outbox.due(time.now(), 10).get(0);
    assertThat(parked.token().idempotencyKey()).isEqualTo(op.idempotencyKey());
    assertThat(parked.token().isAccepted()).isFalse();

    List<Integer> results = new CopyOnWriteArrayList<>();
    OutboxResumer.Report report = resumer(client()).onResult((e, r) -> results.add(r.code()))
        .build().drainOnce();
    assertThat(report).isEqualTo(new OutboxResumer.Report(1, 0, 0, 0));
    assertThat(results).containsExactly(201);
    assertThat(outbox.size()).isZero();
    assertThat(server.effectCountForKey(op.idempotencyKey())).isEqualTo(1);
    assertThat(events).containsExactly("parked attempts-exhausted", "resumed");
  }

  @Test
  void parkedAsync() throws Exception {
    server.script(Fault.processThenDrop(), Fault.processThenDrop(), Fault.processThenDrop());
    ResilientHttpClient c = ResilientHttpClient.wrap(okHttp).addListener(new OperationListener() {
      @Override
      public void operationParked(OperationInfo operation, OutboxEntry entry) {
        events.add("parked " + entry.reason());
      }
    }).retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .build();
    Operation op = c.operation(charge()).parkIndefiniteOutcomes(outbox);
    assertThat(op.executeAsync()).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
        .havingCause().isInstanceOf(OutcomeUnknownException.class);
    assertThat(outbox.size()).isEqualTo(1);
    assertThat(resumer(c).build().drainOnce().resumed()).isEqualTo(1);
    assertThat(server.effectCountForKey(op.idempotencyKey())).isEqualTo(1);
  }

  @Test
  void anAcceptedJobPastItsDeadlineIsParkedAndAwaitedLater() throws Exception {
    try (AsyncJobServer jobs = new AsyncJobServer(time)) {
      jobs.script(JobScript.succeedsAfter(Duration.ofSeconds(20)));
      Request submit = new Request.Builder().url(jobs.url("/jobs"))
          .post(RequestBody.create("{}", JSON)).build();
      AsyncOperationPolicy p = AsyncOperationPolicy.builder().minPollInterval(Duration.ofSeconds(1))
          .jitter(0).deadline(Duration.ofSeconds(5)).build();
      assertThatThrownBy(() -> client().operation(submit).parkIndefiniteOutcomes(outbox)
          .awaitCompletion(p)).isInstanceOf(AsyncOperationDeadlineExceededException.class);
      assertThat(outbox.due(time.now(), 10)).singleElement()
          .satisfies(e -> assertThat(e.token().isAccepted()).isTrue());
      time.advance(Duration.ofSeconds(30));
      OutboxResumer.Report report = OutboxResumer.builder(client(), outbox)
          .policy(p.toBuilder().deadline(Duration.ofSeconds(60)).build()).build().drainOnce();
      assertThat(report.resumed()).isEqualTo(1);
      assertThat(jobs.seen("POST", "/jobs")).hasSize(1);
    }
  }

  @Test
  void anAcceptedJobParkedAsync() throws Exception {
    try (AsyncJobServer jobs = new AsyncJobServer(TimeSource.system())) {
      jobs.script(JobScript.succeedsAfterPolls(1_000));
      Request submit = new Request.Builder().url(jobs.url("/jobs"))
          .post(RequestBody.create("{}", JSON)).build();
      AsyncOperationPolicy p = AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(10))
          .maxPollInterval(Duration.ofMillis(20)).deadline(Duration.ofMillis(200)).build();
      ResilientHttpClient c = ResilientHttpClient.wrap(okHttp).build();
      assertThatThrownBy(() -> c.operation(submit).parkIndefiniteOutcomes(outbox)
          .awaitCompletionAsync(p).get(10, TimeUnit.SECONDS)).cause()
          .isInstanceOf(AsyncOperationDeadlineExceededException.class);
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
          .until(() -> outbox.size() == 1);
    }
  }

  @Test
  void drainsAreBoundedAndAnIntentStillOpenIsRescheduledThenAbandoned() throws IOException {
    for (int i = 0; i < 2; i++) {
      server.script(Fault.processThenDrop(), Fault.processThenDrop(), Fault.processThenDrop());
      assertThatThrownBy(client().operation(charge()).parkIndefiniteOutcomes(outbox)::execute)
          .isInstanceOf(OutcomeUnknownException.class);
    }
    assertThat(outbox.size()).isEqualTo(2);
    server.script(Fault.status(503), Fault.status(503), Fault.status(503));
    OutboxResumer r = resumer(client()).batchSize(1).maxTries(2).build();
    assertThat(r.drainOnce()).isEqualTo(new OutboxResumer.Report(0, 0, 1, 0));
    // The rescheduled one is not due yet; the other is, and succeeds.
    assertThat(r.drainOnce()).isEqualTo(new OutboxResumer.Report(1, 0, 0, 0));
    assertThat(r.drainOnce().tried()).isZero();
    time.advance(Duration.ofSeconds(31));
    server.script(Fault.status(503), Fault.status(503), Fault.status(503));
    assertThat(r.drainOnce()).isEqualTo(new OutboxResumer.Report(0, 0, 0, 1));
    assertThat(outbox.size()).isZero();
    assertThat(events).containsSubsequence("rescheduled", "resumed", "abandoned");
  }

  @Test
  void aDefiniteFailureIsNotParked() {
    try (AsyncJobServer jobs = new AsyncJobServer(time)) {
      jobs.script(JobScript.failsAfterPolls(0));
      Request submit = new Request.Builder().url(jobs.url("/jobs"))
          .post(RequestBody.create("{}", JSON)).build();
      assertThatThrownBy(() -> client().operation(submit).parkIndefiniteOutcomes(outbox)
          .awaitCompletion(AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(10))
              .build())).isInstanceOf(AsyncOperationFailedException.class);
      assertThat(outbox.size()).isZero();
    }
  }

  @Test
  void anIntentWithoutAKeyIsAbandonedNotResent() {
    server.script(Fault.processThenDrop());
    assertThatThrownBy(client().operation(charge()).sendIdempotencyKey(false)
        .parkIndefiniteOutcomes(outbox)::execute).isInstanceOf(OutcomeUnknownException.class);
    assertThat(resumer(client()).build().drainOnce().abandoned()).isEqualTo(1);
    assertThat(server.stats().toString()).isNotEmpty();
    assertThat(outbox.size()).isZero();
  }

  @Test
  void resumerValidates() {
    assertThatThrownBy(() -> resumer(client()).batchSize(0).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> resumer(client()).maxTries(0).build())
        .isInstanceOf(IllegalArgumentException.class);
  }
}
