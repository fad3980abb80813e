package io.github.resilienthttp.server;

import static io.github.resilienthttp.server.Requests.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.callbacks.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The contract on a JDBC store, plus the business write and the record in one transaction, and the
 * crash drills: a crash after the claim, after the business write (before the commit) and after the
 * commit (before the response) each end with exactly one effect.
 */
abstract class JdbcGuardTest extends GuardContractTest {
  TestDatabases.PooledDataSource ds;
  String charges;

  abstract TestDatabases.PooledDataSource dataSource();

  @Override
  IdempotencyStore newStore(MutableClock clock) {
    ds = dataSource();
    JdbcIdempotencyStore s = JdbcIdempotencyStore.builder().dataSource(ds)
        .table(TestDatabases.uniqueName("idem")).clock(clock).build();
    s.createSchema();
    s.createSchema(); // idempotent
    charges = TestDatabases.uniqueName("charges");
    TestDatabases.execute(ds, "CREATE TABLE " + charges + " (idem_key VARCHAR(255), amount INT)");
    return s;
  }

  @AfterEach
  void closePool() {
    if (ds != null) ds.close();
  }

  /** The process dies: nothing after this runs, no catch block sees it. */
  static final class Crash extends Error {
    Crash() {
      super("simulated crash", null, false, false);
    }
  }

