package io.github.resilienthttp.server;

import io.github.resilienthttp.callbacks.TestDatabases;

/** Needs RESILIENT_HTTP_PG_URL; skipped without it, failing under CI=true (TestDatabases). */
class PostgresJdbcGuardTest extends JdbcGuardTest {
  @Override
  TestDatabases.PooledDataSource dataSource() {
    return TestDatabases.postgres();
  }
}
