package io.github.resilienthttp.spring;

import io.github.resilienthttp.ResilientHttpClient;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A bean hook for what properties cannot say (a classifier, listeners, a time source): called for
 * every client the starter builds, after the properties were applied and before {@code build()}.
 * Customizers run in {@link org.springframework.core.Ordered} / {@code @Order} order; a later one
 * sees what an earlier one set.
 *
 * <pre>{@code
 * @Bean
 * ResilientHttpClientCustomizer paymentsClassifier() {
 *   return ResilientHttpClientCustomizer.forClient("payments", b -> b.classifier(myClassifier));
 * }
 * }</pre>
 *
 * <p>Called on the thread that creates the client beans (at context refresh).
 */
@FunctionalInterface
public interface ResilientHttpClientCustomizer {

  /**
   * Customizes the client named {@code name}.
   *
   * @param name the client's name ({@code resilient-http.clients.<name>})
   * @param builder the builder, with the properties applied
   */
  void customize(String name, ResilientHttpClient.Builder builder);

  /**
   * A customizer for one client only.
   *
   * @param name the client's name
   * @param customizer what to do with its builder
   * @return a customizer that ignores every other client
   */
  static ResilientHttpClientCustomizer forClient(String name, Consumer<ResilientHttpClient.Builder> customizer) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(customizer, "customizer");
    return (n, b) -> {
      if (n.equals(name)) customizer.accept(b);
    };
  }
}
