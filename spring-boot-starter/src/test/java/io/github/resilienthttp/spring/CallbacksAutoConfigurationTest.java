package io.github.resilienthttp.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.callbacks.CallbackResponse;
import io.github.resilienthttp.callbacks.CallbackVerifier;
import io.github.resilienthttp.callbacks.JdbcProcessingStore;
import io.github.resilienthttp.callbacks.StandardWebhooksScheme;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

class CallbacksAutoConfigurationTest {
  static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(
      "a-32-byte-secret-for-the-tests!!".getBytes(StandardCharsets.UTF_8));
  private static final AtomicInteger DB = new AtomicInteger();

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
          DataSourceTransactionManagerAutoConfiguration.class, ResilientHttpAutoConfiguration.class,
          ResilientHttpCallbacksAutoConfiguration.class));

  private ApplicationContextRunner withDatabase() {
    return runner.withPropertyValues(
        "spring.datasource.url=jdbc:h2:mem:cb" + DB.incrementAndGet() + ";DB_CLOSE_DELAY=-1",
        "resilient-http.callbacks.secrets=" + SECRET,
        "resilient-http.callbacks.create-schema=true");
  }

  static Map<String, List<String>> signed(String secret, String eventId, String body) {
    return StandardWebhooksScheme.of(secret).sign(eventId, Instant.now(), body.getBytes(StandardCharsets.UTF_8))
        .entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> List.of(e.getValue())));
  }

  @Test
  void noReceiverWithoutSecretsOrWithoutADataSource() {
    runner.withPropertyValues("spring.datasource.url=jdbc:h2:mem:none;DB_CLOSE_DELAY=-1").run(context ->
        assertThat(context).hasNotFailed().doesNotHaveBean(TransactionalCallbackReceiver.class));
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ResilientHttpAutoConfiguration.class,
            ResilientHttpCallbacksAutoConfiguration.class))
        .withPropertyValues("resilient-http.callbacks.secrets=" + SECRET)
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TransactionalCallbackReceiver.class));
  }

  @Test
  void theRecordCommitsWithTheHandlersRowAndADuplicateRunsNothing() {
    withDatabase().run(context -> {
      TransactionalCallbackReceiver receiver = context.getBean(TransactionalCallbackReceiver.class);
      JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
      jdbc.execute("CREATE TABLE charges (event_id VARCHAR(255) PRIMARY KEY, amount INT)");
      AtomicInteger runs = new AtomicInteger();
      String body = "{\"amount\":42}";
      Map<String, List<String>> headers = signed(SECRET, "evt_1", body);

      CallbackResponse first = receiver.receive(headers, body.getBytes(StandardCharsets.UTF_8), cb -> {
        runs.incrementAndGet();
        jdbc.update("INSERT INTO charges VALUES (?, 42)", cb.eventId().orElseThrow());
        // inside the transaction: the row is visible on its connection, the record not yet done
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM charges", Integer.class)).isEqualTo(1);
        return "charged";
      });
      assertThat(first.outcome()).isEqualTo(CallbackResponse.Outcome.PROCESSED);
      assertThat(first.status()).isEqualTo(200);

      CallbackResponse again = receiver.receive(headers, body.getBytes(StandardCharsets.UTF_8), cb -> {
        runs.incrementAndGet();
        return "again";
      });
      assertThat(again.outcome()).isEqualTo(CallbackResponse.Outcome.DUPLICATE);
      assertThat(runs).hasValue(1);
      assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM charges", Integer.class)).isEqualTo(1);
      assertThat(jdbc.queryForObject("SELECT state || ':' || result FROM callback_processing"
          + " WHERE event_id = 'evt_1'", String.class)).isEqualTo("DONE:charged");
    });
  }

  @Test
  void aFailingHandlerRollsBackItsRowAndReleasesTheRecordForTheRedelivery() {
    withDatabase().run(context -> {
      TransactionalCallbackReceiver receiver = context.getBean(TransactionalCallbackReceiver.class);
      JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
      jdbc.execute("CREATE TABLE charges (event_id VARCHAR(255) PRIMARY KEY, amount INT)");
      String body = "{}";
      CallbackResponse failed = receiver.receive(signed(SECRET, "evt_2", body), body.getBytes(StandardCharsets.UTF_8), cb -> {
        jdbc.update("INSERT INTO charges VALUES ('evt_2', 1)");
        throw new IllegalStateException("downstream said no");
      });
      assertThat(failed.status()).isEqualTo(500);
      assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM charges", Integer.class)).isZero();

      CallbackResponse redelivered = receiver.receive(signed(SECRET, "evt_2", body), body.getBytes(StandardCharsets.UTF_8), cb -> {
        jdbc.update("INSERT INTO charges VALUES ('evt_2', 1)");
        return null;
      });
      assertThat(redelivered.outcome()).isEqualTo(CallbackResponse.Outcome.PROCESSED);
      assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM charges", Integer.class)).isEqualTo(1);
    });
  }

  @Test
  void aForgedDeliveryIs401AndRecordsNothing() {
    withDatabase().run(context -> {
      TransactionalCallbackReceiver receiver = context.getBean(TransactionalCallbackReceiver.class);
      String other = "whsec_" + Base64.getEncoder().encodeToString("another-secret-of-32-bytes-long!".getBytes(StandardCharsets.UTF_8));
      CallbackResponse r = receiver.receive(signed(other, "evt_3", "{}"), "{}".getBytes(StandardCharsets.UTF_8),
          cb -> "never");
      assertThat(r.status()).isEqualTo(401);
      assertThat(new JdbcTemplate(context.getBean(DataSource.class))
          .queryForObject("SELECT COUNT(*) FROM callback_processing", Integer.class)).isZero();
    });
  }

  @Test
  void theApplicationsOwnBeansWinAndInvalidValuesNameTheProperty() {
    CallbackVerifier mine = CallbackVerifier.builder().scheme(StandardWebhooksScheme.of(SECRET)).build();
    withDatabase().withBean(CallbackVerifier.class, () -> mine).run(context -> {
      assertThat(context.getBean(CallbackVerifier.class)).isSameAs(mine);
      assertThat(context.getBean(JdbcProcessingStore.class).table()).isEqualTo("callback_processing");
    });
    withDatabase().withPropertyValues("resilient-http.callbacks.tolerance=-1s").run(context ->
        assertThat(context.getStartupFailure()).rootCause()
            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
            .hasMessageContaining("resilient-http.callbacks.tolerance"));
    withDatabase().withPropertyValues("resilient-http.callbacks.secrets=not-a-whsec-secret").run(context ->
        assertThat(context.getStartupFailure()).rootCause()
            .hasMessageContaining("resilient-http.callbacks.secrets")
            .hasMessageNotContaining("not-a-whsec-secret"));
    withDatabase().withPropertyValues("resilient-http.callbacks.scheme=stripe").run(context ->
        assertThat(context.getStartupFailure()).rootCause()
            .hasMessageContaining("resilient-http.callbacks.scheme"));
  }
}
