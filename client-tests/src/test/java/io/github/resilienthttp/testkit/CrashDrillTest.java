package io.github.resilienthttp.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationOptions;
import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutboxResumer;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Crash drills: the payments server dies at each step of a keyed request ({@link CrashPoint}),
 * restarts on its durable {@link IdempotencyLedger}, and the caller resumes the operation with its
 * key through the SDK. Each drill shows what the caller sees meanwhile and that the payment exists
 * exactly once. One {@link FakeTimeSource} is both the SDK's time and the server's clock, so the
 * SDK's waits between 409s are what runs the in-progress lease down: the attempts are exact. The
 * resumer's stages ({@link ResumerCrashPoint}): a resumer that dies after the resume but before the
 * result handler leaves the intent parked and the next resumer hands it over once; one that dies
 * after the handler but before the removal makes the next one hand the same replayed result over
 * again (at least once: a record keyed by the intent keeps one).
 */
class CrashDrillTest {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final String KEY = "order-42-create-payment";
  private static final String PAYMENT = "{\"order\":\"order-42\",\"amount\":1000}";
  private static final Duration LEASE = Duration.ofSeconds(1);
  private static final Duration WAIT = Duration.ofMillis(400);
  private static final Duration RESUMER_LEASE = Duration.ofSeconds(30);

  private final FakeTimeSource time = new FakeTimeSource();
  private final IdempotencyLedger ledger = new IdempotencyLedger();
  private final OkHttpClient okHttp = new OkHttpClient();
  private final List<IdempotentTestServer> servers = new ArrayList<>();

