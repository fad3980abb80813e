package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilienthttp.micrometer.MicrometerOperationMetrics;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Claims, leases and fences of the in-memory outbox, and the resumer's order: an intent leaves the
 * outbox only after its result handler returned; a failing handler reschedules, never abandons; a
 * resumer that stalled past its lease is refused (outcome {@code lost}) and its handler is not called;
 * a schedule drains until stopped and survives a drain that throws; the Micrometer outbox gauges and
 * outcome counters.
 */
class OutboxClaimTest {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final Duration LEASE = Duration.ofSeconds(10);

  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  private final FakeTimeSource time = new FakeTimeSource();
  private final Outbox outbox = Outbox.inMemory();
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

  private ResilientHttpClient client() {
    // The tests park hand-made (unsigned) tokens: accepted for this server's origin only.
    return ResilientHttpClient.wrap(okHttp).timeSource(time)
        .acceptUnsignedResumeTokens(List.of(server.url("/"))).build();
  }

  private Request charge() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  private OutboxEntry park(String key) {
    ResumeToken token = ResumeToken.forSubmit("POST", server.url("/payments"), key, true, time.now());
    OutboxEntry e = new OutboxEntry(token, "outcome-unknown", time.now(), 0, time.now());
    outbox.park(e);
    return e;
  }

  @Test
  void aClaimLeasesItsEntriesAndAStaleClaimIsFenced() {
    park("key-a");
    park("key-b");
    park("key-c");
    Instant t0 = time.now();
    List<OutboxClaim> first = outbox.claim(t0, 2, LEASE);
    assertThat(first).extracting(OutboxClaim::idempotencyKey).containsExactlyInAnyOrder("key-a",
        "key-b");
    assertThat(first).allSatisfy(c -> assertThat(c.leaseExpiresAt()).isEqualTo(t0.plus(LEASE)));
    // Leased entries are neither claimed again nor due until the lease runs out.
    assertThat(outbox.claim(t0, 10, LEASE)).extracting(OutboxClaim::idempotencyKey)
        .containsExactly("key-c");
    assertThat(outbox.due(t0.plus(LEASE).minusMillis(1), 10)).isEmpty();
    assertThat(outbox.size()).isEqualTo(3);

    List<OutboxClaim> takeover = outbox.claim(t0.plus(LEASE), 10, LEASE);
    assertThat(takeover).extracting(OutboxClaim::idempotencyKey)
        .containsExactlyInAnyOrder("key-a", "key-b", "key-c");
    OutboxClaim staleA = first.stream().filter(c -> c.idempotencyKey().equals("key-a")).findFirst()
        .orElseThrow();
    OutboxClaim currentA = takeover.stream().filter(c -> c.idempotencyKey().equals("key-a"))
        .findFirst().orElseThrow();
    assertThat(currentA.token()).isNotEqualTo(staleA.token());
    assertThat(outbox.renew(staleA, t0.plus(LEASE), LEASE)).isFalse();
    assertThat(outbox.complete(staleA)).isFalse();
    assertThat(outbox.reschedule(staleA, staleA.entry().triedAgainAt(t0))).isFalse();
    assertThat(outbox.size()).isEqualTo(3);

    assertThat(outbox.renew(currentA, t0.plus(LEASE), LEASE)).isTrue();
    assertThat(outbox.complete(currentA)).isTrue();
    assertThat(outbox.complete(currentA)).isFalse();
    assertThat(outbox.size()).isEqualTo(2);
    assertThat(outbox.oldestParkedAt()).contains(t0);
  }

