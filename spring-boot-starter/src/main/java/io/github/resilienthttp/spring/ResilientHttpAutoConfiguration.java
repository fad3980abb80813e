package io.github.resilienthttp.spring;

import io.github.resilienthttp.ResilientHttpClient;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Clients from {@code resilient-http.clients.<name>.*}: a {@link ResilientHttpClients} bean and one {@link ResilientHttpClient} bean per name, qualified
 * by the name; an application's bean named {@code <name>ResilientHttpClient} replaces the starter's.
 */
@AutoConfiguration
@ConditionalOnClass(ResilientHttpClient.class)
@EnableConfigurationProperties(ResilientHttpProperties.class)
@Import(ClientBeanRegistrar.class)
public class ResilientHttpAutoConfiguration {
  static final String CLIENTS_BEAN = "resilientHttpClients";

  /** Creates the configuration; called by Spring. */
  public ResilientHttpAutoConfiguration() {}

  /**
   * The configured clients.
   *
   * @param properties the bound properties
   * @param beanFactory where OkHttpClient and CircuitBreakerRegistry beans named in properties come from
   * @param instrumentations the starter's observability integrations that are active
   * @param customizers the application's customizers, in order
   * @return the clients
   */
  @Bean(name = CLIENTS_BEAN)
  ResilientHttpClients resilientHttpClients(ResilientHttpProperties properties, BeanFactory beanFactory,
      ObjectProvider<ClientInstrumentation> instrumentations,
      ObjectProvider<ResilientHttpClientCustomizer> customizers) {
    return new ResilientHttpClients(properties, beanFactory,
        instrumentations.orderedStream().toList(), customizers.orderedStream().toList());
  }
}
