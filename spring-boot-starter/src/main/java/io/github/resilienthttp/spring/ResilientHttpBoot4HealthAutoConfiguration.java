package io.github.resilienthttp.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot 4's health ({@code org.springframework.boot.health.contributor}, module
 * spring-boot-health): the same contributor as {@link ResilientHttpHealthAutoConfiguration} (which
 * serves Boot 3), for the API that moved in Boot 4.
 */
@AutoConfiguration(after = ResilientHttpAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnProperty(prefix = "resilient-http.health", name = "enabled", matchIfMissing = true)
public class ResilientHttpBoot4HealthAutoConfiguration {
  static final String BEAN = ResilientHttpHealthAutoConfiguration.BEAN;

  /** Creates the configuration; called by Spring. */
  public ResilientHttpBoot4HealthAutoConfiguration() {}

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
