package io.github.resilienthttp.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.callbacks.CallbackResponse.Outcome;
import io.github.resilienthttp.callbacks.testkit.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class CallbackReceiverTest {
  static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  final ManualClock clock = new ManualClock(Instant.parse("2026-12-01T10:00:00Z"));
  final StandardWebhooksScheme scheme = StandardWebhooksScheme.of(SECRET);
  final InMemoryProcessingStore store = InMemoryProcessingStore.builder().clock(clock).build();
  final CallbackReceiver receiver = CallbackReceiver.builder().store(store).lease(Duration.ofSeconds(30))
      .verifier(CallbackVerifier.builder().scheme(scheme).clock(clock).build()).build();
  final AtomicInteger effects = new AtomicInteger();
  final CallbackHandler handler = callback -> "effect " + effects.incrementAndGet();

  Map<String, List<String>> signed(String id, byte[] body) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    scheme.sign(id, clock.instant(), body).forEach((k, v) -> h.put(k, List.of(v)));
    return h;
  }

  static byte[] body(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void processedThenDuplicate_bothAcknowledged_handlerRunsOnce() {
    byte[] body = body("{\"id\":\"evt_1\"}");
    CallbackResponse first = receiver.receive(signed("evt_1", body), body, handler);
    assertThat(first.status()).isEqualTo(200);
    assertThat(first.outcome()).isEqualTo(Outcome.PROCESSED);
    assertThat(first.eventId()).contains("evt_1");
    assertThat(first.body()).isEqualTo("{\"status\":\"processed\"}");
    assertThat(first.headers()).containsExactly(Map.entry("Content-Type", "application/json"));
    CallbackResponse again = receiver.receive(signed("evt_1", body), body, handler);
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.outcome()).isEqualTo(Outcome.DUPLICATE);
    assertThat(effects).hasValue(1);
    assertThat(store.claim("standard-webhooks", "evt_1", Duration.ofSeconds(1)))
        .isInstanceOfSatisfying(Claim.Done.class, d -> assertThat(d.result()).isEqualTo("effect 1"));
  }

  @Test
  void whileAnotherConsumerHoldsTheLease_409WithRetryAfterInWholeSecondsRoundedUp() {
    store.claim("standard-webhooks", "evt_busy", Duration.ofMillis(12_300));
    CallbackResponse busy = receiver.receive(signed("evt_busy", body("{}")), body("{}"), handler);
    assertThat(busy.status()).isEqualTo(409);
    assertThat(busy.outcome()).isEqualTo(Outcome.IN_PROGRESS);
    assertThat(busy.headers()).containsEntry("Retry-After", "13");
    assertThat(busy.outcome().acknowledged()).isFalse();
    assertThat(effects).hasValue(0);
  }

  @Test
  void handlerFailure_500_recordReleased_redeliveryProcesses() {
    byte[] body = body("{}");
    CallbackResponse failed = receiver.receive(signed("evt_f", body), body, cb -> {
      throw new IllegalStateException("db password is hunter2");
    });
    assertThat(failed.status()).isEqualTo(500);
    assertThat(failed.body()).doesNotContain("hunter2");
    CallbackResponse retry = receiver.receive(signed("evt_f", body), body, handler);
    assertThat(retry.outcome()).isEqualTo(Outcome.PROCESSED);
    assertThat(effects).hasValue(1);
  }

  @Test
  void verificationFailuresMapTo400And401_andRecordNothing() {
    byte[] body = body("{}");
    Map<String, List<String>> good = signed("evt_v", body);
    assertThat(receiver.receive(good, body("{ }"), handler).status()).isEqualTo(401);
    assertThat(receiver.receive(Map.of(), body, handler).outcome()).isEqualTo(Outcome.MALFORMED);
    assertThat(receiver.receive(Map.of(), body, handler).status()).isEqualTo(400);
    clock.advance(Duration.ofMinutes(6));
    CallbackResponse stale = receiver.receive(good, body, handler);
    assertThat(stale.status()).isEqualTo(400);
    // What is wrong, not the receiver's clock (the failure keeps that for the receiver's logs).
    assertThat(stale.body()).isEqualTo("{\"error\":\"timestamp_out_of_tolerance\",\"message\":"
        + "\"the signed timestamp is too old\"}");
    assertThat(stale.failure()).hasValueSatisfying(
        f -> assertThat(f).hasMessageContaining("receiver's clock"));
    assertThat(store.size()).isZero();
    assertThat(effects).hasValue(0);
  }

  @Test
  void stripe_eventIdFromTheBody() {
    StripeScheme stripe = StripeScheme.of("whsec_test_2XnXbNcbvnqSnMd8Yk0b5tEf");
    Pattern idField = Pattern.compile("\"id\"\\s*:\\s*\"([^\"]+)\"");
    CallbackReceiver r = CallbackReceiver.builder().store(store).scope("stripe:acct_1")
        .verifier(CallbackVerifier.builder().scheme(stripe).clock(clock).build())
        .eventId(cb -> {
          Matcher m = idField.matcher(cb.bodyUtf8()); // use your JSON library in real code
          return m.find() ? m.group(1) : null;
        }).build();
    byte[] body = body("{\"id\":\"evt_1NG8Du2eZvKYlo2CUI79vXWy\",\"object\":\"event\"}");
    Map<String, List<String>> h = Map.of("Stripe-Signature",
        List.of(stripe.sign(null, clock.instant(), body).get("Stripe-Signature")));
    assertThat(r.receive(h, body, handler).outcome()).isEqualTo(Outcome.PROCESSED);
    assertThat(r.receive(h, body, handler).outcome()).isEqualTo(Outcome.DUPLICATE);
    assertThat(store.claim("stripe:acct_1", "evt_1NG8Du2eZvKYlo2CUI79vXWy", Duration.ofSeconds(1)))
        .isInstanceOf(Claim.Done.class);
    byte[] noId = body("{\"object\":\"event\"}");
    Map<String, List<String>> h2 = Map.of("Stripe-Signature",
        List.of(stripe.sign(null, clock.instant(), noId).get("Stripe-Signature")));
    assertThat(r.receive(h2, noId, handler).status()).isEqualTo(400);
    assertThat(effects).hasValue(1);
  }

  @Test
  void burstOf10000DeliveriesWith30PercentDuplicatesOnTheInMemoryStore() throws Exception {
    ConcurrentHashMap<String, AtomicInteger> perEvent = new ConcurrentHashMap<>();
    CallbackHandler countPerEvent = cb ->
        "n=" + perEvent.computeIfAbsent(cb.eventId().orElseThrow(), k -> new AtomicInteger()).incrementAndGet();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 7_000; i++) ids.add("evt_" + i);
    Random random = new Random(42);
    for (int i = 0; i < 3_000; i++) ids.add("evt_" + random.nextInt(7_000));
    Collections.shuffle(ids, random);
    ConcurrentLinkedQueue<String> queue = new ConcurrentLinkedQueue<>(ids);
    Map<Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    long start = System.nanoTime();
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        workers.add(pool.submit(() -> {
          for (String id; (id = queue.poll()) != null; ) {
            byte[] body = body("{\"id\":\"" + id + "\"}");
            Outcome o;
            do {
              o = receiver.receive(signed(id, body), body, countPerEvent).outcome();
              outcomes.computeIfAbsent(o, k -> new AtomicInteger()).incrementAndGet();
            } while (o == Outcome.IN_PROGRESS);
          }
          return null;
        }));
      }
      for (Future<?> w : workers) w.get();
    } finally {
      pool.shutdownNow();
    }
    System.out.printf("in-memory burst: 10000 deliveries, 7000 distinct, outcomes %s, %d ms%n", outcomes,
        (System.nanoTime() - start) / 1_000_000);
    assertThat(perEvent).hasSize(7_000).allSatisfy((id, n) -> assertThat(n.get()).isEqualTo(1));
    assertThat(outcomes.get(Outcome.PROCESSED)).hasValue(7_000);
    assertThat(outcomes.get(Outcome.DUPLICATE)).hasValue(3_000);
    assertThat(store.size()).isEqualTo(7_000);
  }

  @Test
  void aStoreFailureIs503WithRetryAfter() {
    ProcessingStore broken = new ProcessingStore() {
      @Override
      public Claim claim(String scope, String eventId, Duration lease) {
        throw new ProcessingStoreException("database down", null);
      }

      @Override
      public void complete(Claim.Acquired claim, String result) {}

      @Override
      public void release(Claim.Acquired claim) {}

      @Override
      public Duration retention() {
        return Duration.ofDays(1);
      }
    };
    CallbackReceiver r = CallbackReceiver.builder().store(broken)
        .verifier(CallbackVerifier.builder().scheme(scheme).clock(clock).build()).build();
    CallbackResponse down = r.receive(signed("e", body("{}")), body("{}"), handler);
    assertThat(down.status()).isEqualTo(503);
    assertThat(down.headers()).containsEntry("Retry-After", "5");
    assertThat(effects).hasValue(0);
  }

  @Test
  void retentionMustCoverTheAcceptanceWindow_receiveInTransactionNeedsJdbc() {
    InMemoryProcessingStore shortLived = InMemoryProcessingStore.builder().retention(Duration.ofMinutes(5)).build();
    assertThatThrownBy(() -> CallbackReceiver.builder().store(shortLived)
        .verifier(CallbackVerifier.builder().scheme(scheme).build()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("store retention PT5M must cover the window a signature is accepted: 2 x"
            + " verifier tolerance PT5M + clockSkew PT1M = PT11M");
    assertThatThrownBy(() -> receiver.receiveInTransaction(Map.of(), new byte[0], (cb, tx) -> null))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> CallbackReceiver.builder().store(store).build()).hasMessage("verifier: required");
  }
}
