package io.github.resilienthttp.callbacks;

import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;

/**
 * The JDBC store and its scenarios on a real PostgreSQL server: set {@code RESILIENT_HTTP_PG_URL} to a
 * JDBC URL with user and password ({@code .ci/run} starts one). Skipped without it, except under
 * {@code CI=true}, where a missing server fails the build.
 */
class PostgresJdbcStoreTest extends JdbcStoreScenarios {
  @Override
  PooledDataSource database() {
    return TestDatabases.postgres();
  }
}
