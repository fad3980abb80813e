package io.github.resilienthttp.spring;

import static io.github.resilienthttp.spring.PropertyCheck.run;

import io.github.resilienthttp.server.IdempotencyGuard;
import io.github.resilienthttp.server.IdempotencyListener;
import io.github.resilienthttp.server.IdempotencyStore;
import io.github.resilienthttp.server.InMemoryIdempotencyStore;
import io.github.resilienthttp.server.JdbcIdempotencyStore;
import io.github.resilienthttp.server.servlet.IdempotencyFilter;
import jakarta.servlet.Filter;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * The server-side Idempotency-Key guard (resilient-http-server) in a servlet web application, when
 * {@code resilient-http.server.enabled=true}: an {@link IdempotencyStore} (JDBC on the single
 * {@link DataSource}, else in memory, per {@code resilient-http.server.store}), an
 * {@link IdempotencyGuard} from {@code resilient-http.server.*}, and its Servlet filter registered on
 * {@code url-patterns} through a {@link FilterRegistrationBean} named
 * {@value #FILTER_BEAN}. With the JDBC store and one {@link PlatformTransactionManager}, keyed
 * requests run in a Spring transaction that also records the response
 * ({@link TransactionalIdempotencyFilter}). Each bean backs off when the application defines its own
 * (a guard bean of its own keeps the starter's filter registration on that guard).
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
    "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration"})
@ConditionalOnClass(name = {"io.github.resilienthttp.server.IdempotencyGuard", "jakarta.servlet.Filter",
    "org.springframework.boot.web.servlet.FilterRegistrationBean"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnProperty(prefix = "resilient-http.server", name = "enabled", havingValue = "true")
public class ResilientHttpServerAutoConfiguration {
  /** The name of the filter registration bean; define a bean of that name to replace it. */
  public static final String FILTER_BEAN = "resilientHttpIdempotencyFilter";
  private static final String PREFIX = "resilient-http.server.";
  private static final String DEFAULT_HEADER = "Idempotency-Key";

  /** Creates the configuration; called by Spring. */
  public ResilientHttpServerAutoConfiguration() {}

  @Bean
  @ConditionalOnMissingBean
  IdempotencyStore resilientHttpIdempotencyStore(ObjectProvider<DataSource> dataSources,
      BeanFactory beans, ResilientHttpProperties properties) {
    ResilientHttpProperties.Server s = properties.getServer();
    DataSource dataSource = dataSources.getIfUnique();
    if (s.getStore() == ResilientHttpProperties.ServerStore.MEMORY
        || (s.getStore() == ResilientHttpProperties.ServerStore.AUTO && dataSource == null)) {
      return new InMemoryIdempotencyStore();
    }
    if (dataSource == null) {
      throw new InvalidConfigurationPropertyValueException(PREFIX + "store", "jdbc",
          "the JDBC store needs one DataSource bean");
    }
    JdbcIdempotencyStore.Builder b = JdbcIdempotencyStore.builder().dataSource(dataSource);
    run(PREFIX + "table", s.getTable(), () -> b.table(s.getTable()));
    JdbcIdempotencyStore jdbc = b.build();
    if (s.isCreateSchema()) jdbc.createSchema();
    return s.isTransactional() && SpringTransactions.present(beans) && SpringTransactions.manager(beans) != null
        ? SpringTransactions.store(jdbc) : jdbc;
  }

  @Bean
  @ConditionalOnMissingBean
  IdempotencyGuard resilientHttpIdempotencyGuard(IdempotencyStore store,
      ObjectProvider<IdempotencyListener> listener, ResilientHttpProperties properties) {
    ResilientHttpProperties.Server s = properties.getServer();
    IdempotencyGuard.Builder b = IdempotencyGuard.builder().store(store).keyRequired(s.isKeyRequired());
    if (s.getHeaderName() != null) run(PREFIX + "header-name", s.getHeaderName(), () -> b.headerName(s.getHeaderName()));
    if (!s.getMethods().isEmpty()) {
      run(PREFIX + "methods", s.getMethods(), () -> b.methods(s.getMethods().toArray(String[]::new)));
    }
    if (s.getLease() != null) run(PREFIX + "lease", s.getLease(), () -> b.lease(s.getLease()));
    if (s.getRetryAfter() != null) run(PREFIX + "retry-after", s.getRetryAfter(), () -> b.retryAfter(s.getRetryAfter()));
    if (s.getRetention() != null) run(PREFIX + "retention", s.getRetention(), () -> b.retention(s.getRetention()));
    listener.ifUnique(b::listener);
    return PropertyCheck.check(PREFIX.substring(0, PREFIX.length() - 1), s, b::build);
  }

  @Bean(name = FILTER_BEAN)
  @ConditionalOnMissingBean(name = FILTER_BEAN)
  FilterRegistrationBean<Filter> resilientHttpIdempotencyFilter(IdempotencyGuard guard,
      BeanFactory beans, ResilientHttpProperties properties) {
    ResilientHttpProperties.Server s = properties.getServer();
    IdempotencyFilter filter = IdempotencyFilter.of(guard);
    Filter registered = SpringTransactions.present(beans) && SpringTransactions.joins(guard)
        ? SpringTransactions.filter(filter, beans, s.getHeaderName() == null ? DEFAULT_HEADER : s.getHeaderName())
        : filter;
    FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(registered);
    registration.setName(FILTER_BEAN);
    registration.setUrlPatterns(s.getUrlPatterns());
    registration.setOrder(s.getOrder());
    return registration;
  }

  /**
   * What needs spring-tx and spring-jdbc, which a servlet application may lack: loaded only after
   * {@link #present(BeanFactory)} said both are there.
   */
  static final class SpringTransactions {
    private SpringTransactions() {}

    static boolean present(BeanFactory beans) {
      // the application's class loader, as the @ConditionalOnClass checks use
      ClassLoader cl = beans instanceof ConfigurableBeanFactory c && c.getBeanClassLoader() != null
          ? c.getBeanClassLoader() : ResilientHttpServerAutoConfiguration.class.getClassLoader();
      return ClassUtils.isPresent("org.springframework.transaction.PlatformTransactionManager", cl)
          && ClassUtils.isPresent("org.springframework.jdbc.datasource.DataSourceUtils", cl);
    }

    static PlatformTransactionManager manager(BeanFactory beans) {
      return beans.getBeanProvider(PlatformTransactionManager.class).getIfUnique();
    }

    static IdempotencyStore store(JdbcIdempotencyStore jdbc) {
      return new SpringTransactionIdempotencyStore(jdbc);
    }

    static boolean joins(IdempotencyGuard guard) {
      return guard.store() instanceof SpringTransactionIdempotencyStore;
    }

    static Filter filter(IdempotencyFilter filter, BeanFactory beans, String headerName) {
      PlatformTransactionManager tm = manager(beans);
      return tm == null ? filter : new TransactionalIdempotencyFilter(filter, tm, headerName);
    }
  }
}
