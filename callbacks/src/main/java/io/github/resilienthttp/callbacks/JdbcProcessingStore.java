package io.github.resilienthttp.callbacks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Processing records in a SQL table, shared by every receiver and consumer that uses the same
 * database; tested on PostgreSQL and H2.
 *
 * <p><b>Schema.</b> The DDL ships as the resource
 * {@code /io/github/resilienthttp/callbacks/callback_processing.sql} (its comments describe each
 * column); {@link #schemaDdl()} returns it for the configured table and {@link #createSchema()} runs
 * it ({@code CREATE … IF NOT EXISTS}). Run it with your migrations tool instead when you have one.
 *
 * <p><b>No check-then-insert race.</b> A claim inserts the row and lets the primary key decide: on
 * PostgreSQL with {@code INSERT … ON CONFLICT DO NOTHING}, elsewhere by catching the unique violation
 * (SQLState {@code 23505}, or {@code 23000}). Only when the row exists does it read it, and taking over
 * an expired lease is one conditional {@code UPDATE}, so of two consumers racing for it one wins.
 *
 * <p><b>Completion in the business transaction.</b> {@link #complete(Connection, Claim.Acquired,
 * String)} marks the record done on the caller's connection without committing: commit it together
 * with the business change, and both happen or neither does. If the consumer dies before the commit,
 * the database rolls both back and the record stays in progress until its lease expires; then the
 * next delivery takes it over. If the lease was already taken over, completion throws
 * {@link LeaseLostException} and the caller must roll back. The claim itself commits on its own
 * connection at once (it must be visible to other consumers).
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#dataSource(DataSource) dataSource}</td><td>required</td><td>any; pooled in
 *     production</td></tr>
 * <tr><td>{@link Builder#table(String) table}</td><td>{@code callback_processing}</td>
 *     <td>{@code [schema.]name}, letters, digits and {@code _}</td></tr>
 * <tr><td>{@link Builder#retention(Duration) retention} of done records</td><td>30 days</td>
 *     <td>1 s..3650 days</td></tr>
 * <tr><td>{@link Builder#clock(InstantSource) clock}</td><td>{@link Clock#systemUTC()}</td>
 *     <td>any</td></tr>
 * </table>
 *
 * <p>Leases and retention are measured on this store's clock, not the database's, so every consumer's
 * clock must be roughly right (a lease is only as exact as the clocks agree). Done records past
 * retention are treated as absent by {@link #claim} and deleted by {@link #purgeExpired()}, which the
 * application runs periodically (the store starts no threads).
 *
 * <p>Thread-safe; holds no connection between calls.
 */
public final class JdbcProcessingStore implements ProcessingStore {
  /** The DDL resource, for migration tools. */
  public static final String SCHEMA_RESOURCE = "/io/github/resilienthttp/callbacks/callback_processing.sql";
  static final String DEFAULT_TABLE = "callback_processing";
  static final int MAX_RESULT_LENGTH = 4000;
  private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");
  private static final Duration MAX_RETENTION = Duration.ofDays(3650);
  private static final int MAX_CLAIM_ROUNDS = 10;

  private final DataSource dataSource;
  private final String table;
  private final Duration retention;
  private final InstantSource clock;
  private final String insert;
  private final String select;
  private final String takeOver;
  private final String completeSql;
  private final String releaseSql;
  private volatile Boolean postgres;

  private JdbcProcessingStore(Builder b) {
    this.dataSource = b.dataSource;
    this.table = b.table;
    this.retention = b.retention;
    this.clock = b.clock;
    String columns = "(scope, event_id, state, lease_token, lease_expires_at, attempts, created_at)"
        + " VALUES (?, ?, 'IN_PROGRESS', ?, ?, 1, ?)";
    this.insert = "INSERT INTO " + table + " " + columns;
    this.select = "SELECT state, lease_expires_at, attempts, result, completed_at FROM " + table
        + " WHERE scope = ? AND event_id = ?";
    this.takeOver = "UPDATE " + table + " SET state = 'IN_PROGRESS', lease_token = ?,"
        + " lease_expires_at = ?, attempts = ?, result = NULL, completed_at = NULL, created_at = ?"
        + " WHERE scope = ? AND event_id = ? AND ((state = 'IN_PROGRESS' AND lease_expires_at <= ?)"
        + " OR (state = 'DONE' AND completed_at <= ?))";
    this.completeSql = "UPDATE " + table + " SET state = 'DONE', result = ?, completed_at = ?,"
        + " lease_token = NULL, lease_expires_at = NULL"
        + " WHERE scope = ? AND event_id = ? AND state = 'IN_PROGRESS' AND lease_token = ?";
    this.releaseSql = "UPDATE " + table + " SET lease_token = NULL, lease_expires_at = 0"
        + " WHERE scope = ? AND event_id = ? AND state = 'IN_PROGRESS' AND lease_token = ?";
  }

  /** {@return a builder with the defaults above} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The shipped DDL with the configured table name.
   *
   * @return {@code CREATE TABLE} and {@code CREATE INDEX} statements, separated by {@code ;}
   */
  public String schemaDdl() {
    String ddl;
    try (InputStream in = JdbcProcessingStore.class.getResourceAsStream(SCHEMA_RESOURCE)) {
      if (in == null) throw new IllegalStateException(SCHEMA_RESOURCE + " is missing from the jar");
      ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String simple = table.substring(table.indexOf('.') + 1);
    return ddl.replace(DEFAULT_TABLE + "_", simple + "_").replace(DEFAULT_TABLE, table);
  }

  /**
   * Creates the table and its index when absent ({@link #schemaDdl()}), in one connection.
   *
   * @throws ProcessingStoreException when the database refuses
   */
  public void createSchema() {
    List<String> statements = new ArrayList<>();
    StringBuilder sb = new StringBuilder();
    for (String line : schemaDdl().split("\n")) {
      if (!line.trim().startsWith("--")) sb.append(line).append('\n');
    }
    for (String s : sb.toString().split(";")) if (!s.isBlank()) statements.add(s.trim());
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      c.setAutoCommit(true);
      for (String s : statements) st.execute(s);
    } catch (SQLException e) {
      throw new ProcessingStoreException("creating table " + table + " failed", e);
    }
  }

  @Override
  public Claim claim(String scope, String eventId, Duration lease) {
    new RecordKey(scope, eventId);
    RecordKey.checkLease(lease);
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      for (int round = 0; round < MAX_CLAIM_ROUNDS; round++) {
        Instant now = clock.instant();
        String token = UUID.randomUUID().toString();
        Instant expires = now.plus(lease);
        if (tryInsert(c, scope, eventId, token, expires, now)) {
          return new Claim.Acquired(scope, eventId, token, expires, 1);
        }
        try (PreparedStatement ps = c.prepareStatement(select)) {
          ps.setString(1, scope);
          ps.setString(2, eventId);
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) continue; // purged between the insert and the read: insert again
            String state = rs.getString(1);
            long leaseExpires = rs.getLong(2);
            int attempts = rs.getInt(3);
            String result = rs.getString(4);
            long completedAt = rs.getLong(5);
            long cutoff = now.minus(retention).toEpochMilli();
            if ("DONE".equals(state) && completedAt > cutoff) {
              return new Claim.Done(scope, eventId, result, Instant.ofEpochMilli(completedAt));
            }
            if ("IN_PROGRESS".equals(state) && leaseExpires > now.toEpochMilli()) {
              return new Claim.InProgress(scope, eventId, Instant.ofEpochMilli(leaseExpires));
            }
            int attempt = "DONE".equals(state) ? 1 : attempts + 1;
            if (tryTakeOver(c, scope, eventId, token, expires, attempt, now, cutoff)) {
              return new Claim.Acquired(scope, eventId, token, expires, attempt);
            }
            // Another consumer took it over (or completed it) between the read and the update.
          }
        }
      }
      throw new ProcessingStoreException("claim of (" + scope + ", " + eventId + ") did not settle in "
          + MAX_CLAIM_ROUNDS + " rounds (records changing under it)", null);
    } catch (SQLException e) {
      throw new ProcessingStoreException("claim of (" + scope + ", " + eventId + ") failed on " + table, e);
    }
  }

  private boolean tryInsert(Connection c, String scope, String eventId, String token, Instant expires,
      Instant now) throws SQLException {
    boolean pg = isPostgres(c);
    try (PreparedStatement ps = c.prepareStatement(pg ? insert + " ON CONFLICT DO NOTHING" : insert)) {
      ps.setString(1, scope);
      ps.setString(2, eventId);
      ps.setString(3, token);
      ps.setLong(4, expires.toEpochMilli());
      ps.setLong(5, now.toEpochMilli());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if (!pg && isUniqueViolation(e)) return false;
      throw e;
    }
  }

  private boolean tryTakeOver(Connection c, String scope, String eventId, String token, Instant expires,
      int attempt, Instant now, long cutoff) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(takeOver)) {
      ps.setString(1, token);
      ps.setLong(2, expires.toEpochMilli());
      ps.setInt(3, attempt);
      ps.setLong(4, now.toEpochMilli());
      ps.setString(5, scope);
      ps.setString(6, eventId);
      ps.setLong(7, now.toEpochMilli());
      ps.setLong(8, cutoff);
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * Marks the record done on its own connection (auto-commit). When the business change is in the
   * same database, use {@link #complete(Connection, Claim.Acquired, String)} instead.
   */
  @Override
  public void complete(Claim.Acquired claim, String result) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      complete(c, claim, result);
    } catch (SQLException e) {
      throw new ProcessingStoreException(
          "complete of (" + claim.scope() + ", " + claim.eventId() + ") failed on " + table, e);
    }
  }

  /**
   * Marks the record done on the caller's connection, inside the caller's transaction: nothing is
   * committed here. Commit after this returns, with the business change; on {@link LeaseLostException}
   * roll back.
   *
   * @param connection the caller's connection, auto-commit off, holding the business change
   * @param claim the caller's claim
   * @param result stored and returned to duplicates (up to 4000 characters), may be {@code null}
   * @throws LeaseLostException when the lease was taken over, or the record is already done
   * @throws ProcessingStoreException when the statement fails
   * @throws IllegalArgumentException when the result is longer than 4000 characters
   */
  public void complete(Connection connection, Claim.Acquired claim, String result) {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(claim, "claim");
    if (result != null && result.length() > MAX_RESULT_LENGTH) {
      throw new IllegalArgumentException(
          "result: length " + result.length() + " is over " + MAX_RESULT_LENGTH);
    }
    int updated;
    try (PreparedStatement ps = connection.prepareStatement(completeSql)) {
      ps.setString(1, result);
      ps.setLong(2, clock.instant().toEpochMilli());
      ps.setString(3, claim.scope());
      ps.setString(4, claim.eventId());
      ps.setString(5, claim.token());
      updated = ps.executeUpdate();
    } catch (SQLException e) {
      throw new ProcessingStoreException(
          "complete of (" + claim.scope() + ", " + claim.eventId() + ") failed on " + table, e);
    }
    if (updated != 1) throw new LeaseLostException(claim.scope(), claim.eventId());
  }

  @Override
  public void release(Claim.Acquired claim) {
    Objects.requireNonNull(claim, "claim");
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(releaseSql)) {
      c.setAutoCommit(true);
      ps.setString(1, claim.scope());
      ps.setString(2, claim.eventId());
      ps.setString(3, claim.token());
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new ProcessingStoreException(
          "release of (" + claim.scope() + ", " + claim.eventId() + ") failed on " + table, e);
    }
  }

  /**
   * Deletes done records completed more than {@link #retention()} ago. Run it periodically.
   *
   * @return how many rows were deleted
   * @throws ProcessingStoreException when the statement fails
   */
  public int purgeExpired() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "DELETE FROM " + table + " WHERE state = 'DONE' AND completed_at <= ?")) {
      c.setAutoCommit(true);
      ps.setLong(1, clock.instant().minus(retention).toEpochMilli());
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new ProcessingStoreException("purge of " + table + " failed", e);
    }
  }

  /**
   * Runs {@link #purgeExpired()} every {@code period} on {@code executor} (fixed delay, the first
   * now) until the returned schedule is stopped. A purge that throws is logged and counted; the next
   * one runs as scheduled. The executor stays yours: shut it down after stopping.
   *
   * @param executor where purges run
   * @param period between the end of one purge and the start of the next, 1 ms to 24 h; a fraction of
   *     {@link #retention()} keeps the table near its live size
   * @return the schedule, to stop
   * @throws IllegalArgumentException when {@code period} is out of range
   */
  public PurgeSchedule startPurging(ScheduledExecutorService executor, Duration period) {
    return PurgeSchedule.start(executor, period, "purge of " + table, this::purgeExpired);
  }

  @Override
  public Duration retention() {
    return retention;
  }

  /** {@return the table name} */
  public String table() {
    return table;
  }

  /** {@return the data source claims, plain completions and releases use} */
  public DataSource dataSource() {
    return dataSource;
  }

  private boolean isPostgres(Connection c) throws SQLException {
    Boolean pg = postgres;
    if (pg == null) {
      pg = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT).contains("postgresql");
      postgres = pg;
    }
    return pg;
  }

  private static boolean isUniqueViolation(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && ("23505".equals(s.getSQLState()) || "23000".equals(s.getSQLState()))) {
        return true;
      }
    }
    return false;
  }

  static void checkRetention(Duration retention) {
    if (retention.compareTo(Duration.ofSeconds(1)) < 0 || retention.compareTo(MAX_RETENTION) > 0) {
      throw new IllegalArgumentException("retention: " + retention + " is outside 1 s..3650 days");
    }
  }

  @Override
  public String toString() {
    return "JdbcProcessingStore{table=" + table + ", retention=" + retention + "}";
  }

  /** Builds a {@link JdbcProcessingStore}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private DataSource dataSource;
    private String table = DEFAULT_TABLE;
    private Duration retention = Duration.ofDays(30);
    private InstantSource clock = Clock.systemUTC();

    private Builder() {}

    /**
     * Required: where the table lives. Business changes completed with
     * {@link #complete(Connection, Claim.Acquired, String)} must be in the same database.
     *
     * @param dataSource the data source
     * @return this builder
     */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      return this;
    }

    /**
     * The table, optionally schema-qualified. Default {@code callback_processing}.
     *
     * @param table the table name
     * @return this builder
     */
    public Builder table(String table) {
      this.table = Objects.requireNonNull(table, "table");
      return this;
    }

    /**
     * How long done records are kept after completion: 1 s to 3650 days. Default 30 days (Stripe
     * retries a delivery for up to three days).
     *
     * @param retention the retention
     * @return this builder
     */
    public Builder retention(Duration retention) {
      this.retention = Objects.requireNonNull(retention, "retention");
      return this;
    }

    /**
     * Leases and retention are measured on this clock. Default {@link Clock#systemUTC()}.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the store; does not touch the database.
     *
     * @return the store
     * @throws IllegalStateException when no data source was set
     * @throws IllegalArgumentException naming the field and value when a setting is invalid
     */
    public JdbcProcessingStore build() {
      if (dataSource == null) throw new IllegalStateException("dataSource: required");
      if (!TABLE.matcher(table).matches()) {
        throw new IllegalArgumentException("table: '" + table
            + "' is not [schema.]name of letters, digits and _ (up to 63 each)");
      }
      checkRetention(retention);
      return new JdbcProcessingStore(this);
    }
  }
}
