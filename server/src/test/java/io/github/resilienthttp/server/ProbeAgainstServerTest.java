package io.github.resilienthttp.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.callbacks.TestDatabases;
import io.github.resilienthttp.server.jdk.IdempotentHttpHandler;
import io.github.resilienthttp.testkit.probe.AfterRetention;
import io.github.resilienthttp.testkit.probe.CheckResult;
import io.github.resilienthttp.testkit.probe.EffectCounter;
import io.github.resilienthttp.testkit.probe.IdempotencyProbe;
import io.github.resilienthttp.testkit.probe.ProbeReport;
import io.github.resilienthttp.testkit.probe.Verdict;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Test;

/** The idempotency probe against this module (JDBC, transactional): every check passes. */
class ProbeAgainstServerTest {

  @Test
  void theModulePassesEveryCheckOfTheProbe() throws Exception {
    MutableClock clock = new MutableClock();
    java.util.concurrent.atomic.AtomicInteger ids = new java.util.concurrent.atomic.AtomicInteger();
    TestDatabases.PooledDataSource ds = TestDatabases.h2();
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().dataSource(ds).clock(clock).build();
    store.createSchema();
    String charges = TestDatabases.uniqueName("charges");
    TestDatabases.execute(ds, "CREATE TABLE " + charges + " (idem_key VARCHAR(255))");
    IdempotencyGuard guard = IdempotencyGuard.builder().store(store).clock(clock).keyRequired(true)
        .retention(Duration.ofHours(1)).build();
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    ExecutorService threads = Executors.newFixedThreadPool(16);
    server.setExecutor(threads);
    server.createContext("/payments", IdempotentHttpHandler.transactional(guard, (c, r) -> {
      GuardContractTest.sleep(50); // duplicates of the burst meet the key in progress
      String key = r.header("Idempotency-Key").orElseThrow();
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + charges + " VALUES (?)")) {
        ps.setString(1, key);
        ps.executeUpdate();
      }
      return IdempotentResponse.of(201, "application/json", "{\"id\":\"pay_" + ids.incrementAndGet() + "\"}");
    }));
    server.start();
    // The probe's wait for the retention moves the guard's clock instead of sleeping an hour.
    TimeSource probeTime = new TimeSource() {
      @Override public long nanoTime() { return System.nanoTime(); }
      @Override public Instant now() { return clock.instant(); }
      @Override public void sleep(Duration d) throws InterruptedException {
        if (d.compareTo(Duration.ofSeconds(1)) > 0) clock.advance(d); else Thread.sleep(d.toMillis());
      }
    };
    try {
      ProbeReport report = IdempotencyProbe.builder(HttpUrl.get("http://127.0.0.1:"
              + server.getAddress().getPort() + "/payments"))
          .body("{\"amount\":1000}").keyRequired(true)
          .retention(Duration.ofHours(1).plusSeconds(1), AfterRetention.EXECUTED_AGAIN)
          .inProgressRetries(5, Duration.ofMillis(100)).timeSource(probeTime)
          .effectCounter(new EffectCounter() {
            @Override
            public OptionalLong count() {
              return OptionalLong.of(TestDatabases.count(ds, "SELECT COUNT(*) FROM " + charges));
            }

            @Override
            public String toString() {
              return "the charges table";
            }
          })
          .build().run();

      assertThat(report.results()).as(report.toTable()).extracting(CheckResult::verdict)
          .containsOnly(Verdict.PASS).hasSize(6);
      assertThat(report.toTable()).contains("SDK reads the retry as: replay")
          .contains("SDK reads the other body's answer as: mismatch").contains("×in progress");
    } finally {
      server.stop(0);
      threads.shutdownNow();
      ds.close();
    }
  }
}