  @AfterEach
  void tearDown() {
    servers.forEach(IdempotentTestServer::close);
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  @Test
  void crashAfterTheKeyIsRegisteredRunsThePaymentOnceWhenTheLeaseHasExpired() throws Exception {
    IdempotentTestServer restarted = crashAndRestart(CrashPoint.AFTER_KEY_REGISTERED);
    assertThat(ledger.effectCount()).as("payments made before the restart").isZero();

    Operation resumed = resume(restarted);
    try (Response response = resumed.execute()) {
      assertThat(response.code()).isEqualTo(201);
      assertThat(response.header("Idempotent-Replayed")).isNull();
      assertThat(response.body().string()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
    }

    assertThat(restarted.requests())
        .extracting(ReceivedRequest::outcome, ReceivedRequest::status)
        .containsExactly(inProgress(), inProgress(), inProgress(),
            org.assertj.core.groups.Tuple.tuple(Outcome.CREATED, 201));
    assertOnePaymentAfter(resumed, 4);
  }

  @Test
  void crashAfterTheBusinessWriteCompletesTheRecordFromTheWriteWithoutPayingAgain()
      throws Exception {
    IdempotentTestServer restarted = crashAndRestart(CrashPoint.AFTER_BUSINESS_WRITE);
    assertThat(ledger.effectCount()).as("payments made before the restart").isOne();

    Operation resumed = resume(restarted);
    try (Response response = resumed.execute()) {
      assertThat(response.code()).isEqualTo(201);
      assertThat(response.header("Idempotent-Replayed")).isEqualTo("true");
      assertThat(response.body().string()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
    }

    assertThat(restarted.requests())
        .extracting(ReceivedRequest::outcome, ReceivedRequest::status)
        .containsExactly(inProgress(), inProgress(), inProgress(),
            org.assertj.core.groups.Tuple.tuple(Outcome.RECOVERED, 201));
    assertThat(restarted.stats().recoveries()).isOne();
    assertOnePaymentAfter(resumed, 4);
  }

  @Test
  void crashAfterTheKeyIsMarkedDoneIsReplayedAtOnce() throws Exception {
    IdempotentTestServer restarted = crashAndRestart(CrashPoint.AFTER_KEY_COMPLETED);
    assertThat(ledger.effectCount()).as("payments made before the restart").isOne();
    assertThat(ledger.state(KEY)).isEqualTo(IdempotencyLedger.RecordState.COMPLETED);

    Operation resumed = resume(restarted);
    try (Response response = resumed.execute()) {
      assertThat(response.code()).isEqualTo(201);
      assertThat(response.header("Idempotent-Replayed")).isEqualTo("true");
      assertThat(response.body().string()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
    }

    assertThat(restarted.requests())
        .extracting(ReceivedRequest::outcome, ReceivedRequest::status)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(Outcome.REPLAYED, 201));
    assertOnePaymentAfter(resumed, 1);
  }

  @Test
  void aCallerThatGivesUpDuringTheLeaseSeesOnly409sAndNothingIsPaidTwice() throws Exception {
    IdempotentTestServer restarted = crashAndRestart(CrashPoint.AFTER_BUSINESS_WRITE);

    // Two attempts, 400 ms apart: both inside the 1 s lease of the crashed request.
    Operation impatient =
        client(2).operation(payment(restarted.url("/payments"))).idempotencyKey(KEY);
    try (Response response = impatient.execute()) {
      assertThat(response.code()).isEqualTo(409);
      assertThat(response.header("Content-Type")).isEqualTo(IdempotentTestServer.PROBLEM_JSON);
    }
    assertThat(ledger.state(KEY)).isEqualTo(IdempotencyLedger.RecordState.IN_PROGRESS);

    // Later, the same intent with the same key: two more 409s (at 0.4 s and 0.8 s), then the
    // lease has expired and the write is found.
    Operation later = resume(restarted);
    try (Response response = later.execute()) {
      assertThat(response.code()).isEqualTo(201);
      assertThat(response.header("Idempotent-Replayed")).isEqualTo("true");
    }
    assertThat(restarted.requests())
        .extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.IN_PROGRESS, Outcome.IN_PROGRESS, Outcome.IN_PROGRESS,
            Outcome.IN_PROGRESS, Outcome.RECOVERED);
    assertThat(ledger.effects()).extracting(Effect::key).containsExactly(KEY);
  }

  @Test
  void aPlainOkHttpCallResumedWithTheKeyInItsOperationOptionsEndsWithOnePaymentToo()
      throws Exception {
    IdempotentTestServer restarted = crashAndRestart(CrashPoint.AFTER_BUSINESS_WRITE);

    Request resumed = payment(restarted.url("/payments")).newBuilder()
        .tag(OperationOptions.class, OperationOptions.builder().idempotencyKey(KEY).build())
        .build();
    try (Response response = client(10).okHttpClient().newCall(resumed).execute()) {
      assertThat(response.code()).isEqualTo(201);
      assertThat(response.header("Idempotent-Replayed")).isEqualTo("true");
      assertThat(response.body().string()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
    }

    assertThat(restarted.requests())
        .extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.IN_PROGRESS, Outcome.IN_PROGRESS, Outcome.IN_PROGRESS,
            Outcome.RECOVERED);
    assertThat(restarted.keysSeen()).containsOnly(KEY);
    assertThat(ledger.effects()).extracting(Effect::key).containsExactly(KEY);
  }

  @Test
  void aRestartedServerKeepsItsLedgerAndItsPortButNotItsLog() throws Exception {
    IdempotentTestServer first = start();
    int port = first.port();
    try (Response r = client(1).operation(payment(first.url("/payments"))).idempotencyKey(KEY)
        .execute()) {
      assertThat(r.code()).isEqualTo(201);
    }

    IdempotentTestServer second = first.restart();
    servers.add(second);

    assertThat(second.port()).isEqualTo(port);
    assertThat(second.ledger()).isSameAs(ledger);
    assertThat(second.stats().effects()).isOne();
    assertThat(second.stats().requests()).isZero();
    assertThat(second.crashed()).isFalse();
  }

  // ---------------------------------------------------------------- the resumer's stages

  @Test
  void resumerDiesAfterTheResumeBeforeTheResult_theNextOneHandsItOverOnceWithOnePayment()
      throws Exception {
    CrashingOutbox outbox = new CrashingOutbox(Outbox.inMemory());
    IdempotentTestServer restarted = crashParkAndRestart(CrashPoint.AFTER_BUSINESS_WRITE, outbox);
    Map<String, String> records = new ConcurrentHashMap<>();
    List<String> handovers = new CopyOnWriteArrayList<>();

    outbox.crashAt(ResumerCrashPoint.AFTER_RESUME_BEFORE_RESULT);
    assertThatThrownBy(() -> resumer(outbox, restarted, "first", records, handovers).drainOnce())
        .isInstanceOf(CrashingOutbox.ProcessCrash.class);
    assertThat(restarted.requests()).extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.IN_PROGRESS, Outcome.IN_PROGRESS, Outcome.IN_PROGRESS,
            Outcome.RECOVERED);
    assertThat(handovers).isEmpty();
    assertThat(outbox.size()).as("the intent stays parked, leased by the dead resumer").isOne();

    OutboxResumer next = resumer(outbox, restarted, "next", records, handovers);
    assertThat(next.drainOnce().tried()).as("within the dead resumer's lease").isZero();
    time.advance(RESUMER_LEASE);
    assertThat(next.drainOnce()).isEqualTo(new OutboxResumer.Report(1, 0, 0, 0, 0));
    assertThat(handovers).containsExactly("next 201 {\"id\":\"pay_1\",\"effect\":1}");
    assertThat(records).containsOnlyKeys(KEY);
    assertThat(outbox.size()).isZero();
    assertThat(ledger.effects()).extracting(Effect::key).containsExactly(KEY);
  }

  @Test
  void resumerDiesAfterTheResultBeforeTheRemove_theNextOneHandsTheSameResultOverAgain()
      throws Exception {
    CrashingOutbox outbox = new CrashingOutbox(Outbox.inMemory());
    IdempotentTestServer restarted = crashParkAndRestart(CrashPoint.AFTER_KEY_COMPLETED, outbox);
    Map<String, String> records = new ConcurrentHashMap<>();
    List<String> handovers = new CopyOnWriteArrayList<>();

    outbox.crashAt(ResumerCrashPoint.AFTER_RESULT_BEFORE_REMOVE);
    assertThatThrownBy(() -> resumer(outbox, restarted, "first", records, handovers).drainOnce())
        .isInstanceOf(CrashingOutbox.ProcessCrash.class);
    assertThat(handovers).containsExactly("first 201 {\"id\":\"pay_1\",\"effect\":1}");
    assertThat(outbox.size()).as("not removed before the crash").isOne();

    time.advance(RESUMER_LEASE);
    OutboxResumer next = resumer(outbox, restarted, "next", records, handovers);
    assertThat(next.drainOnce()).isEqualTo(new OutboxResumer.Report(1, 0, 0, 0, 0));
    // At least once: the same replayed result again; the record keyed by the intent keeps one.
    assertThat(handovers).containsExactly("first 201 {\"id\":\"pay_1\",\"effect\":1}",
        "next 201 {\"id\":\"pay_1\",\"effect\":1}");
    assertThat(records).containsExactly(Map.entry(KEY, "first"));
    assertThat(restarted.requests()).extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.REPLAYED, Outcome.REPLAYED);
    assertThat(outbox.size()).isZero();
    assertThat(ledger.effects()).extracting(Effect::key).containsExactly(KEY);
  }

