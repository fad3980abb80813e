/**
 * A durable {@link io.github.resilienthttp.Outbox} in a SQL table:
 * {@link io.github.resilienthttp.outbox.jdbc.JdbcOutbox}. Depends on {@code java.sql} and the client.
 */
module io.github.resilienthttp.outbox.jdbc {
  requires transitive io.github.resilienthttp;
  requires transitive java.sql;

  exports io.github.resilienthttp.outbox.jdbc;
}
