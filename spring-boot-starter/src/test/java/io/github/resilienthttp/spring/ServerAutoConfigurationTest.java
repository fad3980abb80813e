package io.github.resilienthttp.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.server.IdempotencyGuard;
import io.github.resilienthttp.server.IdempotencyStore;
import io.github.resilienthttp.server.InMemoryIdempotencyStore;
import io.github.resilienthttp.server.JdbcIdempotencyStore;
import io.github.resilienthttp.server.servlet.IdempotencyFilter;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The server guard's wiring: conditions, the store chosen, the filter's registration, back-off. */
class ServerAutoConfigurationTest {
  private static final AtomicInteger DB = new AtomicInteger();

  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(ResilientHttpAutoConfiguration.class,
          ResilientHttpServerAutoConfiguration.class));

  private WebApplicationContextRunner withDatabase() {
    return new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
            DataSourceTransactionManagerAutoConfiguration.class, ResilientHttpAutoConfiguration.class,
            ResilientHttpServerAutoConfiguration.class))
        .withPropertyValues("spring.datasource.url=jdbc:h2:mem:srv" + DB.incrementAndGet() + ";DB_CLOSE_DELAY=-1",
            "resilient-http.server.enabled=true", "resilient-http.server.create-schema=true");
  }

  @Test
  void offUnlessEnabledInAServletAppWithTheServerModule() {
    runner.run(context -> assertThat(context).hasNotFailed()
        .doesNotHaveBean(IdempotencyGuard.class).doesNotHaveBean(FilterRegistrationBean.class));
    new ApplicationContextRunner() // not a web application
        .withConfiguration(AutoConfigurations.of(ResilientHttpAutoConfiguration.class,
            ResilientHttpServerAutoConfiguration.class))
        .withPropertyValues("resilient-http.server.enabled=true")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyGuard.class));
    runner.withPropertyValues("resilient-http.server.enabled=true")
        .withClassLoader(new FilteredClassLoader(IdempotencyGuard.class))
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FilterRegistrationBean.class));
    // a DataSource but no spring-tx: the plain JDBC store and filter
    withDatabase().withClassLoader(new FilteredClassLoader("org.springframework.transaction"))
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(JdbcIdempotencyStore.class);
          assertThat(context.getBean(ResilientHttpServerAutoConfiguration.FILTER_BEAN, FilterRegistrationBean.class)
              .getFilter()).isInstanceOf(IdempotencyFilter.class);
        });
  }

  @Test
  void inMemoryWithoutADataSourceOnTheConfiguredPatterns() {
    runner.withPropertyValues("resilient-http.server.enabled=true",
        "resilient-http.server.url-patterns=/charges/*,/refunds", "resilient-http.server.order=5")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
          FilterRegistrationBean<?> registration = context.getBean(
              ResilientHttpServerAutoConfiguration.FILTER_BEAN, FilterRegistrationBean.class);
          assertThat(registration.getFilter()).isInstanceOf(IdempotencyFilter.class);
          assertThat(registration.getUrlPatterns()).containsExactly("/charges/*", "/refunds");
          assertThat(registration.getOrder()).isEqualTo(5);
        });
  }

  @Test
  void jdbcOnTheDataSourceInTheApplicationsTransactionsUnlessTurnedOff() {
    withDatabase().run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(SpringTransactionIdempotencyStore.class);
      assertThat(context.getBean(ResilientHttpServerAutoConfiguration.FILTER_BEAN, FilterRegistrationBean.class)
          .getFilter()).isInstanceOf(TransactionalIdempotencyFilter.class);
    });
    withDatabase().withPropertyValues("resilient-http.server.transactional=false").run(context -> {
      assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(JdbcIdempotencyStore.class);
      assertThat(context.getBean(ResilientHttpServerAutoConfiguration.FILTER_BEAN, FilterRegistrationBean.class)
          .getFilter()).isInstanceOf(IdempotencyFilter.class);
    });
    withDatabase().withPropertyValues("resilient-http.server.store=memory").run(context ->
        assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class));
    runner.withPropertyValues("resilient-http.server.enabled=true", "resilient-http.server.store=jdbc")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("resilient-http.server.store").hasStackTraceContaining("DataSource"));
  }

  @Test
  void backsOffForTheApplicationsBeansAndRefusesABadValue() {
    runner.withPropertyValues("resilient-http.server.enabled=true").withUserConfiguration(OwnGuard.class)
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(IdempotencyGuard.class)).isSameAs(OwnGuard.GUARD);
          assertThat(context.getBean(IdempotencyStore.class)).isSameAs(OwnGuard.STORE);
          assertThat(context.getBeansOfType(FilterRegistrationBean.class)).hasSize(1);
        });
    runner.withPropertyValues("resilient-http.server.enabled=true").withUserConfiguration(OwnFilter.class)
        .run(context -> assertThat(context.getBean(ResilientHttpServerAutoConfiguration.FILTER_BEAN))
            .isSameAs(OwnFilter.REGISTRATION));
    runner.withPropertyValues("resilient-http.server.enabled=true", "resilient-http.server.lease=10ms")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("resilient-http.server").hasStackTraceContaining("lease: PT0.01S"));
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnGuard {
    static final IdempotencyStore STORE = new InMemoryIdempotencyStore();
    static final IdempotencyGuard GUARD = IdempotencyGuard.builder().store(STORE).build();

    @Bean
    IdempotencyStore store() {
      return STORE;
    }

    @Bean
    IdempotencyGuard guard() {
      return GUARD;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnFilter {
    static final FilterRegistrationBean<IdempotencyFilter> REGISTRATION = new FilterRegistrationBean<>(
        IdempotencyFilter.of(IdempotencyGuard.builder().store(new InMemoryIdempotencyStore()).build()));

    @Bean(name = ResilientHttpServerAutoConfiguration.FILTER_BEAN)
    FilterRegistrationBean<IdempotencyFilter> resilientHttpIdempotencyFilter() {
      return REGISTRATION;
    }
  }
}
