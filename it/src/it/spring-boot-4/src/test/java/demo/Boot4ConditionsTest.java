package demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.spring.ResilientHttpAutoConfiguration;
import io.github.resilienthttp.spring.ResilientHttpBoot4HealthAutoConfiguration;
import io.github.resilienthttp.spring.ResilientHttpHealthAutoConfiguration;
import io.github.resilienthttp.spring.ResilientHttpMicrometerAutoConfiguration;
import io.github.resilienthttp.spring.ResilientHttpTracingAutoConfiguration;
import io.github.resilienthttp.ResilientHttpClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The starter's conditions on Boot 4's class path. */
class Boot4ConditionsTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(ResilientHttpAutoConfiguration.class,
          ResilientHttpMicrometerAutoConfiguration.class, ResilientHttpTracingAutoConfiguration.class,
          ResilientHttpHealthAutoConfiguration.class, ResilientHttpBoot4HealthAutoConfiguration.class))
      .withPropertyValues("resilient-http.clients.payments.max-attempts=2");

  @Test
  void boot4HealthApiIsUsedAndBoot3sIsNot() {
    runner.run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context.getBean("resilientHttpHealthContributor"))
          .isInstanceOf(CompositeHealthContributor.class);
      assertThat(context).hasBean("resilientHttpMicrometerInstrumentation");
    });
    runner.withClassLoader(new FilteredClassLoader("io.opentelemetry.api")).run(context ->
        assertThat(context).hasNotFailed().doesNotHaveBean("resilientHttpTracingInstrumentation"));
  }

  @Test
  void tracingOnTheApplicationsOpenTelemetryOnBoot4() throws Exception {
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    OpenTelemetry otel = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(spans)).build()).build();
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().body("ok").build());
      server.start();
      runner.withBean(OpenTelemetry.class, () -> otel).run(context -> {
        ResilientHttpClient payments = context.getBean("paymentsResilientHttpClient", ResilientHttpClient.class);
        try (Response r = payments.operation(new Request.Builder().url(server.url("/")).build()).execute()) {
          assertThat(r.code()).isEqualTo(200);
        }
        assertThat(spans.getFinishedSpanItems()).extracting(SpanData::getName).contains("resilient-http GET")
            .hasSize(2);
      });
    }
  }

  @Test
  void withoutTheHealthModuleOrMicrometerTheirBeansAreAbsent() {
    runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health", MeterRegistry.class.getName()))
        .run(context -> {
          assertThat(context).hasNotFailed().doesNotHaveBean("resilientHttpHealthContributor")
              .doesNotHaveBean("resilientHttpMicrometerInstrumentation");
        });
  }

  @Test
  void anInvalidValueFailsTheStartupNamingThePropertyOnBoot4() {
    runner.withPropertyValues("resilient-http.clients.payments.max-attempts=0").run(context ->
        assertThat(context.getStartupFailure()).rootCause()
            .hasMessageContaining("resilient-http.clients.payments.max-attempts"));
  }
}
