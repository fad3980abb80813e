package io.github.resilienthttp.outbox.jdbc;

import static io.github.resilienthttp.callbacks.TestDatabases.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.OutboxClaim;
import io.github.resilienthttp.OutboxResumer;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResumeToken;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.callbacks.TestDatabases;
import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;
import io.github.resilienthttp.testkit.Effect;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;

/**
 * Several resumer instances, each with its own database connection, JdbcOutbox and client, draining
 * one outbox table against the testkit's idempotent server. Each instance's result handler settles
 * the intent in the transaction of its own record ({@code JdbcOutbox.complete(Connection, claim)}
 * plus an insert into a results table), so a committed result row is a handover by the holder of the
 * current claim. Optionally one instance is killed mid-drain (its thread interrupted, its connection
 * closed) and one stalls past its lease. Used by the drill tests and the drain-rate benchmark.
 */
final class OutboxFleetDrill implements AutoCloseable {
  static final MediaType JSON = MediaType.get("application/json");

  final PooledDataSource db;
  final String table = TestDatabases.uniqueName("fleet_outbox");
  final String results = TestDatabases.uniqueName("fleet_results");
  final IdempotentTestServer server;
  final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  /** The fleet's shared resume-token key: every instance verifies what any instance parked. */
  static final byte[] TOKEN_KEY = "fleet-drill-resume-token-key-0123".getBytes(
      java.nio.charset.StandardCharsets.UTF_8);
  /** Handler calls per key: instance and whether its transactional completion was refused. */
  final Map<String, List<String>> handlerCalls = new ConcurrentHashMap<>();
  final List<Instance> instances = new CopyOnWriteArrayList<>();

  OutboxFleetDrill(PooledDataSource db) throws Exception {
    this.db = db;
    this.server = IdempotentTestServer.startDefault();
    JdbcOutbox.builder().dataSource(db).table(table).build().createSchema();
    execute(db, "CREATE TABLE " + results + " (idempotency_key VARCHAR(255) NOT NULL,"
        + " instance INTEGER NOT NULL, code INTEGER NOT NULL, lease_token VARCHAR(36) NOT NULL)");
  }

