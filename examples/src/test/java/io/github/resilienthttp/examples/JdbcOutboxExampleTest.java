package io.github.resilienthttp.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Runs the JDBC outbox example in-process on H2 and, when {@code RESILIENT_HTTP_PG_URL} is set, on
 * PostgreSQL: every order paid once, the parked ones by the resumers, nothing left.
 */
class JdbcOutboxExampleTest {

  @Test
  void onH2EveryOrderIsPaidOnceAndTheOutboxIsDrained() throws Exception {
    check(JdbcOutboxExample.H2_URL);
  }

  @Test
  void onPostgresqlToo() throws Exception {
    String url = System.getenv("RESILIENT_HTTP_PG_URL");
    assumeTrue(url != null && !url.isBlank(), "RESILIENT_HTTP_PG_URL not set");
    check(url);
  }

  private static void check(String url) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    JdbcOutboxExample.Result r = JdbcOutboxExample.run(url, 20, 6,
        new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertThat(r.parked()).isEqualTo(6);
    assertThat(r.handovers()).isEqualTo(6);
    assertThat(r.paid()).isEqualTo(20);
    assertThat(r.payments()).isEqualTo(20);
    assertThat(r.left()).isZero();
    assertThat(r.ok()).isTrue();
    assertThat(bytes.toString(StandardCharsets.UTF_8))
        .contains("placed 20 orders: 14 paid at once, 6 parked (outcome unknown); outbox: 6")
        .contains("orders paid: 20 of 20; payments at the server: 20; left in the outbox: 0");
  }
}
