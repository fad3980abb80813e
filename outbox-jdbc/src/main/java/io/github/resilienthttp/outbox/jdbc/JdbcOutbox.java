package io.github.resilienthttp.outbox.jdbc;

import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutboxClaim;
import io.github.resilienthttp.OutboxEntry;
import io.github.resilienthttp.ResumeToken;
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
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * An {@link Outbox} in a SQL table, so that intents parked by
 * {@link io.github.resilienthttp.Operation#parkIndefiniteOutcomes(Outbox)} survive a restart and are
 * shared by every process on the same database; tested on PostgreSQL and H2. An
 * {@link io.github.resilienthttp.OutboxResumer} drains it like any outbox.
 *
 * <p><b>Schema.</b> The DDL ships as the resource {@value #SCHEMA_RESOURCE} (its comments describe each
 * column): one row per idempotency key (the primary key) with the token as
 * {@link ResumeToken#toText()}, the reason, when it was parked, the tries and when it is next due.
 * {@link #schemaDdl()} returns it for the configured table and {@link #createSchema()} runs it
 * ({@code CREATE … IF NOT EXISTS}); run it with your migrations tool instead when you have one.
 *
 * <p><b>Park is an upsert.</b> Parking a key that is already parked replaces its row in one statement,
 * never a read then an insert: on PostgreSQL {@code INSERT … ON CONFLICT (idempotency_key) DO UPDATE},
 * on H2 {@code MERGE INTO … KEY (idempotency_key)}, on other databases an {@code UPDATE} then an
 * {@code INSERT}, retried when a concurrent insert wins (SQLState {@code 23505} or {@code 23000}). Two
 * processes parking the same key at once leave one row. The database is recognised from the
 * connection's metadata, once.
 *
 * <p><b>Parking in the business transaction.</b> {@link #park(Connection, OutboxEntry)} writes on the
 * caller's connection without committing: commit it with the business record and both are stored or
 * neither is. The other methods use a connection of the data source each, in auto-commit.
 *
 * <p><b>Several resumers on one table.</b> {@link #claim} leases due rows to one caller at a time
 * ({@code FOR UPDATE SKIP LOCKED} on PostgreSQL, a conditional {@code UPDATE} elsewhere) and stamps
 * each with a fencing token in {@code lease_token}; {@link #complete}, {@link #reschedule} and
 * {@link #renew} act only while the row still holds the caller's token, so a resumer that stalled past
 * its lease cannot delete or reschedule a row another resumer took over. A result handler can settle
 * the intent in its own transaction with {@link #complete(Connection, OutboxClaim)}.
 *
 * <p><b>Units.</b> Times are stored as epoch milliseconds (an entry's instants are truncated to the
 * millisecond); {@link #due(Instant, int)} compares them with the {@code now} it is given, which the
 * resumer takes from its client's time source. The {@link Builder#clock(InstantSource) clock} only
 * serves {@link #dueNow(int)}.
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#dataSource(DataSource) dataSource}</td><td>required</td><td>any; pooled in
 *     production</td></tr>
 * <tr><td>{@link Builder#table(String) table}</td><td>{@code resilient_http_outbox}</td>
 *     <td>{@code [schema.]name}, letters, digits and {@code _}, up to 63 each</td></tr>
 * <tr><td>{@link Builder#clock(InstantSource) clock}</td><td>{@link Clock#systemUTC()}</td>
 *     <td>any</td></tr>
 * </table>
 *
 * <p><b>Errors.</b> Every method wraps a {@link SQLException} in an unchecked
 * {@link OutboxStoreException} naming the operation, the table and the key; it never swallows one.
 *
 * <p>Thread-safe; holds no connection between calls and starts no threads.
 */
public final class JdbcOutbox implements Outbox {
  /** The DDL resource, for migration tools. */
  public static final String SCHEMA_RESOURCE = "/io/github/resilienthttp/outbox/jdbc/outbox.sql";
  static final String DEFAULT_TABLE = "resilient_http_outbox";
  static final int MAX_REASON_LENGTH = 200;
  private static final Pattern TABLE =
      Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");
  private static final int MAX_UPSERT_ROUNDS = 5;
  private static final String COLUMNS =
      "(idempotency_key, token, reason, parked_at, tries, next_due_at, lease_token)";
  private static final String ENTRY_COLUMNS =
      "idempotency_key, token, reason, parked_at, tries, next_due_at";

  private enum Dialect { POSTGRES, H2, OTHER }

  private final DataSource dataSource;
  private final String table;
  private final InstantSource clock;
  private final String insert;
  private final String update;
  private volatile Dialect dialect;

  private JdbcOutbox(Builder b) {
    this.dataSource = b.dataSource;
    this.table = b.table;
    this.clock = b.clock;
    this.insert = "INSERT INTO " + table + " " + COLUMNS + " VALUES (?, ?, ?, ?, ?, ?, NULL)";
    this.update = "UPDATE " + table + " SET token = ?, reason = ?, parked_at = ?, tries = ?,"
        + " next_due_at = ?, lease_token = NULL WHERE idempotency_key = ?";
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
    try (InputStream in = JdbcOutbox.class.getResourceAsStream(SCHEMA_RESOURCE)) {
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
   * @throws OutboxStoreException when the database refuses
   */
  public void createSchema() {
    StringBuilder sb = new StringBuilder();
    for (String line : schemaDdl().split("\n")) {
      if (!line.trim().startsWith("--")) sb.append(line).append('\n');
    }
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      c.setAutoCommit(true);
      for (String s : sb.toString().split(";")) {
        if (!s.isBlank()) st.execute(s.trim());
      }
    } catch (SQLException e) {
      throw new OutboxStoreException("creating table " + table + " failed", e);
    }
  }

  /**
   * Stores {@code entry} on a connection of its own (auto-commit), replacing the row of the same key.
   * To park in the transaction of a business record, use {@link #park(Connection, OutboxEntry)}.
   *
   * @throws OutboxStoreException when the statement fails
   * @throws IllegalArgumentException when the reason is longer than 200 characters
   */
  @Override
  public void park(OutboxEntry entry) {
    check(entry);
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      upsert(c, entry);
    } catch (SQLException e) {
      throw failed("park", entry.token().idempotencyKey(), e);
    }
  }

  /**
   * Stores {@code entry} on the caller's connection, inside the caller's transaction: nothing is
   * committed here (nor rolled back). Commit after this returns, with the business record; a rollback
   * parks nothing.
   *
   * @param connection the caller's connection, on the database of this outbox's table
   * @param entry the entry
   * @throws OutboxStoreException when the statement fails
   * @throws IllegalArgumentException when the reason is longer than 200 characters
   */
  public void park(Connection connection, OutboxEntry entry) {
    Objects.requireNonNull(connection, "connection");
    check(entry);
    try {
      upsert(connection, entry);
    } catch (SQLException e) {
      throw failed("park", entry.token().idempotencyKey(), e);
    }
  }

  private static void check(OutboxEntry entry) {
    Objects.requireNonNull(entry, "entry");
    if (entry.reason().length() > MAX_REASON_LENGTH) {
      throw new IllegalArgumentException(
          "reason: length " + entry.reason().length() + " is over " + MAX_REASON_LENGTH);
    }
  }

  private void upsert(Connection c, OutboxEntry e) throws SQLException {
    Dialect d = dialect(c);
    if (d == Dialect.POSTGRES) {
      executeInsert(c, insert + " ON CONFLICT (idempotency_key) DO UPDATE SET token = EXCLUDED.token,"
          + " reason = EXCLUDED.reason, parked_at = EXCLUDED.parked_at, tries = EXCLUDED.tries,"
          + " next_due_at = EXCLUDED.next_due_at, lease_token = NULL", e);
      return;
    }
    String merge = "MERGE INTO " + table + " " + COLUMNS + " KEY (idempotency_key)"
        + " VALUES (?, ?, ?, ?, ?, ?, NULL)";
    for (int round = 1; ; round++) {
      try {
        if (d == Dialect.H2) {
          executeInsert(c, merge, e);
        } else if (executeUpdate(c, e) == 0) {
          executeInsert(c, insert, e);
        }
        return;
      } catch (SQLException ex) {
        // A concurrent park of the same key inserted first: ours now replaces it.
        if (round >= MAX_UPSERT_ROUNDS || !isUniqueViolation(ex)) throw ex;
      }
    }
  }

  private static void executeInsert(Connection c, String sql, OutboxEntry e) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, e.token().idempotencyKey());
      ps.setString(2, e.token().toText());
      ps.setString(3, e.reason());
      ps.setLong(4, e.parkedAt().toEpochMilli());
      ps.setInt(5, e.tries());
      ps.setLong(6, e.dueAt().toEpochMilli());
      ps.executeUpdate();
    }
  }

  private int executeUpdate(Connection c, OutboxEntry e) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(update)) {
      ps.setString(1, e.token().toText());
      ps.setString(2, e.reason());
      ps.setLong(3, e.parkedAt().toEpochMilli());
      ps.setInt(4, e.tries());
      ps.setLong(5, e.dueAt().toEpochMilli());
      ps.setString(6, e.token().idempotencyKey());
      return ps.executeUpdate();
    }
  }

  /**
   * Up to {@code max} entries whose next-due time is at or before {@code now}, earliest due first
   * (ties by key). Reads committed rows only.
   *
   * @param now the time, compared at millisecond precision
   * @param max at most this many, at least 0
   * @return the entries, a new list
   * @throws OutboxStoreException when the query fails, or a row holds no resume token
   * @throws IllegalArgumentException when {@code max} is negative
   */
  @Override
  public List<OutboxEntry> due(Instant now, int max) {
    Objects.requireNonNull(now, "now");
    if (max < 0) throw new IllegalArgumentException("max: " + max + " is negative");
    List<OutboxEntry> out = new ArrayList<>();
    if (max == 0) return out;
    String sql = "SELECT " + ENTRY_COLUMNS + " FROM " + table
        + " WHERE next_due_at <= ? ORDER BY next_due_at, idempotency_key";
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      c.setAutoCommit(true);
      ps.setMaxRows(max);
      ps.setLong(1, now.toEpochMilli());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next() && out.size() < max) {
          out.add(entry(rs));
        }
      }
    } catch (SQLException e) {
      throw failed("due", null, e);
    }
    return out;
  }

  /**
   * {@link #due(Instant, int)} at this outbox's clock's now.
   *
   * @param max at most this many, at least 0
   * @return the entries, a new list
   * @throws OutboxStoreException when the query fails
   */
  public List<OutboxEntry> dueNow(int max) {
    return due(clock.instant(), max);
  }

  /**
   * Claims up to {@code max} due rows, earliest due first, for {@code lease}: each claimed row gets a
   * new fencing token (one UUID per call) in {@code lease_token} and its {@code next_due_at} moves to
   * {@code now + lease}, so no other claim (in this or another process) returns it before the lease
   * runs out, and then the next claim takes it over with a new token. On PostgreSQL one statement
   * ({@code UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED)}): concurrent claimers skip each other's
   * rows instead of waiting. On H2 and other databases (in H2 2.3 a limited
   * {@code SELECT … FOR UPDATE SKIP LOCKED} locks every matching row, not only those it returns, so a
   * second claimer would get nothing) each candidate is taken by a conditional
   * {@code UPDATE} on its due time, tries and token: of two claimers racing for a row one wins, the
   * other moves on to the next candidate.
   *
   * @param now the time, compared at millisecond precision; the processes sharing a table should
   *     agree on the time within a small part of the lease
   * @param max at most this many, at least 0
   * @param lease more than 0 and at most 24 h
   * @return the claims, earliest due first
   * @throws OutboxStoreException when a statement fails, or a row holds no resume token
   * @throws IllegalArgumentException when {@code max} or {@code lease} is out of range
   */
  @Override
  public List<OutboxClaim> claim(Instant now, int max, Duration lease) {
    Objects.requireNonNull(now, "now");
    Outbox.checkLease(lease);
    if (max < 0) throw new IllegalArgumentException("max: " + max + " is negative");
    List<OutboxClaim> out = new ArrayList<>();
    if (max == 0) return out;
    String token = UUID.randomUUID().toString();
    Instant until = now.plus(lease).truncatedTo(ChronoUnit.MILLIS);
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      if (dialect(c) == Dialect.POSTGRES) {
        claimSkipLocked(c, now, max, token, until, out);
      } else {
        claimConditionally(c, now, max, token, until, out);
      }
    } catch (SQLException e) {
      throw failed("claim", null, e);
    }
    out.sort(Comparator.comparing((OutboxClaim cl) -> cl.entry().dueAt())
        .thenComparing(OutboxClaim::idempotencyKey));
    return out;
  }

  private void claimSkipLocked(Connection c, Instant now, int max, String token, Instant until,
      List<OutboxClaim> out) throws SQLException {
    String sql = "UPDATE " + table + " AS o SET next_due_at = ?, lease_token = ? FROM (SELECT"
        + " idempotency_key, next_due_at AS was_due FROM " + table + " WHERE next_due_at <= ?"
        + " ORDER BY next_due_at, idempotency_key LIMIT ? FOR UPDATE SKIP LOCKED) AS p"
        + " WHERE o.idempotency_key = p.idempotency_key RETURNING o.idempotency_key, o.token,"
        + " o.reason, o.parked_at, o.tries, p.was_due";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, until.toEpochMilli());
      ps.setString(2, token);
      ps.setLong(3, now.toEpochMilli());
      ps.setInt(4, max);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new OutboxClaim(entry(rs), token, until));
        }
      }
    }
  }

  private void claimConditionally(Connection c, Instant now, int max, String token, Instant until,
      List<OutboxClaim> out) throws SQLException {
    // Twice the candidates: rows another claimer wins are skipped without a second query.
    String select = "SELECT " + ENTRY_COLUMNS + ", lease_token FROM " + table
        + " WHERE next_due_at <= ? ORDER BY next_due_at, idempotency_key";
    String take = "UPDATE " + table + " SET next_due_at = ?, lease_token = ? WHERE idempotency_key = ?"
        + " AND next_due_at = ? AND tries = ? AND ";
    List<OutboxEntry> candidates = new ArrayList<>();
    List<String> leases = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(select)) {
      ps.setMaxRows((int) Math.min(Integer.MAX_VALUE, 2L * max));
      ps.setLong(1, now.toEpochMilli());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          candidates.add(entry(rs));
          leases.add(rs.getString(7));
        }
      }
    }
    try (PreparedStatement unleased = c.prepareStatement(take + "lease_token IS NULL");
        PreparedStatement leased = c.prepareStatement(take + "lease_token = ?")) {
      for (int i = 0; i < candidates.size() && out.size() < max; i++) {
        OutboxEntry e = candidates.get(i);
        PreparedStatement ps = leases.get(i) == null ? unleased : leased;
        ps.setLong(1, until.toEpochMilli());
        ps.setString(2, token);
        ps.setString(3, e.token().idempotencyKey());
        ps.setLong(4, e.dueAt().toEpochMilli());
        ps.setInt(5, e.tries());
        if (leases.get(i) != null) ps.setString(6, leases.get(i));
        if (ps.executeUpdate() == 1) {
          out.add(new OutboxClaim(e, token, until));
        }
      }
    }
  }

  /**
   * Moves the lease of {@code claim} to {@code now + lease}, if its token is still the row's.
   *
   * @throws OutboxStoreException when the statement fails
   */
  @Override
  public boolean renew(OutboxClaim claim, Instant now, Duration lease) {
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(now, "now");
    Outbox.checkLease(lease);
    String sql = "UPDATE " + table + " SET next_due_at = ? WHERE idempotency_key = ?"
        + " AND lease_token = ?";
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      c.setAutoCommit(true);
      ps.setLong(1, now.plus(lease).toEpochMilli());
      ps.setString(2, claim.idempotencyKey());
      ps.setString(3, claim.token());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("renew", claim.idempotencyKey(), e);
    }
  }

  /**
   * Deletes the claimed row on a connection of its own (auto-commit), if its token is still the
   * row's. To settle it in the transaction of the business record, use
   * {@link #complete(Connection, OutboxClaim)} from the resumer's result handler.
   *
   * @throws OutboxStoreException when the statement fails
   */
  @Override
  public boolean complete(OutboxClaim claim) {
    Objects.requireNonNull(claim, "claim");
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      return delete(c, claim);
    } catch (SQLException e) {
      throw failed("complete", claim.idempotencyKey(), e);
    }
  }

  /**
   * Deletes the claimed row on the caller's connection, inside the caller's transaction, if its token
   * is still the row's: commit it with the business record, and the record and the intent's removal
   * are stored together or not at all (exactly-once handover). Nothing is committed or rolled back
   * here. When this returns {@code false} another resumer holds the intent (or it is gone): roll the
   * business change back. On PostgreSQL the deleted row stays locked until the commit, so no claim
   * can take it meanwhile.
   *
   * @param connection the caller's connection, on the database of this outbox's table
   * @param claim the claim the result handler was given
   * @return whether the row was deleted (the claim was current)
   * @throws OutboxStoreException when the statement fails
   */
  public boolean complete(Connection connection, OutboxClaim claim) {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(claim, "claim");
    try {
      return delete(connection, claim);
    } catch (SQLException e) {
      throw failed("complete", claim.idempotencyKey(), e);
    }
  }

  private boolean delete(Connection c, OutboxClaim claim) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "DELETE FROM " + table + " WHERE idempotency_key = ? AND lease_token = ?")) {
      ps.setString(1, claim.idempotencyKey());
      ps.setString(2, claim.token());
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * Replaces the claimed row with {@code next} and clears its lease, if its token is still the row's.
   *
   * @throws OutboxStoreException when the statement fails
   * @throws IllegalArgumentException when {@code next} has another key, or a reason over 200
   *     characters
   */
  @Override
  public boolean reschedule(OutboxClaim claim, OutboxEntry next) {
    Objects.requireNonNull(claim, "claim");
    check(next);
    if (!next.token().idempotencyKey().equals(claim.idempotencyKey())) {
      throw new IllegalArgumentException("next: key " + next.token().idempotencyKey()
          + " is not the claimed key " + claim.idempotencyKey());
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(update + " AND lease_token = ?")) {
      c.setAutoCommit(true);
      ps.setString(1, next.token().toText());
      ps.setString(2, next.reason());
      ps.setLong(3, next.parkedAt().toEpochMilli());
      ps.setInt(4, next.tries());
      ps.setLong(5, next.dueAt().toEpochMilli());
      ps.setString(6, next.token().idempotencyKey());
      ps.setString(7, claim.token());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw failed("reschedule", claim.idempotencyKey(), e);
    }
  }

  /**
   * {@inheritDoc} The smallest {@code parked_at} of the table (one indexed query per call: a gauge
   * reads it at each scrape).
   *
   * @throws OutboxStoreException when the query fails
   */
  @Override
  public Optional<Instant> oldestParkedAt() {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT MIN(parked_at) FROM " + table)) {
      rs.next();
      long min = rs.getLong(1);
      return rs.wasNull() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(min));
    } catch (SQLException e) {
      throw failed("oldestParkedAt", null, e);
    }
  }

  private OutboxEntry entry(ResultSet rs) throws SQLException {
    String key = rs.getString(1);
    ResumeToken token;
    try {
      token = ResumeToken.parse(rs.getString(2));
    } catch (IllegalArgumentException e) {
      throw new OutboxStoreException("due: the row of key " + key + " in " + table
          + " holds no resume token (edited by hand?); fix or delete it", e);
    }
    return new OutboxEntry(token, rs.getString(3), Instant.ofEpochMilli(rs.getLong(4)), rs.getInt(5),
        Instant.ofEpochMilli(rs.getLong(6)));
  }

  /**
   * Deletes the row of {@code idempotencyKey}, if any, on a connection of its own (auto-commit).
   *
   * @throws OutboxStoreException when the statement fails
   */
  @Override
  public void remove(String idempotencyKey) {
    Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "DELETE FROM " + table + " WHERE idempotency_key = ?")) {
      c.setAutoCommit(true);
      ps.setString(1, idempotencyKey);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw failed("remove", idempotencyKey, e);
    }
  }

  /**
   * {@inheritDoc} Counts the committed rows.
   *
   * @throws OutboxStoreException when the query fails
   */
  @Override
  public int size() {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
      rs.next();
      return (int) Math.min(Integer.MAX_VALUE, rs.getLong(1));
    } catch (SQLException e) {
      throw failed("size", null, e);
    }
  }

  /** {@return the table name} */
  public String table() {
    return table;
  }

  private OutboxStoreException failed(String operation, String key, SQLException e) {
    return new OutboxStoreException(operation + (key == null ? "" : " of key " + key) + " failed on "
        + table + ": " + e.getMessage(), e);
  }

  private Dialect dialect(Connection c) throws SQLException {
    Dialect d = dialect;
    if (d == null) {
      String product = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
      d = product.contains("postgresql") ? Dialect.POSTGRES
          : product.equals("h2") ? Dialect.H2 : Dialect.OTHER;
      dialect = d;
    }
    return d;
  }

  private static boolean isUniqueViolation(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s
          && ("23505".equals(s.getSQLState()) || "23000".equals(s.getSQLState()))) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "JdbcOutbox{table=" + table + "}";
  }

  /** Builds a {@link JdbcOutbox}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private DataSource dataSource;
    private String table = DEFAULT_TABLE;
    private InstantSource clock = Clock.systemUTC();

    private Builder() {}

    /**
     * Required: where the table lives. Entries parked with {@link #park(Connection, OutboxEntry)} must
     * be on a connection to the same database.
     *
     * @param dataSource the data source
     * @return this builder
     */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      return this;
    }

    /**
     * The table, optionally schema-qualified: checked as an SQL identifier at {@link #build()}, since
     * it is written into the statements. Default {@code resilient_http_outbox}.
     *
     * @param table the table name
     * @return this builder
     */
    public Builder table(String table) {
      this.table = Objects.requireNonNull(table, "table");
      return this;
    }

    /**
     * The clock of {@link #dueNow(int)}. Default {@link Clock#systemUTC()}.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the outbox; does not touch the database.
     *
     * @return the outbox
     * @throws IllegalStateException when no data source was set
     * @throws IllegalArgumentException naming the field and value when the table name is invalid
     */
    public JdbcOutbox build() {
      if (dataSource == null) throw new IllegalStateException("dataSource: required");
      if (!TABLE.matcher(table).matches()) {
        throw new IllegalArgumentException("table: '" + table
            + "' is not [schema.]name of letters, digits and _ (up to 63 each)");
      }
      return new JdbcOutbox(this);
    }
  }
}