  /**
   * The first request crashes the server at {@code point}; its caller's operation parks the intent
   * (outcome unknown) in {@code outbox}; the server restarts on its ledger.
   */
  private IdempotentTestServer crashParkAndRestart(CrashPoint point, Outbox outbox)
      throws Exception {
    IdempotentTestServer server = start();
    server.crashAt(point);
    Operation first = client(1).operation(payment(server.url("/payments"))).idempotencyKey(KEY)
        .parkIndefiniteOutcomes(outbox);
    assertThatThrownBy(first::execute).isInstanceOf(OutcomeUnknownException.class);
    assertThat(outbox.size()).isOne();
    IdempotentTestServer restarted = server.restart();
    servers.add(restarted);
    return restarted;
  }

  /** A resumer "process": its handler records the payment once per intent key. */
  private OutboxResumer resumer(Outbox outbox, IdempotentTestServer server, String name,
      Map<String, String> records, List<String> handovers) {
    return OutboxResumer.builder(client(10), outbox).lease(RESUMER_LEASE)
        .requestFor(token -> payment(server.url("/payments")))
        .onResult((entry, r) -> {
          try {
            handovers.add(name + " " + r.code() + " " + r.peekBody(1024).string());
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
          records.putIfAbsent(entry.token().idempotencyKey(), name);
        }).build();
  }

  // ---------------------------------------------------------------- the drill's steps

  /**
   * Starts a server that crashes at {@code point} on the first keyed request, sends that request
   * as a one-attempt SDK operation and checks what its caller sees, then restarts the server on
   * the same ledger.
   */
  private IdempotentTestServer crashAndRestart(CrashPoint point) throws Exception {
    IdempotentTestServer server = start();
    server.crashAt(point);
    Operation first = client(1).operation(payment(server.url("/payments"))).idempotencyKey(KEY);

    // The connection closes after the request was written: the outcome is unknown, and the
    // exception carries the key to resume with.
    assertThatThrownBy(first::execute)
        .isInstanceOf(OutcomeUnknownException.class)
        .satisfies(e -> assertThat(((OperationFailure) e).idempotencyKey()).isEqualTo(KEY));
    assertThat(server.crashed()).isTrue();
    assertThat(server.requests())
        .extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.CRASHED);
    assertThat(ledger.state(KEY))
        .isEqualTo(point == CrashPoint.AFTER_KEY_COMPLETED
            ? IdempotencyLedger.RecordState.COMPLETED
            : IdempotencyLedger.RecordState.IN_PROGRESS);

    IdempotentTestServer restarted = server.restart();
    servers.add(restarted);
    return restarted;
  }

