package io.github.resilienthttp.outbox.jdbc;

import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;
import io.github.resilienthttp.callbacks.TestDatabases;

/** The JDBC outbox contract on embedded H2: always runs. */
class H2JdbcOutboxTest extends JdbcOutboxContract {
  @Override
  PooledDataSource database() {
    return TestDatabases.h2();
  }
}
