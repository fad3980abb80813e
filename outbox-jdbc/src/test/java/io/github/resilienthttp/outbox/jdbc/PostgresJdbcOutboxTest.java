package io.github.resilienthttp.outbox.jdbc;

import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;
import io.github.resilienthttp.callbacks.TestDatabases;

/**
 * The JDBC outbox contract on a real PostgreSQL server: set {@code RESILIENT_HTTP_PG_URL} to a JDBC URL
 * with user and password ({@code .ci/run} starts one). Skipped without it, except under
 * {@code CI=true}, where a missing server fails the build.
 */
class PostgresJdbcOutboxTest extends JdbcOutboxContract {
  @Override
  PooledDataSource database() {
    return TestDatabases.postgres();
  }
}
