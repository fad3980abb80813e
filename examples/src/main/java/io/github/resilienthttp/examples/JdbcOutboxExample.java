package io.github.resilienthttp.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OutboxClaim;
import io.github.resilienthttp.OutboxResumer;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.outbox.jdbc.JdbcOutbox;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The JDBC outbox end to end: orders are paid through a flaky payments API; the payments whose
 * outcome stayed unknown are parked in a table ({@link JdbcOutbox}), and two resumer "instances"
 * on a schedule ({@link OutboxResumer#start}) drain it: each intent is claimed by one of them, resumed
 * with its own key (the server replays the payment it already made), and handed over in one
 * transaction that marks the order paid and removes the intent
 * ({@link JdbcOutbox#complete(Connection, OutboxClaim)}).
 *
 * <p>Embedded H2 by default; give a JDBC URL (with user and password) as the first argument to run
 * on PostgreSQL, e.g. {@code jdbc:postgresql://127.0.0.1:5432/shop?user=shop&password=shop}. The
 * example drops and creates its two tables ({@value #ORDERS} and {@value #OUTBOX}). Exit code 0 when
 * every order is paid exactly once and the outbox is empty.
 */
public final class JdbcOutboxExample {
  static final String ORDERS = "outbox_example_orders";
  static final String OUTBOX = "outbox_example_outbox";
  static final String H2_URL = "jdbc:h2:mem:outbox-example;DB_CLOSE_DELAY=-1";
  private static final MediaType JSON = MediaType.get("application/json");

  /**
   * What one run did.
   *
   * @param orders orders placed
   * @param parked payments parked with an unknown outcome
   * @param paid orders marked paid
   * @param payments payments made at the server (effects)
   * @param handovers result handovers committed by the resumers
   * @param left intents left in the outbox
   */
  public record Result(int orders, int parked, long paid, int payments, int handovers, long left) {
    /** {@return whether every order was paid once and nothing is left} */
    public boolean ok() {
      return paid == orders && payments == orders && handovers == parked && left == 0;
    }
  }

  private JdbcOutboxExample() {}

  /**
   * Runs 20 orders (6 of them parked) on H2, or on the database of {@code args[0]}.
   *
   * @param args optional: a JDBC URL
   * @throws Exception when the database or server cannot start
   */
  public static void main(String[] args) throws Exception {
    Result r = run(args.length > 0 ? args[0] : H2_URL, 20, 6, System.out);
    System.out.println(r.ok() ? "OK: every order paid exactly once, outbox empty"
        : "FAILED: " + r);
    if (!r.ok()) System.exit(1);
  }

  /**
   * Runs the example.
   *
   * @param jdbcUrl the database
   * @param orders how many orders to place, at least {@code parked}
   * @param parked how many of them meet a dropped connection on every attempt (parked)
   * @param out where to print
   * @return the counts
   * @throws Exception when the database or server cannot start
   */
  public static Result run(String jdbcUrl, int orders, int parked, PrintStream out)
      throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(4);
    OkHttpClient okHttp = new OkHttpClient();
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(2);
    try (HikariDataSource db = new HikariDataSource(config);
        IdempotentTestServer payments = IdempotentTestServer.startDefault()) {
      createTables(db);
      JdbcOutbox outbox = JdbcOutbox.builder().dataSource(db).table(OUTBOX).build();
      outbox.createSchema();
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
          .retryPolicy(RetryPolicy.builder().maxAttempts(2)
              .backoff(Backoff.fixed(Duration.ofMillis(10))).build())
          .build();

      // 1. Place the orders. The first `parked` payments are made by the server, but every answer
      //    is lost: the outcome is unknown, so the operation parks its intent in the outbox.
      List<Fault> drops = new ArrayList<>();
      for (int i = 0; i < 2 * parked; i++) drops.add(Fault.processThenDrop());
      payments.script(drops.toArray(Fault[]::new));
      int unknown = 0;
      for (int i = 0; i < orders; i++) {
        String order = String.format("order-%03d", i);
        insertOrder(db, order);
        Operation pay = client.operation(payment(payments, order)).idempotencyKey(order)
            .parkIndefiniteOutcomes(outbox);
        try (Response r = pay.execute()) {
          markPaid(db, order, r.code());
        } catch (IOException e) {
          unknown++;
        }
      }
      out.printf("placed %d orders: %d paid at once, %d parked (outcome unknown); outbox: %d%n",
          orders, orders - unknown, unknown, outbox.size());

      // 2. Two resumer instances drain the outbox on a schedule. Each hands a result over in one
      //    transaction: the order is marked paid and the intent removed, or neither.
      AtomicInteger handovers = new AtomicInteger();
      List<OutboxResumer.Schedule> schedules = new ArrayList<>();
      for (int instance = 0; instance < 2; instance++) {
        JdbcOutbox own = JdbcOutbox.builder().dataSource(db).table(OUTBOX).build();
        OutboxResumer resumer = OutboxResumer.builder(client, own).batchSize(2)
            .lease(Duration.ofSeconds(30)).retryDelay(Duration.ofMillis(100))
            .requestFor(token -> payment(payments, token.idempotencyKey()))
            .onClaimedResult((claim, r) -> {
              try (Connection c = db.getConnection()) {
                c.setAutoCommit(false);
                if (!own.complete(c, claim)) {
                  c.rollback(); // another instance holds it now: it hands the result over
                  return;
                }
                markPaid(c, claim.idempotencyKey(), r.code());
                c.commit();
                handovers.incrementAndGet();
              }
            }).build();
        schedules.add(resumer.start(executor, Duration.ofMillis(20)));
      }
      Instant giveUp = Instant.now().plusSeconds(30);
      while (outbox.size() > 0 && Instant.now().isBefore(giveUp)) Thread.sleep(20);
      for (OutboxResumer.Schedule s : schedules) s.stop(Duration.ofSeconds(10));

      long paid = count(db, "SELECT COUNT(*) FROM " + ORDERS + " WHERE status = 'PAID'");
      Result result = new Result(orders, unknown, paid, payments.effects().size(),
          handovers.get(), outbox.size());
      out.printf("resumed: %d handed over; orders paid: %d of %d; payments at the server: %d;"
          + " left in the outbox: %d%n", result.handovers(), paid, orders, result.payments(),
          result.left());
      return result;
    } finally {
      executor.shutdownNow();
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }
  }

  private static Request payment(IdempotentTestServer payments, String order) {
    return new Request.Builder().url(payments.url("/payments"))
        .post(RequestBody.create("{\"order\":\"" + order + "\",\"amount\":1000}", JSON)).build();
  }

  private static void createTables(HikariDataSource db) throws SQLException {
    try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + ORDERS);
      st.execute("DROP TABLE IF EXISTS " + OUTBOX);
      st.execute("CREATE TABLE " + ORDERS + " (id VARCHAR(64) PRIMARY KEY,"
          + " status VARCHAR(16) NOT NULL, payment_status INTEGER)");
    }
  }

  private static void insertOrder(HikariDataSource db, String order) throws SQLException {
    try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
        "INSERT INTO " + ORDERS + " (id, status) VALUES (?, 'PENDING')")) {
      ps.setString(1, order);
      ps.executeUpdate();
    }
  }

  private static void markPaid(HikariDataSource db, String order, int status) throws SQLException {
    try (Connection c = db.getConnection()) {
      markPaid(c, order, status);
    }
  }

  private static void markPaid(Connection c, String order, int status) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + ORDERS + " SET status = ?,"
        + " payment_status = ? WHERE id = ?")) {
      ps.setString(1, status / 100 == 2 ? "PAID" : "FAILED");
      ps.setInt(2, status);
      ps.setString(3, order);
      ps.executeUpdate();
    }
  }

  private static long count(HikariDataSource db, String sql) throws SQLException {
    try (Connection c = db.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