  @Test
  void parkingTheKeyAgainVoidsItsClaimAndRescheduleEndsTheLease() {
    park("key-a");
    OutboxClaim claim = outbox.claim(time.now(), 10, LEASE).get(0);
    park("key-a");
    assertThat(outbox.complete(claim)).isFalse();
    OutboxClaim again = outbox.claim(time.now(), 10, LEASE).get(0);
    Instant later = time.now().plusSeconds(3);
    assertThat(outbox.reschedule(again, again.entry().triedAgainAt(later))).isTrue();
    assertThat(outbox.due(later, 10)).singleElement()
        .satisfies(e -> assertThat(e.tries()).isEqualTo(1));
    assertThatThrownBy(() -> outbox.claim(time.now(), 1, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
  }

  @Test
  void theEntryLeavesOnlyAfterTheHandlerReturned() {
    park("key-a");
    List<Integer> sizesSeenByHandler = new CopyOnWriteArrayList<>();
    OutboxResumer.Report report = OutboxResumer.builder(client(), outbox)
        .requestFor(t -> charge())
        .onResult((e, r) -> sizesSeenByHandler.add(outbox.size())).build().drainOnce();
    assertThat(report).isEqualTo(new OutboxResumer.Report(1, 0, 0, 0, 0));
    assertThat(sizesSeenByHandler).containsExactly(1);
    assertThat(outbox.size()).isZero();
    assertThat(server.effectCountForKey("key-a")).isEqualTo(1);
  }

  @Test
  void aFailingHandlerReschedulesEvenOnTheLastTryAndTheResultIsHandedOverLater() {
    park("key-a");
    AtomicInteger calls = new AtomicInteger();
    List<Integer> delivered = new CopyOnWriteArrayList<>();
    OutboxResumer resumer = OutboxResumer.builder(client(), outbox).requestFor(t -> charge())
        .maxTries(1).retryDelay(Duration.ofSeconds(30))
        .onClaimedResult((claim, r) -> {
          if (calls.incrementAndGet() == 1) {
            throw new IllegalStateException("the business database is down");
          }
          delivered.add(r.code());
        }).build();
    assertThat(resumer.drainOnce()).isEqualTo(new OutboxResumer.Report(0, 0, 1, 0, 0));
    assertThat(outbox.size()).isEqualTo(1);
    assertThat(outbox.due(time.now(), 10)).isEmpty();
    time.advance(Duration.ofSeconds(30));
    assertThat(resumer.drainOnce()).isEqualTo(new OutboxResumer.Report(1, 0, 0, 0, 0));
    assertThat(delivered).containsExactly(201);
    assertThat(outbox.size()).isZero();
    assertThat(server.effectCountForKey("key-a")).isEqualTo(1);
  }

  @Test
  void aResumerThatStalledPastItsLeaseIsRefusedAndItsHandlerNotCalled() {
    park("key-a");
    List<String> handledBy = new CopyOnWriteArrayList<>();
    AtomicReference<OutboxResumer.Report> reportOfB = new AtomicReference<>();
    OutboxResumer b = OutboxResumer.builder(client(), outbox).requestFor(t -> charge()).lease(LEASE)
        .onResult((e, r) -> handledBy.add("b")).build();
    OutboxResumer a = OutboxResumer.builder(client(), outbox).lease(LEASE)
        .requestFor(t -> {
          // a stalls here past its lease; b takes the intent over and settles it meanwhile.
          time.advance(LEASE);
          reportOfB.set(b.drainOnce());
          return charge();
        })
        .onResult((e, r) -> handledBy.add("a")).build();
    assertThat(a.drainOnce()).isEqualTo(new OutboxResumer.Report(0, 0, 0, 0, 1));
    assertThat(reportOfB.get()).isEqualTo(new OutboxResumer.Report(1, 0, 0, 0, 0));
    assertThat(handledBy).containsExactly("b");
    assertThat(outbox.size()).isZero();
    assertThat(server.effectCountForKey("key-a")).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(2); // a's late resume met the stored response
  }

  @Test
  void lateInASlowBatchAnIntentTakenOverMeanwhileIsNotResumedAgain() {
    park("key-a");
    park("key-b");
    List<String> handledBy = new CopyOnWriteArrayList<>();
    OutboxResumer b = OutboxResumer.builder(client(), outbox).requestFor(t -> charge()).lease(LEASE)
        .onResult((e, r) -> handledBy.add("b " + e.token().idempotencyKey())).build();
    AtomicReference<OutboxResumer.Report> reportOfB = new AtomicReference<>();
    OutboxResumer a = OutboxResumer.builder(client(), outbox).lease(LEASE)
        .requestFor(t -> {
          if (t.idempotencyKey().equals("key-a")) {
            time.advance(LEASE); // key-a's resume is slow: key-b's claim runs out meanwhile
            reportOfB.set(b.drainOnce()); // b takes both over and settles them
          }
          return charge();
        })
        .onResult((e, r) -> handledBy.add("a " + e.token().idempotencyKey())).build();
    assertThat(a.drainOnce()).isEqualTo(new OutboxResumer.Report(0, 0, 0, 0, 2));
    assertThat(reportOfB.get()).isEqualTo(new OutboxResumer.Report(2, 0, 0, 0, 0));
    assertThat(handledBy).containsExactly("b key-a", "b key-b");
    // a resumed key-a (a replay) but never sent key-b again.
    assertThat(server.stats().requests()).isEqualTo(3);
    assertThat(outbox.size()).isZero();
  }

  @Test
  void aScheduleDrainsUntilStoppedAndSurvivesADrainThatThrows() throws Exception {
    AtomicInteger claims = new AtomicInteger();
    Outbox flaky = new Outbox() {
      @Override public void park(OutboxEntry entry) { outbox.park(entry); }
      @Override public List<OutboxEntry> due(Instant now, int max) { return outbox.due(now, max); }
      @Override public void remove(String key) { outbox.remove(key); }
      @Override public int size() { return outbox.size(); }
      @Override public List<OutboxClaim> claim(Instant now, int max, Duration lease) {
        if (claims.incrementAndGet() == 1) {
          throw new IllegalStateException("database down");
        }
        return outbox.claim(now, max, lease);
      }
      @Override public boolean complete(OutboxClaim c) { return outbox.complete(c); }
    };
    park("key-a");
    ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    try {
      OutboxResumer resumer = OutboxResumer.builder(client(), flaky).requestFor(t -> charge())
          .build();
      OutboxResumer.Schedule schedule = resumer.start(executor, Duration.ofMillis(5));
      await().atMost(Duration.ofSeconds(10)).until(() -> outbox.size() == 0);
      assertThat(schedule.stop(Duration.ofSeconds(10))).isTrue();
      assertThat(schedule.isStopped()).isTrue();
      int after = claims.get();
      park("key-b");
      // No drain may run after stop: key-b stays parked, and nothing claims again.
      await().during(Duration.ofMillis(50)).atMost(Duration.ofSeconds(5))
          .until(() -> claims.get() == after);
      assertThat(claims.get()).isEqualTo(after);
      assertThat(outbox.size()).isEqualTo(1);
      assertThat(claims.get()).isGreaterThanOrEqualTo(2);
      assertThatThrownBy(() -> resumer.start(executor, Duration.ZERO))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
    } finally {
      executor.shutdownNow();
    }
    assertThat(server.effectCountForKey("key-a")).isEqualTo(1);
  }

  @Test
  void micrometerGaugesShowDepthAndOldestAgeAndCountersCountOutcomes() {
    MockClock clock = new MockClock();
    SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
    MicrometerOperationMetrics metrics = new MicrometerOperationMetrics(registry)
        .bindOutbox(outbox, "payments");
    assertThat(registry.get("resilient.http.outbox.depth").tag("outbox", "payments").gauge()
        .value()).isZero();
    assertThat(registry.get("resilient.http.outbox.oldest_age").gauge().value()).isZero();

    clock.add(Duration.ofMillis(time.now().toEpochMilli() - clock.wallTime())); // one "now"
    park("key-a");
    park("key-no-request");
    clock.add(Duration.ofSeconds(90));
    assertThat(registry.get("resilient.http.outbox.depth").gauge().value()).isEqualTo(2);
    assertThat(registry.get("resilient.http.outbox.oldest_age").gauge().value()).isEqualTo(90);

    ResilientHttpClient c = ResilientHttpClient.wrap(okHttp).timeSource(time).addListener(metrics)
        .acceptUnsignedResumeTokens(List.of(server.url("/")))
        .build();
    OutboxResumer.builder(c, outbox)
        .requestFor(t -> t.idempotencyKey().equals("key-a") ? charge() : null).build().drainOnce();
    assertThat(registry.get("resilient.http.parked.tried").tag("outcome", "resumed").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get("resilient.http.parked.tried").tag("outcome", "abandoned").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get("resilient.http.outbox.depth").gauge().value()).isZero();
  }

  @Test
  void leaseIsValidated() {
    assertThatThrownBy(() -> OutboxResumer.builder(client(), outbox).lease(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
  }
}