  /** The same intent, resumed with its key: up to 10 attempts, 400 ms apart. */
  private Operation resume(IdempotentTestServer server) {
    return client(10).operation(payment(server.url("/payments"))).idempotencyKey(KEY);
  }

  private void assertOnePaymentAfter(Operation resumed, int attempts) {
    assertThat(resumed.attempts()).isEqualTo(attempts);
    assertThat(ledger.effects())
        .extracting(Effect::key, Effect::body)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(KEY, PAYMENT));
    assertThat(ledger.state(KEY)).isEqualTo(IdempotencyLedger.RecordState.COMPLETED);
  }

  private static org.assertj.core.groups.Tuple inProgress() {
    return org.assertj.core.groups.Tuple.tuple(Outcome.IN_PROGRESS, 409);
  }

  private static final byte[] TOKEN_KEY = "crash-drill-resume-token-key-0123456".getBytes(
      java.nio.charset.StandardCharsets.UTF_8);

  private IdempotentTestServer start() throws Exception {
    IdempotentTestServer server =
        IdempotentTestServer.builder().ledger(ledger).clock(time).inProgressLease(LEASE).build()
            .start();
    servers.add(server);
    return server;
  }

  private ResilientHttpClient client(int maxAttempts) {
    return ResilientHttpClient.wrap(okHttp)
        .timeSource(time)
        .resumeTokenKey(TOKEN_KEY) // a restarted process verifies the tokens its predecessor parked
        .retryBudget(RetryBudget.unlimited())
        .noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(WAIT))
            .build())
        .build();
  }

  private static Request payment(HttpUrl url) {
    return new Request.Builder().url(url).post(RequestBody.create(PAYMENT, JSON)).build();
  }
}
