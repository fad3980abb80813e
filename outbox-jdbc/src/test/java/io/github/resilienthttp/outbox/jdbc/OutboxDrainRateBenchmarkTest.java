package io.github.resilienthttp.outbox.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.callbacks.TestDatabases;
import io.github.resilienthttp.callbacks.TestDatabases.PooledDataSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The drain rate (intents/s) of 1, 2 and 4 resumer instances, each with its own connection, on H2
 * and (when {@code RESILIENT_HTTP_PG_URL} is set) PostgreSQL, without faults: a measurement for
 * BENCHMARKS.md, not a check of speed. Runs only with {@code -Dresilient.http.drill.bench=true};
 * {@code resilient.http.drill.intents} sets the count (default 10,000). Writes
 * {@code target/outbox-drain-rate.txt}.
 */
@EnabledIfSystemProperty(named = "resilient.http.drill.bench", matches = "true")
class OutboxDrainRateBenchmarkTest {

  @Test
  void drainRateOfOneTwoAndFourInstances() throws Exception {
    StringBuilder report = new StringBuilder();
    measure("H2", TestDatabases::h2, report);
    String pg = System.getenv(TestDatabases.PG_URL_VARIABLE);
    if (pg != null && !pg.isBlank()) {
      measure("PostgreSQL", TestDatabases::postgres, report);
    }
    System.out.print(report);
    Files.writeString(Path.of("target", "outbox-drain-rate.txt"), report, StandardCharsets.UTF_8);
  }

  private static void measure(String name, Supplier<PooledDataSource> database,
      StringBuilder report) throws Exception {
    int intents = OutboxFleetDrillContract.INTENTS;
    for (int n : new int[] {1, 2, 4}) {
      try (OutboxFleetDrill drill = new OutboxFleetDrill(database.get())) {
        drill.park(intents);
        for (int i = 0; i < n; i++) drill.add(Duration.ofSeconds(60), 100, OutboxFleetDrill.NOTHING);
        long nanos = drill.run(Duration.ofMinutes(10));
        assertThat(drill.rowsLeft()).isZero();
        assertThat(drill.resultsPerKey()).hasSize(intents);
        double seconds = nanos / 1e9;
        report.append(String.format("%s instances=%d intents=%d seconds=%.2f rate=%.0f/s%n", name, n,
            intents, seconds, intents / seconds));
      }
    }
  }
}
