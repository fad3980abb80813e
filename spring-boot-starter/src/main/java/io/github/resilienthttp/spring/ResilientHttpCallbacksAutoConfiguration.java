package io.github.resilienthttp.spring;

import io.github.resilienthttp.callbacks.CallbackHandler;
import io.github.resilienthttp.callbacks.CallbackVerifier;
import io.github.resilienthttp.callbacks.JdbcProcessingStore;
import io.github.resilienthttp.callbacks.SignatureScheme;
import io.github.resilienthttp.callbacks.StandardWebhooksScheme;
import io.github.resilienthttp.callbacks.StripeScheme;
import java.io.IOException;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Signed callbacks on the application's single {@link DataSource}, when
 * {@code resilient-http.callbacks.secrets} is set: a {@link JdbcProcessingStore} (table created at
 * startup with {@code create-schema=true}; otherwise run the DDL resource
 * {@value JdbcProcessingStore#SCHEMA_RESOURCE} with your migrations), a {@link CallbackVerifier}, and
 * a {@link TransactionalCallbackReceiver} on the application's {@link PlatformTransactionManager};
 * each backs off when the application defines its own. With {@code resilient-http.callbacks.path}
 * and a {@link CallbackHandler} bean in a servlet web application, a POST endpoint at that path.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
    "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration"})
@ConditionalOnClass(name = {"io.github.resilienthttp.callbacks.JdbcProcessingStore",
    "org.springframework.transaction.PlatformTransactionManager",
    "org.springframework.jdbc.datasource.DataSourceUtils"})
@Conditional(ResilientHttpCallbacksAutoConfiguration.OnSecrets.class)
@ConditionalOnSingleCandidate(DataSource.class)
public class ResilientHttpCallbacksAutoConfiguration {
  private static final String PREFIX = "resilient-http.callbacks.";

  /** Creates the configuration; called by Spring. */
  public ResilientHttpCallbacksAutoConfiguration() {}

  /** Matches when at least one secret is configured (a comma-separated value or a list). */
  static final class OnSecrets extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
      List<String> secrets = Binder.get(context.getEnvironment())
          .bind(PREFIX + "secrets", Bindable.listOf(String.class)).orElse(List.of());
      return secrets.isEmpty()
          ? ConditionOutcome.noMatch("no " + PREFIX + "secrets")
          : ConditionOutcome.match(PREFIX + "secrets set");
    }
  }

  @Bean
  @ConditionalOnMissingBean
  JdbcProcessingStore resilientHttpCallbackStore(DataSource dataSource, ResilientHttpProperties properties) {
    ResilientHttpProperties.Callbacks c = properties.getCallbacks();
    JdbcProcessingStore.Builder b = JdbcProcessingStore.builder().dataSource(dataSource);
    check("table", c.getTable(), () -> b.table(c.getTable()).build());
    check("retention", c.getRetention(), () -> b.retention(c.getRetention()).build());
    JdbcProcessingStore store = b.build();
    if (c.isCreateSchema()) store.createSchema();
    return store;
  }

  @Bean
  @ConditionalOnMissingBean
  CallbackVerifier resilientHttpCallbackVerifier(ResilientHttpProperties properties) {
    ResilientHttpProperties.Callbacks c = properties.getCallbacks();
    String[] secrets = c.getSecrets().toArray(String[]::new);
    SignatureScheme scheme = check("secrets", "(" + secrets.length + " secrets, not shown)",
        () -> c.getScheme() == ResilientHttpProperties.Scheme.STRIPE
            ? StripeScheme.of(secrets) : StandardWebhooksScheme.of(secrets));
    CallbackVerifier.Builder b = CallbackVerifier.builder().scheme(scheme);
    return check("tolerance", c.getTolerance(), () -> b.tolerance(c.getTolerance()).build());
  }

  @Bean
  @ConditionalOnMissingBean
  TransactionalCallbackReceiver resilientHttpCallbackReceiver(CallbackVerifier verifier,
      JdbcProcessingStore store, ObjectProvider<PlatformTransactionManager> transactions,
      ObjectProvider<CallbackEventId> eventId, ResilientHttpProperties properties) {
    ResilientHttpProperties.Callbacks c = properties.getCallbacks();
    PlatformTransactionManager tm = transactions.getIfUnique();
    if (tm == null) {
      throw new IllegalStateException("resilient-http.callbacks needs one PlatformTransactionManager bean"
          + " (spring-boot-starter-jdbc or -data-jpa configures it)");
    }
    CallbackEventId id = eventId.getIfUnique();
    if (id == null && c.getScheme() == ResilientHttpProperties.Scheme.STRIPE) {
      throw new InvalidConfigurationPropertyValueException(PREFIX + "scheme", "stripe",
          "Stripe's event ID is inside the JSON body: define a CallbackEventId bean that reads it");
    }
    try {
      return new TransactionalCallbackReceiver(verifier, store, tm, c.getScope(), c.getLease(),
          id == null ? null : id::of);
    } catch (IllegalArgumentException e) { // the lease's range, or a retention not above the tolerance
      boolean retention = String.valueOf(e.getMessage()).contains("retention");
      throw new InvalidConfigurationPropertyValueException(PREFIX + (retention ? "retention" : "lease"),
          retention ? store.retention() : c.getLease(), e.getMessage());
    }
  }

  private static <T> T check(String property, Object value, java.util.function.Supplier<T> step) {
    return PropertyCheck.check(PREFIX + property, value, step);
  }

  /**
   * The POST endpoint at {@code resilient-http.callbacks.path}, answering per the receiver's outcome.
   * Bodies over {@value #MAX_BODY_BYTES} bytes are refused with 413 before anything is verified.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = "org.springframework.web.servlet.function.RouterFunction")
  @ConditionalOnProperty(prefix = "resilient-http.callbacks", name = "path")
  @ConditionalOnBean(CallbackHandler.class)
  static class Endpoint {
    static final int MAX_BODY_BYTES = 1024 * 1024;

    @Bean
    RouterFunction<ServerResponse> resilientHttpCallbackEndpoint(TransactionalCallbackReceiver receiver,
        CallbackHandler handler, ResilientHttpProperties properties) {
      return RouterFunctions.route(RequestPredicates.POST(properties.getCallbacks().getPath()), request -> {
        byte[] body;
        try {
          body = request.servletRequest().getInputStream().readNBytes(MAX_BODY_BYTES + 1);
        } catch (IOException e) { // the sender went away mid-body
          return ServerResponse.badRequest().build();
        }
        if (body.length > MAX_BODY_BYTES) return ServerResponse.status(413).build();
        var answer = receiver.receive(CallbackEndpoints.headers(request.servletRequest()), body, handler);
        return ServerResponse.status(answer.status())
            .headers(h -> answer.headers().forEach(h::set))
            .body(answer.body());
      });
    }
  }
}
