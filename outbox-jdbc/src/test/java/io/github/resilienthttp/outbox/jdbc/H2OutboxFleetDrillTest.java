package io.github.resilienthttp.outbox.jdbc;

import io.github.resilienthttp.callbacks.TestDatabases;
import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;

/** The fleet drill on embedded H2: always runs. */
class H2OutboxFleetDrillTest extends OutboxFleetDrillContract {
  @Override
  PooledDataSource database() {
    return TestDatabases.h2();
  }
}
