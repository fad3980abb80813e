package io.github.resilienthttp.callbacks;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.callbacks.testkit.CallbackSender.Kind;
import io.github.resilienthttp.callbacks.testkit.CallbackSender;
import io.github.resilienthttp.callbacks.testkit.ManualClock;
import io.github.resilienthttp.callbacks.testkit.SenderReport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The hostile sender against a receiver behind a real socket (JDK HttpServer on 127.0.0.1). */
class CallbackSenderTest {
  static final String OLD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  static final String NEW = "whsec_c2VjcmV0LW9mLWEtcm90YXRlZC1lbmRwb2ludA==";
  final ManualClock clock = new ManualClock(Instant.parse("2026-12-01T10:00:00Z"));
  final List<Duration> waits = new ArrayList<>();
  final ConcurrentHashMap<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  final List<AutoCloseable> servers = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable s : servers) s.close();
  }

  String receiverUrl(CallbackHandler handler, String... secrets) throws Exception {
    InMemoryProcessingStore store = InMemoryProcessingStore.builder().clock(clock).build();
    CallbackReceiver receiver = CallbackReceiver.builder().store(store)
        .verifier(CallbackVerifier.builder().scheme(StandardWebhooksScheme.of(secrets)).clock(clock).build())
        .build();
    ReceiverServer server = new ReceiverServer((h, b) -> receiver.receive(h, b, handler));
    servers.add(server);
    return server.url();
  }

  CallbackHandler counting() {
    return cb -> "n=" + effects.computeIfAbsent(cb.eventId().orElseThrow(), k -> new AtomicInteger()).incrementAndGet();
  }

  static List<CallbackSender.Event> events(int n) {
    List<CallbackSender.Event> events = new ArrayList<>();
    for (int i = 0; i < n; i++) events.add(CallbackSender.Event.of("evt_" + i, "{\"amount\":" + i + "}"));
    return events;
  }

  CallbackSender.Builder hostile(String url) {
    return CallbackSender.builder().url(url).signer(StandardWebhooksScheme.of(OLD)::sign).clock(clock)
        .sleeper(d -> { waits.add(d); clock.advance(d); }).seed(7)
        .duplicates(0.3).reorder(8).staleReplays(0.2, Duration.ofHours(1)).forgeries(0.2)
        .delays(0.3, Duration.ofSeconds(2)).rotatedSecret(StandardWebhooksScheme.of(NEW)::sign, 0.2);
  }

  @Test
  void underEveryFaultEachEventTakesEffectOnce_andHostileDeliveriesAreRejected() throws Exception {
    String url = receiverUrl(counting(), NEW, OLD);
    SenderReport report = hostile(url).build().send(events(200));
    assertThat(report.unacknowledgedEvents()).isEmpty();
    assertThat(effects).hasSize(200).allSatisfy((id, n) -> assertThat(n.get()).as(id).isEqualTo(1));
    assertThat(report.anyHostileAccepted()).isFalse();
    assertThat(report.count(Kind.FORGED, 401)).isEqualTo(report.count(Kind.FORGED)).isPositive();
    assertThat(report.count(Kind.STALE_REPLAY, 400)).isEqualTo(report.count(Kind.STALE_REPLAY)).isPositive();
    assertThat(report.count(Kind.ROTATED_SECRET, 200)).isEqualTo(report.count(Kind.ROTATED_SECRET)).isPositive();
    assertThat(report.count(Kind.DUPLICATE, 200)).isEqualTo(report.count(Kind.DUPLICATE)).isPositive();
    // Exactly one delivery per event was answered "processed" (a duplicate may overtake the original).
    assertThat(report.deliveries().stream().filter(d -> d.lastBody().equals("{\"status\":\"processed\"}"))
        .map(CallbackSender.Delivery::eventId).toList()).hasSize(200).doesNotHaveDuplicates();
    assertThat(report.deliveries().stream().filter(d -> d.lastBody().equals("{\"status\":\"duplicate\"}")).count())
        .isEqualTo(report.count(Kind.DUPLICATE));
    // Reordered: some event's first delivery goes out after a later event's.
    List<String> originals = report.deliveries().stream()
        .filter(d -> d.kind() == Kind.ORIGINAL || d.kind() == Kind.ROTATED_SECRET).map(CallbackSender.Delivery::eventId).toList();
    assertThat(originals).hasSize(200).isNotEqualTo(events(200).stream().map(CallbackSender.Event::id).toList());
    System.out.printf("hostile sender: %s; kinds: dup=%d rotated=%d stale=%d forged=%d%n", report,
        report.count(Kind.DUPLICATE), report.count(Kind.ROTATED_SECRET), report.count(Kind.STALE_REPLAY),
        report.count(Kind.FORGED));
  }

  @Test
  void aReceiverThatDoesNotKnowTheRotatedSecretYetLeavesThoseEventsUnacknowledged() throws Exception {
    String url = receiverUrl(counting(), OLD);
    SenderReport report = hostile(url).maxAttempts(3).build().send(events(50));
    long rotated = report.count(Kind.ROTATED_SECRET);
    assertThat(rotated).isPositive();
    assertThat(report.count(Kind.ROTATED_SECRET, 401)).isEqualTo(rotated);
    assertThat(report.deliveries()).filteredOn(d -> d.kind() == Kind.ROTATED_SECRET)
        .allSatisfy(d -> assertThat(d.statuses()).containsExactly(401, 401, 401));
    // Rotated events may still get through on a duplicate signed with the old secret; never twice.
    assertThat(effects.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
  }

  @Test
  void retriesNon2xxWithFullJitterBackoff_signingEachAttemptAfresh() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    List<Instant> signedAt = new ArrayList<>();
    String url = receiverUrl(cb -> {
      signedAt.add(cb.timestamp());
      if (calls.incrementAndGet() < 3) throw new IllegalStateException("down");
      return "ok";
    }, OLD);
    SenderReport report = CallbackSender.builder().url(url).signer(StandardWebhooksScheme.of(OLD)::sign)
        .clock(clock).sleeper(d -> { waits.add(d); clock.advance(d); }).seed(3)
        .backoff(Duration.ofSeconds(1), Duration.ofSeconds(10)).build()
        .send(events(1));
    assertThat(report.deliveries()).singleElement().satisfies(d -> {
      assertThat(d.statuses()).containsExactly(500, 500, 200);
      assertThat(d.acknowledged()).isTrue();
    });
    assertThat(waits).hasSize(2);
    assertThat(waits.get(0)).isLessThan(Duration.ofSeconds(1));
    assertThat(waits.get(1)).isLessThan(Duration.ofSeconds(2));
    Instant t0 = Instant.parse("2026-12-01T10:00:00Z");
    assertThat(signedAt).containsExactly(t0, t0.plus(waits.get(0)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS),
        t0.plus(waits.get(0)).plus(waits.get(1)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
    assertThat(report.requests()).isEqualTo(3);
  }

  @Test
  void neverRetriesEarlierThanRetryAfter() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    ReceiverServer server = new ReceiverServer((h, b) -> calls.incrementAndGet() == 1
        ? new CallbackResponse(CallbackResponse.Outcome.IN_PROGRESS, "evt_0", java.util.Map.of("Retry-After", "7"), "{}", null)
        : new CallbackResponse(CallbackResponse.Outcome.PROCESSED, "evt_0", java.util.Map.of(), "{}", null));
    servers.add(server);
    SenderReport report = CallbackSender.builder().url(server.url()).signer(StandardWebhooksScheme.of(OLD)::sign)
        .clock(clock).sleeper(d -> { waits.add(d); clock.advance(d); }).build().send(events(1));
    assertThat(report.deliveries().get(0).statuses()).containsExactly(409, 200);
    assertThat(waits).containsExactly(Duration.ofSeconds(7));
  }

  @Test
  void samePlanForTheSameSeed() throws Exception {
    String url = receiverUrl(counting(), NEW, OLD);
    SenderReport a = hostile(url).build().send(events(60));
    effects.clear();
    String url2 = receiverUrl(counting(), NEW, OLD);
    clock.set(Instant.parse("2026-12-01T10:00:00Z"));
    SenderReport b = hostile(url2).build().send(events(60));
    assertThat(b.deliveries().stream().map(d -> d.kind() + ":" + d.eventId()).toList())
        .isEqualTo(a.deliveries().stream().map(d -> d.kind() + ":" + d.eventId()).toList());
    SenderReport c = hostile(url2).seed(8).build().send(events(60));
    assertThat(c.deliveries().stream().map(d -> d.kind() + ":" + d.eventId()).toList())
        .isNotEqualTo(a.deliveries().stream().map(d -> d.kind() + ":" + d.eventId()).toList());
  }
}
