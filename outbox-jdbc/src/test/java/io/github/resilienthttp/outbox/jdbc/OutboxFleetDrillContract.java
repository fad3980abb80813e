package io.github.resilienthttp.outbox.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;
import io.github.resilienthttp.outbox.jdbc.OutboxFleetDrill.Instance;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The outbox at fleet scale (issue 23's drill): four resumer instances, each with its own connection,
 * drain {@value #DEFAULT_INTENTS} parked intents (system property {@code resilient.http.drill.intents})
 * against the idempotent test server while one instance is killed mid-drain (interrupted and its
 * connection closed, with claims still leased) and one stalls past its lease. Every intent is settled
 * exactly once at the server (effects counted by key), handed over once by the instance whose claim
 * was current (one committed result row per key, no refused handover), and no row is left behind.
 * The drain-rate benchmark is {@link OutboxDrainRateBenchmarkTest}.
 */
abstract class OutboxFleetDrillContract {
  static final int DEFAULT_INTENTS = 10_000;
  static final int INTENTS = Integer.getInteger("resilient.http.drill.intents", DEFAULT_INTENTS);
  static final Duration LEASE = Duration.ofSeconds(2);

  /** A pool on the database under test. */
  abstract PooledDataSource database();

  @Test
  void fourInstancesDrainWhileOneIsKilledAndOneStallsPastItsLease() throws Exception {
    try (OutboxFleetDrill drill = new OutboxFleetDrill(database())) {
      drill.park(INTENTS);
      int killAfter = Math.min(INTENTS / 8, 110);
      int stallAfter = Math.min(INTENTS / 8, 60);
      AtomicBoolean killed = new AtomicBoolean();
      AtomicReference<String> stalledKey = new AtomicReference<>();
      Instance plainA = drill.add(LEASE, 25, OutboxFleetDrill.NOTHING);
      Instance plainB = drill.add(LEASE, 25, OutboxFleetDrill.NOTHING);
      Instance victim = drill.add(LEASE, 25, (self, token) -> {
        // Mid-batch (claims of this batch still leased): killed from another thread.
        if (self.handedOver.get() >= killAfter && killed.compareAndSet(false, true)) {
          Thread killer = new Thread(self::kill);
          killer.start();
          killer.join();
        }
      });
      Instance staller = drill.add(LEASE, 25, (self, token) -> {
        if (self.handedOver.get() >= stallAfter
            && stalledKey.compareAndSet(null, token.idempotencyKey())) {
          // Past the lease: until another instance has handed this intent over (at most 30 s).
          Instant giveUp = Instant.now().plusSeconds(30);
          while (!drill.handlerCalls.containsKey(token.idempotencyKey())
              && Instant.now().isBefore(giveUp)) {
            Thread.sleep(20);
          }
        }
      });

      drill.run(Duration.ofMinutes(3));

      assertThat(killed).isTrue();
      assertThat(victim.died).as("the killed instance ended on its closed connection").isNotNull();
      assertThat(stalledKey.get()).isNotNull();
      assertThat(drill.handlerCalls.get(stalledKey.get())).as("handed over by another instance")
          .singleElement().isNotEqualTo(String.valueOf(staller.id));
      assertThat(staller.lost.get()).as("the staller's late claims were refused").isPositive();
      assertThat(drill.rowsLeft()).as("rows left in the outbox").isZero();

      Map<String, Integer> effects = drill.effectsPerKey();
      assertThat(effects).hasSize(INTENTS);
      assertThat(effects.values()).as("effects per key at the server").containsOnly(1);
      assertThat(drill.server.effects()).hasSize(INTENTS);
      Map<String, Integer> results = drill.resultsPerKey();
      assertThat(results).hasSize(INTENTS);
      assertThat(results.values()).as("committed handovers per key").containsOnly(1);
      assertThat(drill.handlerCalls).hasSize(INTENTS);
      assertThat(drill.handlerCalls.values()).as("handler calls per key, none refused")
          .allSatisfy(calls -> assertThat(calls).singleElement().asString().doesNotContain("refused"));
      int handedOver = 0;
      for (Instance i : List.of(plainA, plainB, victim, staller)) handedOver += i.handedOver.get();
      assertThat(handedOver).isEqualTo(INTENTS);
      assertThat(victim.handedOver.get()).isBetween(killAfter, INTENTS - 1);
    }
  }
}
