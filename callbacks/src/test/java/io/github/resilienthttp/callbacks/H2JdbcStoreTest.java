package io.github.resilienthttp.callbacks;

import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;

/** The JDBC store and its scenarios on embedded H2: always runs. */
class H2JdbcStoreTest extends JdbcStoreScenarios {
  @Override
  PooledDataSource database() {
    return TestDatabases.h2();
  }
}
