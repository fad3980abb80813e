package io.github.resilienthttp.spring;

import io.github.resilienthttp.ResilientHttpClient;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link ResilientHttpClient} bean per name under {@code resilient-http.clients}: bean
 * name {@code <name>ResilientHttpClient}, qualifier {@code <name>}, made by
 * {@link ResilientHttpClients#client(String)}. A bean the application already defines under that
 * bean name wins.
 */
final class ClientBeanRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {
  static final String SUFFIX = "ResilientHttpClient";
  private Environment environment;
  private BeanFactory beanFactory;

  @Override
  public void setEnvironment(Environment environment) {
    this.environment = environment;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.beanFactory = beanFactory;
  }

  @Override
  public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
    Map<String, ResilientHttpProperties.Client> names = Binder.get(environment)
        .bind("resilient-http.clients", Bindable.mapOf(String.class, ResilientHttpProperties.Client.class))
        .orElse(Map.of());
    for (String name : names.keySet()) {
      String beanName = name + SUFFIX;
      if (registry.containsBeanDefinition(beanName)) continue;
      RootBeanDefinition d = new RootBeanDefinition(ResilientHttpClient.class,
          () -> beanFactory.getBean(ResilientHttpClients.class).client(name));
      d.addQualifier(new AutowireCandidateQualifier(Qualifier.class, name));
      d.setDependsOn(ResilientHttpAutoConfiguration.CLIENTS_BEAN);
      registry.registerBeanDefinition(beanName, d);
    }
  }
}
