package io.github.resilienthttp.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot 3's Actuator health ({@code org.springframework.boot.actuate.health}): a contributor
 * {@code resilientHttp} with one component per client ({@link BreakerHealth}). Off with
 * {@code resilient-http.health.enabled=false}; an application's bean named
 * {@value #BEAN} replaces it. Boot 4 uses {@link ResilientHttpBoot4HealthAutoConfiguration}.
 */
@AutoConfiguration(after = ResilientHttpAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
@ConditionalOnProperty(prefix = "resilient-http.health", name = "enabled", matchIfMissing = true)
public class ResilientHttpHealthAutoConfiguration {
  static final String BEAN = "resilientHttpHealthContributor";

  /** Creates the configuration; called by Spring. */
  public ResilientHttpHealthAutoConfiguration() {}

  @Bean(name = BEAN)
  @ConditionalOnMissingBean(name = BEAN)
  CompositeHealthContributor resilientHttpHealthContributor(ResilientHttpClients clients,
      ResilientHttpProperties properties) {
    Map<String, HealthIndicator> byClient = new LinkedHashMap<>();
    Status open = new Status(properties.getHealth().getOpenStatus());
    for (String name : clients.names()) {
      byClient.put(name, () -> {
        BreakerHealth h = BreakerHealth.of(clients, name);
        return Health.status(h.open() ? open : Status.UP).withDetails(h.details()).build();
      });
    }
    return CompositeHealthContributor.fromMap(byClient);
  }
}
