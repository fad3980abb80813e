package io.github.resilienthttp.server;

import static io.github.resilienthttp.server.Requests.post;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every store must give the guard; run on memory, H2 and PostgreSQL. */
abstract class GuardContractTest {
  final MutableClock clock = new MutableClock();
  final AtomicInteger effects = new AtomicInteger();
  final List<String> events = new CopyOnWriteArrayList<>();
  IdempotencyStore store;

  abstract IdempotencyStore newStore(MutableClock clock);

  @BeforeEach
  void setUpStore() {
    store = newStore(clock);
  }

  IdempotencyGuard.Builder guard() {
    return IdempotencyGuard.builder().store(store).clock(clock).lease(Duration.ofSeconds(10))
        .listener(new IdempotencyListener() {
          @Override public void claimed(String key, int attempt) { events.add("claimed " + key + " " + attempt); }
          @Override public void claimExpired(String key, int attempt) { events.add("claimExpired " + key + " " + attempt); }
          @Override public void replayed(String key, int status) { events.add("replayed " + key + " " + status); }
          @Override public void inProgress(String key) { events.add("inProgress " + key); }
          @Override public void mismatch(String key) { events.add("mismatch " + key); }
          @Override public void expiredKeyRefused(String key) { events.add("expiredKeyRefused " + key); }
          @Override public void leaseLost(String key) { events.add("leaseLost " + key); }
        });
  }

