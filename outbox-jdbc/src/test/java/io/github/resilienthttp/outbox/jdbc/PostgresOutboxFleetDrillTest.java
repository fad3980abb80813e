package io.github.resilienthttp.outbox.jdbc;

import io.github.resilienthttp.callbacks.TestDatabases;
import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;

/**
 * The fleet drill on PostgreSQL ({@code RESILIENT_HTTP_PG_URL}; skipped without it, except under
 * {@code CI=true}).
 */
class PostgresOutboxFleetDrillTest extends OutboxFleetDrillContract {
  @Override
  PooledDataSource database() {
    return TestDatabases.postgres();
  }
}
