package io.github.resilienthttp.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.micrometer.MicrometerOperationMetrics;
import io.github.resilienthttp.opentelemetry.ResilientHttpTracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.Map;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Each integration with and without its library, with and without the application's own bean. */
class ObservabilityAutoConfigurationTest {
  private static final String HEALTH = ResilientHttpHealthAutoConfiguration.BEAN;
  private final MockWebServer server = new MockWebServer();
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(ResilientHttpAutoConfiguration.class,
          ResilientHttpMicrometerAutoConfiguration.class, ResilientHttpTracingAutoConfiguration.class,
          ResilientHttpHealthAutoConfiguration.class, ResilientHttpBoot4HealthAutoConfiguration.class))
      .withPropertyValues("resilient-http.clients.payments.max-attempts=2",
          "resilient-http.clients.payments.backoff.base=1ms",
          "resilient-http.clients.payments.backoff.cap=1ms");

  @BeforeEach
  void start() throws Exception {
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private void callOnce(ResilientHttpClient client) throws Exception {
    server.enqueue(new MockResponse.Builder().body("ok").build());
    try (Response r = client.operation(new Request.Builder().url(server.url("/x")).build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
  }

  private static ResilientHttpClient payments(org.springframework.context.ApplicationContext c) {
    return c.getBean("paymentsResilientHttpClient", ResilientHttpClient.class);
  }

  @Test
  void micrometerRecordsIntoTheApplicationsRegistry() {
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("resilient-http.clients.search.budget.type=none").run(context -> {
          callOnce(payments(context));
          MeterRegistry registry = context.getBean(MeterRegistry.class);
          assertThat(registry.get("http.client.operations").tag("outcome", "SUCCESS").counter().count())
              .isEqualTo(1.0);
          context.getBean("searchResilientHttpClient");
          assertThat(registry.get("resilient.http.retry_budget.tokens").tag("client", "payments").gauge().value())
              .isPositive();
          assertThat(registry.get("resilient.http.retry_budget.tokens").tag("client", "search").gauge().value())
              .isZero();
          HttpUrl target = server.url("/");
          String breaker = target.scheme() + "://" + target.host() + ":" + target.port();
          assertThat(registry.get("resilient.http.circuit_breaker.state").tag("client", "payments")
              .tag("name", breaker).gauge().value()).isZero();
          payments(context).circuitBreakerFor(target).orElseThrow().transitionToOpenState();
          assertThat(registry.get("resilient.http.circuit_breaker.state").tag("name", breaker).gauge().value())
              .isEqualTo(1.0);
        });
  }

  /** Boot 3.5 brings Micrometer 1.15, which these tests run on: no 1.16-only method may be called. */
  @Test
  void micrometerCountersWorkOnBoot35sMicrometer() {
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
      server.enqueue(new MockResponse.Builder().code(201).addHeader("Idempotent-Replayed", "true").build());
      okhttp3.Request post = new Request.Builder().url(server.url("/charges"))
          .post(okhttp3.RequestBody.create("{}", okhttp3.MediaType.get("application/json"))).build();
      try (Response r = payments(context).operation(post).execute()) {
        assertThat(r.code()).isEqualTo(201);
      }
      assertThat(MeterRegistry.class.getPackage().getImplementationVersion()).startsWith("1.15.");
      assertThat(context.getBean(MeterRegistry.class).get("resilient.http.replays").counter().count())
          .isEqualTo(1.0);
    });
  }

  @Test
  void micrometerIsSkippedWithoutTheLibraryWithoutARegistryOrWhenSwitchedOff() {
    runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class)).run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context).doesNotHaveBean("resilientHttpMicrometerInstrumentation");
      callOnce(payments(context));
    });
    runner.run(context -> {
      assertThat(context).hasBean("resilientHttpMicrometerInstrumentation");
      callOnce(payments(context)); // no registry: nothing bound, nothing fails
    });
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("resilient-http.metrics.enabled=false").run(context -> {
          callOnce(payments(context));
          assertThat(context.getBean(MeterRegistry.class).find("http.client.operations").counter()).isNull();
        });
  }

  @Test
  void anApplicationsOwnMetricsBeanIsUsedInsteadOfANewOne() {
    SimpleMeterRegistry elsewhere = new SimpleMeterRegistry();
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withBean(MicrometerOperationMetrics.class, () -> new MicrometerOperationMetrics(elsewhere))
        .run(context -> {
          callOnce(payments(context));
          assertThat(elsewhere.find("http.client.operations").counter()).isNotNull();
          assertThat(context.getBean(MeterRegistry.class).find("http.client.operations").counter()).isNull();
        });
  }

  private static OpenTelemetry otel(InMemorySpanExporter exporter) {
    return OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
  }

  @Test
  void openTelemetryTracesOperationsAndAttemptsOnTheApplicationsBean() {
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    runner.withBean(OpenTelemetry.class, () -> otel(spans)).run(context -> {
      callOnce(payments(context));
      List<String> names = spans.getFinishedSpanItems().stream().map(SpanData::getName).toList();
      assertThat(names).contains("resilient-http GET").hasSize(2); // the operation and its attempt
      assertThat(server.takeRequest().getHeaders().get("traceparent")).isNotBlank();
    });
    InMemorySpanExporter operationOnly = InMemorySpanExporter.create(); // closing a context shuts its SDK down
    runner.withBean(OpenTelemetry.class, () -> otel(operationOnly))
        .withPropertyValues("resilient-http.tracing.attempt-spans=false").run(context -> {
          callOnce(payments(context));
          assertThat(operationOnly.getFinishedSpanItems()).hasSize(1);
        });
  }

  @Test
  void tracingIsSkippedWithoutTheLibraryOrWhenSwitchedOffAndBacksOffForTheApplicationsOwn() {
    runner.withClassLoader(new FilteredClassLoader(OpenTelemetry.class)).run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean("resilientHttpTracingInstrumentation");
      callOnce(payments(context));
    });
    runner.withPropertyValues("resilient-http.tracing.enabled=false").run(context ->
        assertThat(context).doesNotHaveBean("resilientHttpTracingInstrumentation"));
    InMemorySpanExporter mine = InMemorySpanExporter.create();
    runner.withBean(ResilientHttpTracing.class, () -> ResilientHttpTracing.builder(otel(mine)).attemptSpans(false).build())
        .run(context -> {
          callOnce(payments(context));
          assertThat(mine.getFinishedSpanItems()).extracting(SpanData::getName)
              .containsExactly("resilient-http GET");
        });
  }

  @Test
  void healthListsOpenBreakersTargetsPerClient() {
    runner.withPropertyValues("resilient-http.clients.search.max-attempts=1").run(context -> {
      CompositeHealthContributor health = context.getBean(HEALTH, CompositeHealthContributor.class);
      HealthIndicator payments = (HealthIndicator) health.getContributor("payments");
      HealthIndicator search = (HealthIndicator) health.getContributor("search");
      callOnce(payments(context));
      assertThat(payments.health().getStatus()).isEqualTo(Status.UP);

      HttpUrl target = server.url("/");
      CircuitBreaker breaker = payments(context).circuitBreakerFor(target).orElseThrow();
      breaker.transitionToOpenState();
      Health down = payments.health();
      String name = target.scheme() + "://" + target.host() + ":" + target.port();
      assertThat(down.getStatus()).isEqualTo(Status.DOWN);
      assertThat(down.getDetails()).containsEntry("openTargets", List.of(name));
      assertThat(List.copyOf(((Map<?, ?>) down.getDetails().get("circuitBreakers")).keySet())).isEqualTo(List.of(name));
      assertThat(search.health().getStatus()).isEqualTo(Status.UP);

      breaker.transitionToHalfOpenState();
      assertThat(payments.health().getStatus()).isEqualTo(Status.UP);
    });
    runner.withPropertyValues("resilient-http.health.open-status=OUT_OF_SERVICE").run(context -> {
      CompositeHealthContributor health = context.getBean(HEALTH, CompositeHealthContributor.class);
      payments(context).circuitBreakerFor(server.url("/")).orElseThrow().transitionToOpenState();
      assertThat(((HealthIndicator) health.getContributor("payments")).health().getStatus())
          .isEqualTo(Status.OUT_OF_SERVICE);
    });
  }

  @Test
  void healthIsSkippedWithoutActuatorWhenSwitchedOffAndForTheApplicationsOwnBean() {
    runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate.health")).run(context ->
        assertThat(context).hasNotFailed().doesNotHaveBean(HEALTH));
    runner.withPropertyValues("resilient-http.health.enabled=false").run(context ->
        assertThat(context).doesNotHaveBean(HEALTH));
    HealthIndicator mine = () -> Health.up().build();
    runner.withBean(HEALTH, HealthIndicator.class, () -> mine).run(context ->
        assertThat(context.getBean(HEALTH)).isSameAs(mine));
    // Boot 3 here: the Boot 4 health configuration stays off (its API is absent)
    runner.run(context -> assertThat(context.getBeansOfType(CompositeHealthContributor.class)).hasSize(1));
  }
}