  IdempotentResponse insertCharge(Connection c, IdempotentRequest r) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + charges + " (idem_key, amount) VALUES (?, 5)")) {
      ps.setString(1, r.header("Idempotency-Key").orElse(null));
      ps.executeUpdate();
    }
    return IdempotentResponse.of(201, "application/json", "{\"id\":\"ch_1\"}");
  }

  long chargeRows() {
    return TestDatabases.count(ds, "SELECT COUNT(*) FROM " + charges);
  }

  @Test
  void theBusinessWriteAndTheRecordCommitTogether() throws SQLException {
    IdempotencyGuard guard = guard().build();
    assertThat(guard.handleInTransaction(post("k1", "{}"), this::insertCharge).status()).isEqualTo(201);
    IdempotentResponse replay = guard.handleInTransaction(post("k1", "{}"), this::insertCharge);
    assertThat(replay.header(IdempotencyGuard.REPLAYED)).isEqualTo("true");
    assertThat(replay.bodyText()).isEqualTo("{\"id\":\"ch_1\"}");
    assertThat(chargeRows()).isEqualTo(1);
  }

  @Test
  void crashAfterTheClaimRecoversByLeaseExpiryWithOneEffect() throws SQLException {
    IdempotencyGuard guard = guard().build();
    assertThat(guard.admit(post("k1", "{}"))).isInstanceOf(Admission.Proceed.class); // then the process dies
    assertThat(guard.handleInTransaction(post("k1", "{}"), this::insertCharge).status()).isEqualTo(409);
    clock.advance(Duration.ofSeconds(10));
    assertThat(guard.handleInTransaction(post("k1", "{}"), this::insertCharge).status()).isEqualTo(201);
    assertThat(guard.handleInTransaction(post("k1", "{}"), this::insertCharge).header(IdempotencyGuard.REPLAYED))
        .isEqualTo("true");
    assertThat(chargeRows()).isEqualTo(1);
    assertThat(events).contains("claimExpired k1 2");
  }

  @Test
  void crashAfterTheBusinessWriteBeforeTheCommitRollsBothBackAndTheRetryChargesOnce() throws SQLException {
    IdempotencyGuard guard = guard().build();
    assertThatThrownBy(() -> guard.handleInTransaction(post("k1", "{}"), (c, r) -> {
      insertCharge(c, r);
      throw new Crash();
    })).isInstanceOf(Crash.class);
    assertThat(chargeRows()).isZero(); // the connection died with its transaction
    assertThat(guard.handleInTransaction(post("k1", "{}"), this::insertCharge).status()).isEqualTo(409);
    clock.advance(Duration.ofSeconds(10));
    assertThat(guard.handleInTransaction(post("k1", "{}"), this::insertCharge).status()).isEqualTo(201);
    assertThat(chargeRows()).isEqualTo(1);
  }

  @Test
  void crashAfterTheCommitBeforeTheResponseIsAnsweredByTheReplay() throws SQLException {
    IdempotencyGuard guard = guard().build();
    guard.handleInTransaction(post("k1", "{}"), this::insertCharge); // the response never leaves
    IdempotentResponse retry = guard.handleInTransaction(post("k1", "{}"), this::insertCharge);
    assertThat(retry.status()).isEqualTo(201);
    assertThat(retry.header(IdempotencyGuard.REPLAYED)).isEqualTo("true");
    assertThat(chargeRows()).isEqualTo(1);
  }

  @Test
  void aHolderThatOutlivesItsLeaseIsRolledBackAndAnswered409() throws SQLException {
    IdempotencyGuard guard = guard().build();
    IdempotentResponse[] taker = new IdempotentResponse[1];
    IdempotentResponse slow = guard.handleInTransaction(post("k1", "{}"), (c, r) -> {
      insertCharge(c, r);
      clock.advance(Duration.ofSeconds(11)); // a GC pause or a slow downstream: the lease expires
      taker[0] = guard.handleInTransaction(post("k1", "{}"), this::insertCharge);
      return IdempotentResponse.of(201, "application/json", "{\"id\":\"slow\"}");
    });
    assertThat(taker[0].status()).isEqualTo(201);
    assertThat(slow.status()).isEqualTo(409);
    assertThat(chargeRows()).isEqualTo(1);
    assertThat(events).contains("claimExpired k1 2", "leaseLost k1");
  }

  @Test
  void aHandlerFailureRollsBackAndReleasesTheKey() throws SQLException {
    IdempotencyGuard guard = guard().build();
    assertThatThrownBy(() -> guard.handleInTransaction(post("k1", "{}"), (c, r) -> {
      insertCharge(c, r);
      throw new SQLException("downstream refused", "40001");
    })).isInstanceOf(SQLException.class);
    IdempotentResponse declined = guard.handleInTransaction(post("k1", "{}"), (c, r) -> {
      insertCharge(c, r);
      return IdempotentResponse.of(503, "text/plain", "try later");
    });
    assertThat(declined.status()).isEqualTo(503);
    assertThat(chargeRows()).isZero();
    assertThat(guard.handleInTransaction(post("k1", "{}"), this::insertCharge).status()).isEqualTo(201);
    assertThat(chargeRows()).isEqualTo(1);
  }

  @Test
  void aKeyForgottenAfterRetentionMeetsTheBusinessUniqueConstraintHook() throws SQLException {
    String payments = TestDatabases.uniqueName("payments");
    TestDatabases.execute(ds, "CREATE TABLE " + payments + " (idem_key VARCHAR(255) PRIMARY KEY, amount INT)");
    IdempotencyGuard.TransactionalHandler pay = (c, r) -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + payments + " VALUES (?, 5)")) {
        ps.setString(1, r.header("Idempotency-Key").orElseThrow());
        ps.executeUpdate();
      }
      return IdempotentResponse.of(201, "application/json", "{\"id\":\"pay_1\"}");
    };
    IdempotencyGuard guard = guard().retention(Duration.ofHours(1))
        .afterRetention(AfterRetention.processAgain().onUniqueViolation((key, r) ->
            Optional.of(IdempotentResponse.of(200, "application/json", "{\"id\":\"pay_1\",\"existing\":true}"))))
        .build();
    guard.handleInTransaction(post("k1", "{}"), pay);
    clock.advance(Duration.ofHours(2));
    assertThat(guard.purge()).isEqualTo(1);

    IdempotentResponse late = guard.handleInTransaction(post("k1", "{}"), pay);
    assertThat(late.status()).isEqualTo(200);
    assertThat(late.bodyText()).contains("\"existing\":true");
    assertThat(TestDatabases.count(ds, "SELECT COUNT(*) FROM " + payments)).isEqualTo(1);
    // The hook's answer is recorded: the next retry is a plain replay.
    assertThat(guard.handleInTransaction(post("k1", "{}"), pay).header(IdempotencyGuard.REPLAYED)).isEqualTo("true");
  }

  @Test
  void recordedHeadersAndBinaryBodiesSurviveTheTable() {
    IdempotencyGuard guard = guard().recordHeaders("Content-Type", "X-Request-Cost").build();
    byte[] bytes = {0, 1, (byte) 0xff, 10, 13};
    guard.handle(post("k1", "{}"), r -> new IdempotentResponse(200,
        Map.of("Content-Type", List.of("application/octet-stream"), "X-Request-Cost", List.of("1", "2")), bytes));
    IdempotentResponse replay = guard.handle(post("k1", "{}"), this::charge);
    assertThat(replay.body()).containsExactly(bytes);
    assertThat(replay.headers().get("X-Request-Cost")).containsExactly("1", "2");
  }
}
