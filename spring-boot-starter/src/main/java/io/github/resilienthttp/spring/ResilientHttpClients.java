package io.github.resilienthttp.spring;

import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import okhttp3.OkHttpClient;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * The clients configured under {@code resilient-http.clients}, built on first use from their
 * properties, the starter's instrumentation (Micrometer, OpenTelemetry) and the application's
 * {@link ResilientHttpClientCustomizer}s. Each is also a {@code ResilientHttpClient} bean qualified by
 * its name ({@code @Qualifier("payments")}); this bean is for code that looks clients up by name and
 * for the health contributor.
 *
 * <p><b>Lifecycle.</b> Every client is closed ({@link ResilientHttpClient#close()}) when the context
 * closes: Spring calls {@code close()} on each client bean (it is {@link AutoCloseable}), and
 * {@link #destroy()} closes the clients made through {@link #client(String)}. An OkHttpClient the
 * starter built (no {@code okhttp.bean} given) is released
 * when the context closes: its dispatcher's executor is shut down and its connection pool evicted.
 * An application's OkHttpClient bean is left to its owner (the wrap shares its pool and dispatcher).
 *
 * <p>Thread-safe.
 */
public final class ResilientHttpClients implements DisposableBean {
  private final ResilientHttpProperties properties;
  private final BeanFactory beanFactory;
  private final List<ClientInstrumentation> instrumentations;
  private final List<ResilientHttpClientCustomizer> customizers;
  private final Map<String, ResilientHttpClient> clients = new LinkedHashMap<>();
  private final Map<String, CircuitBreakerRegistry> registries = new LinkedHashMap<>();
  private final List<OkHttpClient> owned = new ArrayList<>();

  ResilientHttpClients(ResilientHttpProperties properties, BeanFactory beanFactory,
      List<ClientInstrumentation> instrumentations, List<ResilientHttpClientCustomizer> customizers) {
    this.properties = properties;
    this.beanFactory = beanFactory;
    this.instrumentations = List.copyOf(instrumentations);
    this.customizers = List.copyOf(customizers);
  }

  /** {@return the names of the configured clients, in configuration order} */
  public Set<String> names() {
    return Collections.unmodifiableSet(properties.getClients().keySet());
  }

  /**
   * The client named {@code name}, built on the first call.
   *
   * @param name the name under {@code resilient-http.clients}
   * @return the client
   * @throws IllegalArgumentException when no client has that name
   * @throws InvalidConfigurationPropertyValueException when one of its properties is invalid
   */
  public synchronized ResilientHttpClient client(String name) {
    ResilientHttpClient client = clients.get(name);
    if (client == null) {
      ResilientHttpProperties.Client p = properties.getClients().get(name);
      if (p == null) {
        throw new IllegalArgumentException("no client " + name + " under resilient-http.clients; have "
            + names());
      }
      client = build(name, p);
      clients.put(name, client);
    }
    return client;
  }

  /**
   * The registry the client's per-target breakers live in, when the starter gave it one (breakers on,
   * and no customizer replaced them): every breaker in it guards one target of this client.
   *
   * @param name the client's name
   * @return the registry, or empty
   */
  public synchronized Optional<CircuitBreakerRegistry> circuitBreakerRegistry(String name) {
    client(name);
    return Optional.ofNullable(registries.get(name));
  }

  private ResilientHttpClient build(String name, ResilientHttpProperties.Client p) {
    ClientAssembler a = new ClientAssembler(name, p);
    ResilientHttpClient.Builder b = ResilientHttpClient.wrap(okHttp(name, p, a))
        .retryPolicy(a.retryPolicy())
        .idempotencyKeys(a.idempotencyKeyPolicy())
        .retryBudget(a.retryBudget());
    CircuitBreakerRegistry registry = null;
    if (!p.getCircuitBreaker().isEnabled()) {
      b.noCircuitBreaker();
    } else {
      registry = p.getCircuitBreaker().getRegistry() != null
          ? bean("circuit-breaker.registry", name, p.getCircuitBreaker().getRegistry(), CircuitBreakerRegistry.class)
          : a.circuitBreakerRegistry();
      b.circuitBreakerRegistry(registry);
    }
    BulkheadConfig bulkhead = a.bulkhead();
    if (bulkhead != null) b.bulkhead(bulkhead);
    HedgingPolicy hedging = a.hedging();
    if (hedging != null) b.hedging(hedging);
    a.replayHeader(b);
    instrumentations.forEach(i -> i.client(name, b));
    customizers.forEach(c -> c.customize(name, b));
    ResilientHttpClient client = b.build();
    instrumentations.forEach(i -> i.built(name, client));
    if (registry != null) {
      registries.put(name, registry);
      CircuitBreakerRegistry breakers = registry;
      instrumentations.forEach(i -> i.breakers(name, breakers));
    }
    return client;
  }

  /**
   * The client to wrap: one the starter builds (and releases on shutdown) with the properties'
   * timeouts, or the named bean, derived by {@code newBuilder()} (same pool and dispatcher) only when
   * an instrumentation adds an interceptor.
   */
  private OkHttpClient okHttp(String name, ResilientHttpProperties.Client p, ClientAssembler a) {
    ResilientHttpProperties.OkHttp o = p.getOkhttp();
    if (o.getBean() == null) {
      OkHttpClient.Builder b = new OkHttpClient.Builder();
      a.timeouts(b);
      instrumentations.forEach(i -> i.okHttp(name, b));
      OkHttpClient built = b.build();
      owned.add(built);
      return built;
    }
    if (o.getConnectTimeout() != null || o.getReadTimeout() != null || o.getWriteTimeout() != null
        || o.getCallTimeout() != null) {
      throw new InvalidConfigurationPropertyValueException("resilient-http.clients." + name + ".okhttp.bean",
          o.getBean(), "the okhttp timeouts apply only to a client the starter builds; set them on the bean");
    }
    OkHttpClient bean = bean("okhttp.bean", name, o.getBean(), OkHttpClient.class);
    OkHttpClient.Builder b = bean.newBuilder();
    int interceptors = b.interceptors().size();
    instrumentations.forEach(i -> i.okHttp(name, b));
    return b.interceptors().size() == interceptors ? bean : b.build();
  }

  private <T> T bean(String property, String client, String beanName, Class<T> type) {
    try {
      return beanFactory.getBean(beanName, type);
    } catch (NoSuchBeanDefinitionException e) {
      throw new InvalidConfigurationPropertyValueException("resilient-http.clients." + client + "." + property,
          beanName, "no " + type.getSimpleName() + " bean of that name");
    }
  }

  /**
   * Releases the OkHttpClients the starter built: no new calls are accepted, idle connections are
   * closed. Calls in flight finish (OkHttp's executor shutdown does not interrupt them).
   */
  @Override
  public synchronized void destroy() {
    // The clients first (each bean is closed by Spring too, as an AutoCloseable; close is
    // idempotent): their scheduler threads end, new calls are refused; then the OkHttp clients
    // the starter built.
    for (ResilientHttpClient c : clients.values()) {
      c.close();
    }
    for (OkHttpClient c : owned) {
      c.dispatcher().executorService().shutdown();
      c.connectionPool().evictAll();
    }
    owned.clear();
  }

  /** {@return the OkHttpClients the starter built and has not yet released} (for tests) */
  synchronized List<OkHttpClient> ownedOkHttpClients() {
    return List.copyOf(owned);
  }

  @Override
  public String toString() {
    return "ResilientHttpClients" + names();
  }
}
