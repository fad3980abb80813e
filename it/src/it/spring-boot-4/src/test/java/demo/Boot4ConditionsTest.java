package demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.spring.ResilientHttpAutoConfiguration;
import io.github.resilienthttp.spring.ResilientHttpBoot4HealthAutoConfiguration;
import io.github.resilienthttp.spring.ResilientHttpHealthAutoConfiguration;
import io.github.resilienthttp.spring.ResilientHttpMicrometerAutoConfiguration;
import io.github.resilienthttp.spring.ResilientHttpTracingAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
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
      // opentelemetry-api is not on this application's class path
      assertThat(context).doesNotHaveBean("resilientHttpTracingInstrumentation");
    });
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
