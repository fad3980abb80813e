package io.github.resilienthttp.spring;

import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.opentelemetry.ResilientHttpTracing;
import io.opentelemetry.api.OpenTelemetry;
import okhttp3.OkHttpClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * OpenTelemetry tracing ({@link ResilientHttpTracing}: an operation span, a span per attempt, context
 * propagation) for every starter-built client, on the application's {@link OpenTelemetry} bean; off
 * with {@code resilient-http.tracing.enabled=false}. An application's own {@link ResilientHttpTracing}
 * bean is used instead of a new one. Without an OpenTelemetry bean nothing is traced.
 */
@AutoConfiguration(before = ResilientHttpAutoConfiguration.class)
@ConditionalOnClass(name = {"io.opentelemetry.api.OpenTelemetry",
    "io.github.resilienthttp.opentelemetry.ResilientHttpTracing"})
@ConditionalOnProperty(prefix = "resilient-http.tracing", name = "enabled", matchIfMissing = true)
public class ResilientHttpTracingAutoConfiguration {

  /** Creates the configuration; called by Spring. */
  public ResilientHttpTracingAutoConfiguration() {}

  @Bean
  ClientInstrumentation resilientHttpTracingInstrumentation(ObjectProvider<ResilientHttpTracing> own,
      ObjectProvider<OpenTelemetry> openTelemetry, ResilientHttpProperties properties) {
    return new ClientInstrumentation() {
      private ResilientHttpTracing tracing;
      private boolean resolved;

      private synchronized ResilientHttpTracing tracing() {
        if (!resolved) {
          resolved = true;
          tracing = own.getIfAvailable(() -> {
            OpenTelemetry otel = openTelemetry.getIfAvailable();
            return otel == null ? null : ResilientHttpTracing.builder(otel)
                .attemptSpans(properties.getTracing().isAttemptSpans()).build();
          });
        }
        return tracing;
      }

      @Override
      public void okHttp(String name, OkHttpClient.Builder builder) {
        ResilientHttpTracing t = tracing();
        if (t != null) builder.addInterceptor(t.interceptor());
      }

      @Override
      public void client(String name, ResilientHttpClient.Builder builder) {
        ResilientHttpTracing t = tracing();
        if (t != null) builder.addListener(t.listener());
      }
    };
  }
}
