package io.github.resilienthttp.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.callbacks.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What every {@link ProcessingStore} guarantees; run on memory, H2 and PostgreSQL. */
abstract class ProcessingStoreContract {
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration RETENTION = Duration.ofDays(7);
  final ManualClock clock = new ManualClock(Instant.parse("2026-12-01T10:00:00Z"));
  final ExecutorService pool = Executors.newFixedThreadPool(16);

  /** A fresh, empty store on {@link #clock} with {@link #RETENTION}. */
  abstract ProcessingStore store();

  @AfterEach
  void stopPool() {
    pool.shutdownNow();
  }

  @Test
  void newThenInProgressThenDoneWithTheStoredResult() {
    ProcessingStore store = store();
    Claim first = store.claim("stripe", "evt_1", LEASE);
    assertThat(first).isInstanceOfSatisfying(Claim.Acquired.class, a -> {
      assertThat(a.attempt()).isEqualTo(1);
      assertThat(a.leaseExpiresAt()).isEqualTo(clock.instant().plus(LEASE));
    });
    assertThat(store.claim("stripe", "evt_1", LEASE))
        .isEqualTo(new Claim.InProgress("stripe", "evt_1", clock.instant().plus(LEASE)));
    clock.advance(Duration.ofSeconds(2));
    store.complete((Claim.Acquired) first, "charge ch_1");
    clock.advance(Duration.ofDays(6));
    assertThat(store.claim("stripe", "evt_1", LEASE)).isEqualTo(
        new Claim.Done("stripe", "evt_1", "charge ch_1", Instant.parse("2026-12-01T10:00:02Z")));
  }

  @Test
  void scopesAreIndependent_andANullResultIsKept() {
    ProcessingStore store = store();
    Claim.Acquired a = (Claim.Acquired) store.claim("stripe", "id_1", LEASE);
    assertThat(store.claim("orders-queue", "id_1", LEASE)).isInstanceOf(Claim.Acquired.class);
    store.complete(a, null);
    assertThat(store.claim("stripe", "id_1", LEASE))
        .isInstanceOfSatisfying(Claim.Done.class, d -> assertThat(d.storedResult()).isEmpty());
  }

  @Test
  void releaseLetsTheNextClaimInAtOnce_andTheReleasedClaimCanNoLongerComplete() {
    ProcessingStore store = store();
    Claim.Acquired first = (Claim.Acquired) store.claim("s", "e", LEASE);
    store.release(first);
    Claim second = store.claim("s", "e", LEASE);
    assertThat(second).isInstanceOfSatisfying(Claim.Acquired.class, a -> {
      assertThat(a.attempt()).isEqualTo(2);
      assertThat(a.token()).isNotEqualTo(first.token());
    });
    assertThatThrownBy(() -> store.complete(first, "late")).isInstanceOf(LeaseLostException.class)
        .hasMessage("lease lost for (s, e): taken over by another consumer after it expired, or already"
            + " done; undo the work");
    store.complete((Claim.Acquired) second, "ok");
    assertThat(store.claim("s", "e", LEASE)).isInstanceOfSatisfying(Claim.Done.class,
        d -> assertThat(d.result()).isEqualTo("ok"));
  }

  @Test
  void anExpiredLeaseIsTakenOver_andTheCrashedConsumerCannotCompleteAfterwards() {
    ProcessingStore store = store();
    Claim.Acquired crashed = (Claim.Acquired) store.claim("s", "e", LEASE);
    clock.advance(LEASE.minusMillis(1));
    assertThat(store.claim("s", "e", LEASE)).isInstanceOf(Claim.InProgress.class);
    clock.advance(Duration.ofMillis(1));
    Claim.Acquired next = (Claim.Acquired) store.claim("s", "e", LEASE);
    assertThat(next.attempt()).isEqualTo(2);
    assertThatThrownBy(() -> store.complete(crashed, "zombie")).isInstanceOf(LeaseLostException.class);
    store.release(crashed); // no effect: not its lease any more
    assertThat(store.claim("s", "e", LEASE)).isInstanceOf(Claim.InProgress.class);
    store.complete(next, "ok");
    assertThatThrownBy(() -> store.complete(next, "twice")).isInstanceOf(LeaseLostException.class);
    assertThat(store.claim("s", "e", LEASE)).isInstanceOfSatisfying(Claim.Done.class,
        d -> assertThat(d.result()).isEqualTo("ok"));
  }

  @Test
  void afterRetentionAnEventIsTreatedAsNew() {
    ProcessingStore store = store();
    assertThat(store.retention()).isEqualTo(RETENTION);
    store.complete((Claim.Acquired) store.claim("s", "e", LEASE), "first");
    clock.advance(RETENTION.minusSeconds(1));
    assertThat(store.claim("s", "e", LEASE)).isInstanceOf(Claim.Done.class);
    clock.advance(Duration.ofSeconds(1));
    assertThat(store.claim("s", "e", LEASE)).isInstanceOfSatisfying(Claim.Acquired.class,
        a -> assertThat(a.attempt()).isEqualTo(1));
  }

  @Test
  void sixteenConcurrentClaimsOfOneEvent_exactlyOneAcquires() throws Exception {
    ProcessingStore store = store();
    for (int round = 0; round < 20; round++) {
      String id = "evt_race_" + round;
      CyclicBarrier start = new CyclicBarrier(16);
      List<Future<Claim>> claims = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        Callable<Claim> c = () -> {
          start.await();
          return store.claim("s", id, LEASE);
        };
        claims.add(pool.submit(c));
      }
      int acquired = 0;
      int inProgress = 0;
      for (Future<Claim> f : claims) {
        Claim c = f.get();
        if (c instanceof Claim.Acquired) acquired++;
        if (c instanceof Claim.InProgress) inProgress++;
      }
      assertThat(acquired).as("round %d", round).isEqualTo(1);
      assertThat(inProgress).isEqualTo(15);
    }
  }

  @Test
  void invalidArgumentsNameTheField() {
    ProcessingStore store = store();
    assertThatThrownBy(() -> store.claim("", "e", LEASE)).hasMessage("scope: length 0 is outside 1..200");
    assertThatThrownBy(() -> store.claim("s", "e".repeat(201), LEASE))
        .hasMessage("eventId: length 201 is outside 1..200");
    assertThatThrownBy(() -> store.claim("s", "e", Duration.ZERO)).hasMessage("lease: PT0S is not positive");
  }
}
