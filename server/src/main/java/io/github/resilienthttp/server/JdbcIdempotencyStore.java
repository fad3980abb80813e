package io.github.resilienthttp.server;

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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Idempotency records in a SQL table of the application's database, shared by every instance of the
 * service; tested on PostgreSQL and H2. The algorithm is the callbacks module's
 * {@code JdbcProcessingStore}'s, with a fingerprint and a recorded response.
 *
 * <p><b>No check-then-insert race.</b> A claim inserts the row and lets the primary key (scope, key)
 * decide: on PostgreSQL with {@code INSERT … ON CONFLICT DO NOTHING}, elsewhere by catching the unique
 * violation (SQLState {@code 23505} or {@code 23000}). Only when the row exists does it read it, and
 * taking over an expired lease is one conditional {@code UPDATE}, so of two requests racing for it one
 * wins.
 *
 * <p><b>Completion in the business transaction.</b> {@link #complete(Connection, KeyClaim.Acquired,
 * IdempotentResponse)} records the response on the caller's connection without committing: commit it
 * with the business write, and both happen or neither does. A crash before the commit rolls both
 * back; the record stays in progress until its lease expires, and the next retry runs the handler
 * again, once. The claim itself commits at once on its own connection (others must see it).
 *
 * <p><b>Schema.</b> {@link #schemaDdl(boolean)} gives the DDL ({@code BYTEA} on PostgreSQL,
 * {@code VARBINARY} elsewhere); {@link #createSchema()} runs it ({@code IF NOT EXISTS}). Times are epoch
 * milliseconds of this store's clock, so every instance's clock must be roughly right.
 *
 * <p>Thread-safe; holds no connection between calls.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {
  static final String DEFAULT_TABLE = "idempotency_keys";
  /** The largest recorded body the column holds, in bytes. */
  public static final int MAX_BODY_BYTES = 1024 * 1024;
  private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");
  private static final int MAX_CLAIM_ROUNDS = 10;

  private final DataSource dataSource;
  private final String table;
  private final InstantSource clock;
  private final String insert;
  private final String select;
  private final String takeOver;
  private final String completeSql;
  private final String releaseSql;
  private volatile Boolean postgres;

  private JdbcIdempotencyStore(Builder b) {
    this.dataSource = b.dataSource;
    this.table = b.table;
    this.clock = b.clock;
    this.insert = "INSERT INTO " + table + " (scope, idem_key, fingerprint, state, lease_token,"
        + " lease_expires_at, attempts, created_at) VALUES (?, ?, ?, 'IN_PROGRESS', ?, ?, 1, ?)";
    this.select = "SELECT fingerprint, state, lease_token, lease_expires_at, attempts, completed_at,"
        + " response_status, response_headers, response_body FROM " + table + " WHERE scope = ? AND idem_key = ?";
    this.takeOver = "UPDATE " + table + " SET state = 'IN_PROGRESS', fingerprint = ?, lease_token = ?,"
        + " lease_expires_at = ?, attempts = ?, completed_at = NULL, response_status = NULL,"
        + " response_headers = NULL, response_body = NULL, created_at = ?"
        + " WHERE scope = ? AND idem_key = ? AND ((state = 'IN_PROGRESS' AND lease_expires_at <= ? AND fingerprint = ?)"
        + " OR (state = 'COMPLETED' AND completed_at <= ?))";
    this.completeSql = "UPDATE " + table + " SET state = 'COMPLETED', completed_at = ?, response_status = ?,"
        + " response_headers = ?, response_body = ?, lease_token = NULL, lease_expires_at = NULL"
        + " WHERE scope = ? AND idem_key = ? AND state = 'IN_PROGRESS' AND lease_token = ?";
    this.releaseSql = "UPDATE " + table + " SET lease_token = NULL, lease_expires_at = 0"
        + " WHERE scope = ? AND idem_key = ? AND state = 'IN_PROGRESS' AND lease_token = ?";
  }

  /** {@return a builder} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The DDL for the configured table.
   *
   * @param postgresql true for PostgreSQL's {@code BYTEA}, false for {@code VARBINARY} (H2 and most others)
   * @return a {@code CREATE TABLE IF NOT EXISTS} and a {@code CREATE INDEX IF NOT EXISTS}, separated by {@code ;}
   */
  public String schemaDdl(boolean postgresql) {
    String simple = table.substring(table.indexOf('.') + 1);
    return "CREATE TABLE IF NOT EXISTS " + table + " (\n"
        + "  scope VARCHAR(500) NOT NULL,            -- principal, method and route\n"
        + "  idem_key VARCHAR(255) NOT NULL,         -- the Idempotency-Key, unquoted\n"
        + "  fingerprint VARCHAR(100) NOT NULL,      -- digest of the request's chosen parts\n"
        + "  state VARCHAR(16) NOT NULL,             -- IN_PROGRESS or COMPLETED\n"
        + "  lease_token VARCHAR(36),                -- fences the holder of an in-progress lease\n"
        + "  lease_expires_at BIGINT,                -- epoch ms, an expired lease may be taken over\n"
        + "  attempts INT NOT NULL,                  -- claims of this record (2+ after a crash)\n"
        + "  created_at BIGINT NOT NULL,             -- epoch ms of the (latest) claim\n"
        + "  completed_at BIGINT,                    -- epoch ms, retention counts from here\n"
        + "  response_status INT,\n"
        + "  response_headers VARCHAR(8000),         -- 'name: value' lines\n"
        + "  response_body " + (postgresql ? "BYTEA" : "VARBINARY(" + MAX_BODY_BYTES + ")") + ",\n"
        + "  PRIMARY KEY (scope, idem_key)\n"
        + ");\n"
        + "CREATE INDEX IF NOT EXISTS " + simple + "_completed ON " + table + " (state, completed_at)";
  }

  /**
   * Creates the table and its index when absent.
   *
   * @throws IdempotencyStoreException when the database refuses
   */
  public void createSchema() {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      c.setAutoCommit(true);
      StringBuilder sb = new StringBuilder();
      for (String line : schemaDdl(isPostgres(c)).split("\n")) {
        int comment = line.indexOf("--");
        sb.append(comment < 0 ? line : line.substring(0, comment)).append('\n');
      }
      for (String s : sb.toString().split(";")) {
        if (!s.isBlank()) st.execute(s);
      }
    } catch (SQLException e) {
      throw new IdempotencyStoreException("creating table " + table + " failed", e);
    }
  }

  @Override
  public KeyClaim claim(String scope, String key, String fingerprint, Duration lease,
      Instant reclaimCompletedBefore) {
    IdempotencyStore.checkClaim(scope, key, fingerprint, lease);
    Objects.requireNonNull(reclaimCompletedBefore, "reclaimCompletedBefore");
    long reclaimCutoff = reclaimCompletedBefore.equals(Instant.MIN) ? Long.MIN_VALUE
        : reclaimCompletedBefore.toEpochMilli();
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      for (int round = 0; round < MAX_CLAIM_ROUNDS; round++) {
        Instant now = clock.instant();
        String token = UUID.randomUUID().toString();
        Instant expires = now.plus(lease);
        if (tryInsert(c, scope, key, fingerprint, token, expires, now)) {
          return new KeyClaim.Acquired(scope, key, fingerprint, token, expires, 1, false);
        }
        try (PreparedStatement ps = c.prepareStatement(select)) {
          ps.setString(1, scope);
          ps.setString(2, key);
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) continue; // purged between the insert and the read: insert again
            String storedFingerprint = rs.getString(1);
            boolean completed = "COMPLETED".equals(rs.getString(2));
            boolean held = rs.getString(3) != null;
            long leaseExpires = rs.getLong(4);
            int attempts = rs.getInt(5);
            long completedAt = rs.getLong(6);
            int attempt;
            if (completed && completedAt <= reclaimCutoff) {
              attempt = 1;
            } else if (!storedFingerprint.equals(fingerprint)) {
              return new KeyClaim.Mismatch(scope, key);
            } else if (completed) {
              return new KeyClaim.Completed(scope, key,
                  new IdempotentResponse(rs.getInt(7), decodeHeaders(rs.getString(8)), rs.getBytes(9)),
                  Instant.ofEpochMilli(completedAt));
            } else if (leaseExpires > now.toEpochMilli()) {
              return new KeyClaim.InProgress(scope, key, Instant.ofEpochMilli(leaseExpires));
            } else {
              attempt = attempts + 1;
            }
            if (tryTakeOver(c, scope, key, fingerprint, token, expires, attempt, now, reclaimCutoff)) {
              return new KeyClaim.Acquired(scope, key, fingerprint, token, expires, attempt, !completed && held);
            }
            // Another request took it over, or completed it, between the read and the update.
          }
        }
      }
      throw new IdempotencyStoreException("claim of key " + key + " in " + scope + " did not settle in "
          + MAX_CLAIM_ROUNDS + " rounds (the record kept changing)", null);
    } catch (SQLException e) {
      throw new IdempotencyStoreException("claim of key " + key + " in " + scope + " failed on " + table, e);
    }
  }

  private boolean tryInsert(Connection c, String scope, String key, String fingerprint, String token,
      Instant expires, Instant now) throws SQLException {
    boolean pg = isPostgres(c);
    try (PreparedStatement ps = c.prepareStatement(pg ? insert + " ON CONFLICT DO NOTHING" : insert)) {
      ps.setString(1, scope);
      ps.setString(2, key);
      ps.setString(3, fingerprint);
      ps.setString(4, token);
      ps.setLong(5, expires.toEpochMilli());
      ps.setLong(6, now.toEpochMilli());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if (!pg && isUniqueViolation(e)) return false;
      throw e;
    }
  }

  private boolean tryTakeOver(Connection c, String scope, String key, String fingerprint, String token,
      Instant expires, int attempt, Instant now, long reclaimCutoff) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(takeOver)) {
      ps.setString(1, fingerprint);
      ps.setString(2, token);
      ps.setLong(3, expires.toEpochMilli());
      ps.setInt(4, attempt);
      ps.setLong(5, now.toEpochMilli());
      ps.setString(6, scope);
      ps.setString(7, key);
      ps.setLong(8, now.toEpochMilli());
      ps.setString(9, fingerprint);
      ps.setLong(10, reclaimCutoff);
      return ps.executeUpdate() == 1;
    }
  }

  /** Records the response on its own connection (auto-commit). */
  @Override
  public void complete(KeyClaim.Acquired claim, IdempotentResponse response) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      complete(c, claim, response);
    } catch (SQLException e) {
      throw new IdempotencyStoreException("complete of key " + claim.key() + " failed on " + table, e);
    }
  }

  /**
   * Records the response on the caller's connection, inside the caller's transaction: nothing is
   * committed here. Commit after this returns, with the business write; on {@link LeaseLostException}
   * roll back.
   *
   * @param connection the caller's connection, auto-commit off, holding the business write
   * @param claim the caller's claim
   * @param response the response to replay; its body at most {@link #MAX_BODY_BYTES}
   * @throws LeaseLostException when the lease was taken over
   * @throws IdempotencyStoreException when the statement fails
   * @throws IllegalArgumentException when the body or the headers are too large for the columns
   */
  public void complete(Connection connection, KeyClaim.Acquired claim, IdempotentResponse response) {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(response, "response");
    if (response.body().length > MAX_BODY_BYTES) {
      throw new IllegalArgumentException("response body: " + response.body().length + " bytes is over " + MAX_BODY_BYTES);
    }
    String headers = encodeHeaders(response.headers());
    if (headers.length() > 8000) throw new IllegalArgumentException("response headers: " + headers.length() + " characters is over 8000");
    int updated;
    try (PreparedStatement ps = connection.prepareStatement(completeSql)) {
      ps.setLong(1, clock.instant().toEpochMilli());
      ps.setInt(2, response.status());
      ps.setString(3, headers);
      ps.setBytes(4, response.body());
      ps.setString(5, claim.scope());
      ps.setString(6, claim.key());
      ps.setString(7, claim.token());
      updated = ps.executeUpdate();
    } catch (SQLException e) {
      throw new IdempotencyStoreException("complete of key " + claim.key() + " failed on " + table, e);
    }
    if (updated != 1) throw new LeaseLostException(claim.scope(), claim.key());
  }

  @Override
  public void release(KeyClaim.Acquired claim) {
    Objects.requireNonNull(claim, "claim");
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(releaseSql)) {
      c.setAutoCommit(true);
      ps.setString(1, claim.scope());
      ps.setString(2, claim.key());
      ps.setString(3, claim.token());
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IdempotencyStoreException("release of key " + claim.key() + " failed on " + table, e);
    }
  }

  @Override
  public int purgeCompletedBefore(Instant completedAtOrBefore) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "DELETE FROM " + table + " WHERE state = 'COMPLETED' AND completed_at <= ?")) {
      c.setAutoCommit(true);
      ps.setLong(1, completedAtOrBefore.toEpochMilli());
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IdempotencyStoreException("purge of " + table + " failed", e);
    }
  }

  /** {@return the data source: business writes completed in one transaction must use it too} */
  public DataSource dataSource() {
    return dataSource;
  }

  /** {@return the table name} */
  public String table() {
    return table;
  }

  static String encodeHeaders(Map<String, List<String>> headers) {
    StringBuilder sb = new StringBuilder();
    headers.forEach((name, values) -> values.forEach(v -> sb.append(name).append(": ").append(v).append('\n')));
    return sb.toString();
  }

  static Map<String, List<String>> decodeHeaders(String text) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    if (text == null) return headers;
    for (String line : text.split("\n")) {
      int colon = line.indexOf(": ");
      if (colon <= 0) continue;
      headers.computeIfAbsent(line.substring(0, colon), k -> new ArrayList<>()).add(line.substring(colon + 2));
    }
    return headers;
  }

  private boolean isPostgres(Connection c) throws SQLException {
    Boolean pg = postgres;
    if (pg == null) {
      pg = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT).contains("postgresql");
      postgres = pg;
    }
    return pg;
  }

  /**
   * Whether an exception, or one of its causes, is a unique-constraint violation (SQLState
   * {@code 23505}, or {@code 23000} on some drivers).
   *
   * @param e the exception
   * @return true for a unique violation
   */
  public static boolean isUniqueViolation(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && ("23505".equals(s.getSQLState()) || "23000".equals(s.getSQLState()))) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "JdbcIdempotencyStore{table=" + table + "}";
  }

  /** Builds a {@link JdbcIdempotencyStore}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private DataSource dataSource;
    private String table = DEFAULT_TABLE;
    private InstantSource clock = Clock.systemUTC();

    private Builder() {}

    /**
     * Required: where the table lives; transactional handlers write to the same database.
     *
     * @param dataSource the data source
     * @return this builder
     */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      return this;
    }

    /**
     * The table, optionally schema-qualified. Default {@code idempotency_keys}.
     *
     * @param table the table name
     * @return this builder
     */
    public Builder table(String table) {
      this.table = Objects.requireNonNull(table, "table");
      return this;
    }

    /**
     * Leases and completion times are read from this clock. Default {@link Clock#systemUTC()}.
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
     * @throws IllegalArgumentException when the table name is not {@code [schema.]name}
     */
    public JdbcIdempotencyStore build() {
      if (dataSource == null) throw new IllegalStateException("dataSource: required");
      if (!TABLE.matcher(table).matches()) {
        throw new IllegalArgumentException("table: '" + table + "' is not [schema.]name of letters, digits and _");
      }
      return new JdbcIdempotencyStore(this);
    }
  }
}
