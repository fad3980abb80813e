package io.github.resilienthttp.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.testkit.IdempotencyLedger.Claim;
import io.github.resilienthttp.testkit.IdempotencyLedger.RecordState;
import org.junit.jupiter.api.Test;

/**
 * The ledger's rules without sockets: the atomic claim, 409 during the lease, 422 on another
 * fingerprint, replay after completion, forgetting after the retention, the takeover of an expired
 * lease (completed from the business write, or run again) and the fencing of the old owner.
 */
class IdempotencyLedgerTest {
  private static final long LEASE = 1_000;
  private static final long FOREVER = -1;

  private final IdempotencyLedger ledger = new IdempotencyLedger();
  private final int epoch = ledger.epoch();
  private final ServerResponse created = ServerResponse.json(201, "{\"id\":\"pay_1\"}");

  private Claim claim(String fingerprint, long now, long retention) {
    return ledger.claim(epoch, "k", fingerprint, now, LEASE, retention, true, true);
  }

  @Test
  void theFirstClaimWinsAndTheOthersGet409ThenTheReplay() {
    Claim first = claim("fp", 0, FOREVER);

    assertThat(first.kind()).isEqualTo(Claim.Kind.NEW);
    assertThat(ledger.state("k")).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(claim("fp", 999, FOREVER).kind()).isEqualTo(Claim.Kind.IN_PROGRESS);
    assertThat(claim("other", 999, FOREVER).kind()).isEqualTo(Claim.Kind.MISMATCH);

    assertThat(ledger.write(epoch, first.token(), "k", "POST", "/p", "{}").number()).isOne();
    assertThat(ledger.complete(epoch, first.token(), "k", created, 10)).isTrue();

    Claim replay = claim("fp", 20, FOREVER);
    assertThat(replay.kind()).isEqualTo(Claim.Kind.REPLAY);
    assertThat(replay.response()).isEqualTo(created);
    assertThat(claim("other", 20, FOREVER).kind()).isEqualTo(Claim.Kind.MISMATCH);
    assertThat(ledger.effectCount()).isOne();
  }

  @Test
  void aCompletedRecordIsForgottenOnceTheRetentionHasPassed() {
    Claim first = claim("fp", 0, 500);
    ledger.write(epoch, first.token(), "k", "POST", "/p", "{}");
    ledger.complete(epoch, first.token(), "k", created, 100);

    assertThat(claim("fp", 599, 500).kind()).isEqualTo(Claim.Kind.REPLAY);
    assertThat(claim("other", 600, 500).kind()).isEqualTo(Claim.Kind.NEW);
  }

  @Test
  void anExpiredLeaseIsTakenOverAndCompletedFromTheBusinessWriteOfItsDeadOwner() {
    Claim dead = claim("fp", 0, FOREVER);
    Effect written = ledger.write(epoch, dead.token(), "k", "POST", "/p", "{}");

    Claim takeover = claim("fp", LEASE, FOREVER);

    assertThat(takeover.kind()).isEqualTo(Claim.Kind.RECOVER);
    assertThat(takeover.written()).isEqualTo(written);
    // The old owner is fenced out: its completion is refused.
    assertThat(ledger.complete(epoch, dead.token(), "k", created, LEASE)).isFalse();
    assertThat(ledger.complete(epoch, takeover.token(), "k", created, LEASE)).isTrue();
    assertThat(ledger.state("k")).isEqualTo(RecordState.COMPLETED);
    assertThat(ledger.effectCount()).isOne();
  }

  @Test
  void anExpiredLeaseWithoutABusinessWriteIsRunAgainAndTheOldOwnerCannotWrite() {
    Claim dead = claim("fp", 0, FOREVER);

    Claim takeover = claim("fp", LEASE + 1, FOREVER);

    assertThat(takeover.kind()).isEqualTo(Claim.Kind.NEW);
    assertThat(takeover.token()).isNotEqualTo(dead.token());
    assertThat(ledger.write(epoch, dead.token(), "k", "POST", "/p", "{}")).isNull();
    assertThat(ledger.write(epoch, takeover.token(), "k", "POST", "/p", "{}").number()).isOne();
    assertThat(ledger.effects()).extracting(Effect::key).containsExactly("k");
  }

  @Test
  void aWriteBegunBeforeAClearChangesNothing() {
    Claim old = claim("fp", 0, FOREVER);
    ledger.clear();

    assertThat(ledger.write(epoch, old.token(), "k", "POST", "/p", "{}").number()).isOne();
    assertThat(ledger.complete(epoch, old.token(), "k", created, 1)).isFalse();
    assertThat(ledger.effectCount()).isZero();
    assertThat(ledger.state("k")).isEqualTo(RecordState.ABSENT);
  }
}