  IdempotentResponse charge(IdempotentRequest r) {
    int n = effects.incrementAndGet();
    return new IdempotentResponse(201, Map.of("Content-Type", List.of("application/json"),
        "Location", List.of("/payments/" + n), "Set-Cookie", List.of("s=1")),
        ("{\"id\":\"pay_" + n + "\"}").getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aRetryGetsTheRecordedResponseMarkedAsAReplayAndTheHandlerRunsOnce() {
    IdempotencyGuard guard = guard().build();
    IdempotentResponse first = guard.handle(post("k1", "{\"amount\":5}"), this::charge);
    IdempotentResponse retry = guard.handle(post("\"k1\"", "{\"amount\":5}"), this::charge);

    assertThat(effects).hasValue(1);
    assertThat(first.status()).isEqualTo(201);
    assertThat(first.header(IdempotencyGuard.REPLAYED)).isNull();
    assertThat(retry.status()).isEqualTo(201);
    assertThat(retry.bodyText()).isEqualTo("{\"id\":\"pay_1\"}");
    assertThat(retry.header("Location")).isEqualTo("/payments/1");
    assertThat(retry.header(IdempotencyGuard.REPLAYED)).isEqualTo("true");
    // Only the chosen headers are recorded: a session cookie is not handed to whoever retries.
    assertThat(retry.header("Set-Cookie")).isNull();
    assertThat(events).containsExactly("claimed k1 1", "replayed k1 201");
  }

  @Test
  void theSameKeyWithAnotherBodyGets422WithTheDraftsProblemAndNoEffect() {
    IdempotencyGuard guard = guard().build();
    guard.handle(post("k1", "{\"amount\":5}"), this::charge);
    IdempotentResponse other = guard.handle(post("k1", "{\"amount\":500}"), this::charge);

    assertThat(effects).hasValue(1);
    assertThat(other.status()).isEqualTo(422);
    assertThat(other.header("Content-Type")).isEqualTo("application/problem+json");
    assertThat(other.bodyText()).contains("\"type\":\"" + IdempotencyProblems.KEY_MISMATCH + "\"")
        .contains("Idempotency-Key is already used").contains("\"status\":422");
    assertThat(events).contains("mismatch k1");
  }

  @Test
  void aDuplicateWhileTheFirstRunsGets409WithRetryAfterAndTheDraftsProblem() {
    IdempotencyGuard guard = guard().retryAfter(Duration.ofSeconds(2)).build();
    Admission first = guard.admit(post("k1", "{}"));
    assertThat(first).isInstanceOf(Admission.Proceed.class);

    Admission dup = guard.admit(post("k1", "{}"));
    IdempotentResponse answer = ((Admission.Answer) dup).response();
    assertThat(((Admission.Answer) dup).kind()).isEqualTo(Admission.Kind.IN_PROGRESS);
    assertThat(answer.status()).isEqualTo(409);
    assertThat(answer.header("Retry-After")).isEqualTo("2");
    assertThat(answer.bodyText()).contains(IdempotencyProblems.KEY_IN_USE)
        .contains("A request is outstanding for this Idempotency-Key");

    ((Admission.Proceed) first).ticket().complete(IdempotentResponse.of(200, "text/plain", "ok"));
    assertThat(guard.handle(post("k1", "{}"), this::charge).bodyText()).isEqualTo("ok");
    assertThat(effects).hasValue(0);
    assertThat(events).contains("inProgress k1", "replayed k1 200");
  }

  @Test
  void keysAreScopedByPrincipalMethodAndRoute() {
    IdempotencyGuard guard = guard().build();
    guard.handle(post("k1", "{}", "alice"), this::charge);
    guard.handle(post("k1", "{}", "bob"), this::charge);
    IdempotentRequest otherRoute = new IdempotentRequest("POST", "/refunds", null,
        Map.of("Idempotency-Key", List.of("k1")), "{}".getBytes(StandardCharsets.UTF_8), "alice");
    guard.handle(otherRoute, this::charge);
    assertThat(effects).hasValue(3);

    IdempotencyGuard byTenant = guard().principal(r -> r.header("X-Tenant").orElse("none")).build();
    Map<String, List<String>> h = Map.of("Idempotency-Key", List.of("k2"), "X-Tenant", List.of("t1"));
    byTenant.handle(new IdempotentRequest("POST", "/payments", null, h, new byte[0], "alice"), this::charge);
    byTenant.handle(new IdempotentRequest("POST", "/payments", null, h, new byte[0], "bob"), this::charge);
    assertThat(effects).hasValue(4);
  }

  @Test
  void malformedOrMissingKeysGet400AndUnkeyedRequestsRunUnguardedUnlessRequired() {
    IdempotencyGuard lenient = guard().build();
    assertThat(lenient.handle(post("a b", "{}"), this::charge).status()).isEqualTo(400);
    assertThat(lenient.handle(post(null, "{}"), this::charge).status()).isEqualTo(201);
    assertThat(lenient.handle(post(null, "{}"), this::charge).status()).isEqualTo(201);
    assertThat(effects).hasValue(2);

    IdempotencyGuard strict = guard().keyRequired(true).keyFormat(IdempotencyKeyHeader.Format.STRING).build();
    IdempotentResponse missing = strict.handle(post(null, "{}"), this::charge);
    assertThat(missing.status()).isEqualTo(400);
    assertThat(missing.bodyText()).contains("Idempotency-Key is missing");
    assertThat(strict.handle(post("bare", "{}"), this::charge).status()).isEqualTo(400);
    assertThat(strict.handle(post("\"quoted\"", "{}"), this::charge).status()).isEqualTo(201);
    assertThat(effects).hasValue(3);
  }

  @Test
  void fiftyConcurrentDuplicatesMakeOneEffectAndTheOthersGet409OrTheReplay() throws Exception {
    IdempotencyGuard guard = guard().build();
    int n = 50;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<IdempotentResponse>> answers = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        answers.add(pool.submit(() -> {
          start.await();
          return guard.handle(post("burst", "{\"amount\":5}"), r -> {
            // Hold the lease until a duplicate has met it in progress (bounded).
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!events.contains("inProgress burst") && System.nanoTime() < until) sleep(1);
            return charge(r);
          });
        }));
      }
      start.countDown();
      int created = 0, replays = 0, conflicts = 0;
      for (Future<IdempotentResponse> f : answers) {
        IdempotentResponse r = f.get(30, TimeUnit.SECONDS);
        if (r.status() == 409) {
          conflicts++;
          assertThat(r.header("Retry-After")).isEqualTo("1");
        } else {
          assertThat(r.status()).isEqualTo(201);
          assertThat(r.bodyText()).isEqualTo("{\"id\":\"pay_1\"}");
          if ("true".equals(r.header(IdempotencyGuard.REPLAYED))) replays++; else created++;
        }
      }
      assertThat(effects).hasValue(1);
      assertThat(created).isEqualTo(1);
      assertThat(replays + conflicts).isEqualTo(n - 1);
      assertThat(conflicts).isPositive();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void anExpiredLeaseIsTakenOverOnceAndTheStaleHolderCannotComplete() {
    IdempotencyGuard guard = guard().build();
    IdempotencyTicket stale = ((Admission.Proceed) guard.admit(post("k1", "{}"))).ticket();
    clock.advance(Duration.ofSeconds(9));
    assertThat(guard.admit(post("k1", "{}"))).isInstanceOf(Admission.Answer.class);
    clock.advance(Duration.ofSeconds(1));

    IdempotentResponse retried = guard.handle(post("k1", "{}"), this::charge);
    assertThat(retried.status()).isEqualTo(201);
    // The crashed-and-revived holder finishes late: its lease is gone, the record keeps the retry's answer.
    stale.complete(IdempotentResponse.of(200, "text/plain", "stale"));
    assertThat(guard.handle(post("k1", "{}"), this::charge).bodyText()).isEqualTo("{\"id\":\"pay_1\"}");
    assertThat(effects).hasValue(1);
    assertThat(events).contains("claimExpired k1 2", "leaseLost k1");
  }

  @Test
  void aHandlerThatThrowsOrAnswers5xxReleasesTheKeySoTheRetryRunsAtOnce() {
    IdempotencyGuard guard = guard().build();
    try {
      guard.handle(post("k1", "{}"), r -> { throw new IllegalStateException("boom"); });
    } catch (IllegalStateException expected) {
      // the handler's exception goes through
    }
    assertThat(guard.handle(post("k1", "{}"), r -> IdempotentResponse.of(503, "text/plain", "busy")).status())
        .isEqualTo(503);
    assertThat(guard.handle(post("k1", "{}"), this::charge).status()).isEqualTo(201);
    assertThat(effects).hasValue(1);
    assertThat(events).doesNotContain("claimExpired k1 2", "claimExpired k1 3");
  }

  @Test
  void aBodyOverTheBoundIsReplayedEmptyWithAMarker() {
    IdempotencyGuard guard = guard().maxRecordedBody(4).build();
    guard.handle(post("k1", "{}"), r -> IdempotentResponse.of(200, "text/plain", "12345"));
    IdempotentResponse replay = guard.handle(post("k1", "{}"), this::charge);
    assertThat(replay.status()).isEqualTo(200);
    assertThat(replay.body()).isEmpty();
    assertThat(replay.header("Idempotent-Replayed-Body")).isEqualTo("omitted");
  }

  @Test
  void pastRetentionAKeyRunsAgainByDefaultOrIsRefusedWithAProblemUntilPurged() {
    IdempotencyGuard again = guard().retention(Duration.ofHours(1)).build();
    again.handle(post("k1", "{}"), this::charge);
    clock.advance(Duration.ofMinutes(59));
    assertThat(again.handle(post("k1", "{}"), this::charge).header(IdempotencyGuard.REPLAYED)).isEqualTo("true");
    clock.advance(Duration.ofMinutes(1));
    assertThat(again.handle(post("k1", "{}"), this::charge).header(IdempotencyGuard.REPLAYED)).isNull();
    assertThat(effects).hasValue(2);

    IdempotencyGuard refuse = guard().retention(Duration.ofHours(1)).keepExpiredKeys(Duration.ofDays(1))
        .afterRetention(AfterRetention.refuse()).build();
    refuse.handle(post("k2", "{}"), this::charge);
    clock.advance(Duration.ofHours(2));
    IdempotentResponse refused = refuse.handle(post("k2", "{}"), this::charge);
    assertThat(refused.status()).isEqualTo(422);
    assertThat(refused.bodyText()).contains(IdempotencyProblems.KEY_EXPIRED);
    assertThat(refuse.purge()).isZero(); // kept one more day to be recognised
    clock.advance(Duration.ofDays(1));
    assertThat(refuse.purge()).isEqualTo(2); // k1 (recorded again an hour in) and k2
    assertThat(refuse.handle(post("k2", "{}"), this::charge).status()).isEqualTo(201);
    assertThat(effects).hasValue(4);
    assertThat(events).contains("expiredKeyRefused k2");
  }

  @Test
  void invalidSettingsFailAtBuildNamingTheField() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> IdempotencyGuard.builder().build())
        .hasMessageContaining("store");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> guard().lease(Duration.ZERO).build())
        .hasMessageContaining("lease: PT0S");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> guard().maxRecordedBody(-1).build())
        .hasMessageContaining("maxRecordedBody: -1");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> guard().retention(Duration.ZERO).build())
        .hasMessageContaining("retention: PT0S");
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
