package io.github.resilienthttp.server;

import io.github.resilienthttp.callbacks.TestDatabases;

class H2JdbcGuardTest extends JdbcGuardTest {
  @Override
  TestDatabases.PooledDataSource dataSource() {
    return TestDatabases.h2();
  }
}
