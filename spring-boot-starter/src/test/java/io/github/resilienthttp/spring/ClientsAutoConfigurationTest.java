package io.github.resilienthttp.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResponseClassifier;
import java.time.Duration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class ClientsAutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(ResilientHttpAutoConfiguration.class));

  @Test
  void eachNamedClientIsABeanQualifiedByItsNameWithItsProperties() {
    runner.withPropertyValues(
            "resilient-http.clients.payments.max-attempts=5",
            "resilient-http.clients.payments.deadline=7s",
            "resilient-http.clients.payments.max-retry-after=3s",
            "resilient-http.clients.payments.attempt-timeout=2s",
            "resilient-http.clients.payments.idempotency.header-name=X-Request-Key",
            "resilient-http.clients.payments.idempotency.send=ALWAYS",
            "resilient-http.clients.payments.budget.type=none",
            "resilient-http.clients.payments.bulkhead.max-concurrent-calls=4",
            "resilient-http.clients.payments.okhttp.connect-timeout=1500ms",
            "resilient-http.clients.payments.okhttp.read-timeout=3s",
            "resilient-http.clients.payments.replay-header=X-Replayed",
            "resilient-http.clients.search.hedging.delay=50ms",
            "resilient-http.clients.search.circuit-breaker.enabled=false")
        .withUserConfiguration(TwoInjectionPoints.class)
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBeansOfType(ResilientHttpClient.class)).hasSize(2);
          TwoInjectionPoints users = context.getBean(TwoInjectionPoints.class);
          ResilientHttpClient payments = users.payments;
          assertThat(payments).isSameAs(context.getBean(ResilientHttpClients.class).client("payments"));
          assertThat(payments.retryPolicy().maxAttempts()).isEqualTo(5);
          assertThat(payments.retryPolicy().deadline()).isEqualTo(Duration.ofSeconds(7));
          assertThat(payments.retryPolicy().maxRetryAfter()).isEqualTo(Duration.ofSeconds(3));
          assertThat(payments.retryPolicy().attemptTimeout()).contains(Duration.ofSeconds(2));
          assertThat(payments.idempotencyKeyPolicy().headerName()).isEqualTo("X-Request-Key");
          assertThat(payments.idempotencyKeyPolicy().send()).isEqualTo(IdempotencyKeyPolicy.Send.ALWAYS);
          assertThat(payments.retryBudget().availableTokens()).isZero();
          assertThat(payments.bulkhead()).hasValueSatisfying(
              b -> assertThat(b.getBulkheadConfig().getMaxConcurrentCalls()).isEqualTo(4));
          assertThat(payments.wrappedClient().connectTimeoutMillis()).isEqualTo(1500);
          assertThat(payments.wrappedClient().readTimeoutMillis()).isEqualTo(3000);
          assertThat(payments.replayHeader()).isEqualTo("X-Replayed");
          assertThat(payments.circuitBreakerFor(okhttp3.HttpUrl.get("https://pay.example/"))).isPresent();

          ResilientHttpClient search = users.search;
          assertThat(search.retryPolicy().maxAttempts()).isEqualTo(3); // the SDK's default
          assertThat(search.circuitBreakerFor(okhttp3.HttpUrl.get("https://search.example/"))).isEmpty();
          assertThat(search.bulkhead()).isEmpty();
        });
  }

  @Test
  void aRetriedPostCarriesOneIdempotencyKeyOnEveryAttempt() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().code(201).body("ok").build());
      server.start();
      runner.withPropertyValues("resilient-http.clients.payments.backoff.base=1ms",
              "resilient-http.clients.payments.backoff.cap=1ms")
          .run(context -> {
            ResilientHttpClient client = context.getBean("paymentsResilientHttpClient", ResilientHttpClient.class);
            Request post = new Request.Builder().url(server.url("/charges"))
                .post(RequestBody.create("{}", MediaType.get("application/json"))).build();
            try (Response r = client.operation(post).execute()) {
              assertThat(r.code()).isEqualTo(201);
            }
            RecordedRequest first = server.takeRequest();
            RecordedRequest second = server.takeRequest();
            assertThat(first.getHeaders().get("Idempotency-Key")).isNotBlank()
                .isEqualTo(second.getHeaders().get("Idempotency-Key"));
            assertThat(server.getRequestCount()).isEqualTo(2);
          });
    }
  }

  @Test
  void anInvalidValueFailsTheStartupNamingTheProperty() {
    runner.withPropertyValues("resilient-http.clients.payments.max-attempts=0").run(context -> {
      assertThat(context).hasFailed();
      assertThat(context.getStartupFailure()).rootCause()
          .isInstanceOf(InvalidConfigurationPropertyValueException.class)
          .hasMessageContaining("resilient-http.clients.payments.max-attempts")
          .hasMessageContaining("'0'");
    });
    runner.withPropertyValues("resilient-http.clients.payments.backoff.base=2s",
        "resilient-http.clients.payments.backoff.cap=1s").run(context ->
        assertThat(context.getStartupFailure()).rootCause()
            .hasMessageContaining("resilient-http.clients.payments.backoff.cap"));
    runner.withPropertyValues("resilient-http.clients.payments.circuit-breaker.failure-rate-threshold=150")
        .run(context -> assertThat(context.getStartupFailure()).rootCause()
            .hasMessageContaining("resilient-http.clients.payments.circuit-breaker.failure-rate-threshold"));
    runner.withPropertyValues("resilient-http.clients.payments.okhttp.bean=missing").run(context ->
        assertThat(context.getStartupFailure()).rootCause()
            .hasMessageContaining("resilient-http.clients.payments.okhttp.bean")
            .hasMessageContaining("no OkHttpClient bean"));
  }

  @Test
  void anOkHttpClientBeanIsWrappedByNameAndLeftOpenOnShutdown() {
    runner.withPropertyValues("resilient-http.clients.payments.okhttp.bean=sharedOkHttp")
        .withUserConfiguration(SharedOkHttp.class)
        .run(context -> {
          OkHttpClient shared = context.getBean("sharedOkHttp", OkHttpClient.class);
          ResilientHttpClient client = context.getBean("paymentsResilientHttpClient", ResilientHttpClient.class);
          assertThat(client.wrappedClient().connectionPool()).isSameAs(shared.connectionPool());
          assertThat(client.wrappedClient().readTimeoutMillis()).isEqualTo(1234);
          assertThat(context.getBean(ResilientHttpClients.class).ownedOkHttpClients()).isEmpty();
          context.close();
          assertThat(shared.dispatcher().executorService().isShutdown()).isFalse();
        });
  }

  @Test
  void theOkHttpClientTheStarterBuiltIsReleasedWhenTheContextCloses() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().body("hi").build());
      server.start();
      runner.withPropertyValues("resilient-http.clients.payments.max-attempts=2").run(context -> {
        ResilientHttpClient client = context.getBean("paymentsResilientHttpClient", ResilientHttpClient.class);
        try (Response r = client.operation(new Request.Builder().url(server.url("/")).build()).execute()) {
          assertThat(r.body().string()).isEqualTo("hi");
        }
        OkHttpClient built = context.getBean(ResilientHttpClients.class).ownedOkHttpClients().get(0);
        assertThat(built.connectionPool().idleConnectionCount()).isEqualTo(1);
        context.close();
        assertThat(built.dispatcher().executorService().isShutdown()).isTrue();
        assertThat(built.connectionPool().connectionCount()).isZero();
      });
    }
  }

  @Test
  void everyClientIsClosedWhenTheContextClosesAndASharedOkHttpClientStaysUsable() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().body("still open").build());
      server.start();
      runner.withPropertyValues("resilient-http.clients.payments.okhttp.bean=sharedOkHttp",
              "resilient-http.clients.search.max-attempts=2")
          .withUserConfiguration(SharedOkHttp.class)
          .run(context -> {
            ResilientHttpClient payments =
                context.getBean("paymentsResilientHttpClient", ResilientHttpClient.class);
            ResilientHttpClient search = context.getBean(ResilientHttpClients.class).client("search");
            OkHttpClient shared = context.getBean("sharedOkHttp", OkHttpClient.class);
            assertThat(payments.isClosed()).isFalse();

            context.close();

            assertThat(payments.isClosed()).isTrue();
            assertThat(search.isClosed()).isTrue();
            try (Response r = shared.newCall(new Request.Builder().url(server.url("/")).build())
                .execute()) {
              assertThat(r.body().string()).isEqualTo("still open");
            }
          });
    }
  }

  @Test
  void customizersRunPerNameOrForAllAndAUsersClientBeanWins() {
    ResponseClassifier classifier = ResponseClassifier.defaults().orElse(ResponseClassifier.defaults());
    runner.withPropertyValues("resilient-http.clients.payments.max-attempts=2",
            "resilient-http.clients.search.max-attempts=2",
            "resilient-http.clients.orders.max-attempts=2")
        .withBean("paymentsCustomizer", ResilientHttpClientCustomizer.class,
            () -> ResilientHttpClientCustomizer.forClient("payments", b -> b.classifier(classifier)))
        .withBean("allCustomizer", ResilientHttpClientCustomizer.class,
            () -> (name, b) -> b.retryPolicy(b.build().retryPolicy().toBuilder()
                .backoff(Backoff.fixed(Duration.ofMillis(name.length()))).build()))
        .withBean("ordersResilientHttpClient", ResilientHttpClient.class,
            () -> ResilientHttpClient.wrap(new OkHttpClient()).build())
        .run(context -> {
          ResilientHttpClients clients = context.getBean(ResilientHttpClients.class);
          assertThat(clients.client("payments").classifier()).isSameAs(classifier);
          assertThat(clients.client("search").classifier()).isNotSameAs(classifier);
          assertThat(clients.client("search").retryPolicy().backoff().delay(1, null))
              .isEqualTo(Duration.ofMillis(6));
          assertThat(context.getBean("ordersResilientHttpClient", ResilientHttpClient.class)
              .retryPolicy().maxAttempts()).isEqualTo(3); // the user's bean, not the properties
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoInjectionPoints {
    final ResilientHttpClient payments;
    final ResilientHttpClient search;

    TwoInjectionPoints(@Qualifier("payments") ResilientHttpClient payments,
        @Qualifier("search") ResilientHttpClient search) {
      this.payments = payments;
      this.search = search;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class SharedOkHttp {
    @Bean
    OkHttpClient sharedOkHttp() {
      return new OkHttpClient.Builder().readTimeout(Duration.ofMillis(1234)).build();
    }
  }
}