  /** Parks {@code n} POST intents, all due now, in one transaction. */
  void park(int n) throws SQLException {
    HttpUrl url = server.url("/payments");
    Instant now = Instant.now();
    // Parked as the fleet parks them: signed with its shared key (the drill writes the rows itself).
    ResilientHttpClient signer = ResilientHttpClient.wrap(okHttp).resumeTokenKey(TOKEN_KEY)
        .acceptUnsignedResumeTokens(List.of(url)).build();
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
          + " (idempotency_key, token, reason, parked_at, tries, next_due_at, lease_token)"
          + " VALUES (?, ?, 'outcome-unknown', ?, 0, ?, NULL)")) {
        for (int i = 0; i < n; i++) {
          String key = String.format("intent-%05d", i);
          ps.setString(1, key);
          ps.setString(2, signer.verifyResumeToken(ResumeToken.forSubmit("POST", url, key, true, now))
              .toText());
          ps.setLong(3, now.toEpochMilli());
          ps.setLong(4, now.toEpochMilli());
          ps.addBatch();
          if (i % 500 == 499) ps.executeBatch();
        }
        ps.executeBatch();
      }
      c.commit();
    }
  }

  /** What an instance does before resuming one intent (the stall hook). */
  interface BeforeResume {
    void run(Instance self, ResumeToken token) throws InterruptedException;
  }

  /** One resumer process: its own connection, outbox, client and draining thread. */
  final class Instance {
    final int id;
    /** This instance's own connection: a pool of one, closed to kill the instance. */
    final PooledDataSource connection;
    final JdbcOutbox outbox;
    final OutboxResumer resumer;
    final Thread thread;
    final AtomicInteger handedOver = new AtomicInteger();
    final AtomicInteger lost = new AtomicInteger();
    volatile Throwable died;

    Instance(int id, Duration lease, int batchSize, BeforeResume beforeResume) throws SQLException {
      this.id = id;
      this.connection = new PooledDataSource(db.url, 1);
      this.outbox = JdbcOutbox.builder().dataSource(connection).table(table).build();
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).resumeTokenKey(TOKEN_KEY)
          .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
      this.resumer = OutboxResumer.builder(client, outbox).lease(lease).batchSize(batchSize)
          .retryDelay(Duration.ZERO)
          .requestFor(token -> {
            try {
              beforeResume.run(this, token);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return new Request.Builder().url(token.url())
                .post(RequestBody.create("{\"intent\":\"" + token.idempotencyKey() + "\"}", JSON))
                .build();
          })
          .onClaimedResult(this::handOver).build();
      this.thread = new Thread(this::drainUntilEmpty, "resumer-" + id);
    }

    private void handOver(OutboxClaim claim, okhttp3.Response response) throws SQLException {
      // The pool rolls back a transaction left open when the connection is handed back.
      try (Connection c = connection.getConnection()) {
        c.setAutoCommit(false);
        boolean current = outbox.complete(c, claim);
        handlerCalls.computeIfAbsent(claim.idempotencyKey(), k -> new CopyOnWriteArrayList<>())
            .add(id + (current ? "" : " (refused)"));
        if (!current) {
          c.rollback();
          return;
        }
        try (PreparedStatement ps = c.prepareStatement(
            "INSERT INTO " + results + " VALUES (?, ?, ?, ?)")) {
          ps.setString(1, claim.idempotencyKey());
          ps.setInt(2, id);
          ps.setInt(3, response.code());
          ps.setString(4, claim.token());
          ps.executeUpdate();
        }
        c.commit();
        handedOver.incrementAndGet();
      }
    }

    private void drainUntilEmpty() {
      try {
        while (!Thread.currentThread().isInterrupted()) {
          OutboxResumer.Report r = resumer.drainOnce();
          lost.addAndGet(r.lost());
          if (r.tried() == 0) {
            if (outbox.size() == 0) return;
            Thread.sleep(10); // the rest is leased by others (or a dead instance): wait for it
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        died = e; // killed: its connection is gone
      }
    }

    /** Kills this instance as a crashed process would end: interrupted, its connection closed. */
    void kill() {
      thread.interrupt();
      connection.close();
    }
  }

  Instance add(Duration lease, int batchSize, BeforeResume beforeResume) throws SQLException {
    Instance i = new Instance(instances.size(), lease, batchSize, beforeResume);
    instances.add(i);
    return i;
  }

  /** Starts every instance, waits for all to end; returns the elapsed nanoseconds. */
  long run(Duration timeout) throws InterruptedException {
    long start = System.nanoTime();
    for (Instance i : instances) i.thread.start();
    for (Instance i : instances) {
      i.thread.join(Math.max(1, timeout.toMillis() - (System.nanoTime() - start) / 1_000_000));
      assertThat(i.thread.isAlive()).as("resumer-%d still draining after %s", i.id, timeout)
          .isFalse();
    }
    return System.nanoTime() - start;
  }

  /** Committed result rows per key. */
  Map<String, Integer> resultsPerKey() throws SQLException {
    Map<String, Integer> out = new HashMap<>();
    try (Connection c = db.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT idempotency_key FROM " + results)) {
      while (rs.next()) out.merge(rs.getString(1), 1, Integer::sum);
    }
    return out;
  }

  /** Effects at the server per key. */
  Map<String, Integer> effectsPerKey() {
    Map<String, Integer> out = new HashMap<>();
    for (Effect e : server.effects()) out.merge(e.key(), 1, Integer::sum);
    return out;
  }

  long rowsLeft() {
    return TestDatabases.count(db, "SELECT COUNT(*) FROM " + table);
  }

  @Override
  public void close() throws Exception {
    for (Instance i : instances) {
      i.thread.interrupt();
      i.thread.join(10_000);
      i.connection.close();
    }
    server.close();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    execute(db, "DROP TABLE IF EXISTS " + results);
    execute(db, "DROP TABLE IF EXISTS " + table);
    db.close();
  }

  /** No hook. */
  static final BeforeResume NOTHING = (self, token) -> { };
}
