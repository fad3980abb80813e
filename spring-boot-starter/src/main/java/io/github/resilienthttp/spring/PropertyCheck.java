package io.github.resilienthttp.spring;

import java.util.function.Supplier;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Runs one step of applying a property to an SDK builder and turns the SDK's
 * {@link IllegalArgumentException} into Boot's {@link InvalidConfigurationPropertyValueException},
 * which the failure analyzer prints with the property's full name, its origin and the SDK's reason.
 */
final class PropertyCheck {
  private PropertyCheck() {}

  static <T> T check(String property, Object value, Supplier<T> step) {
    try {
      return step.get();
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(property, value, e.getMessage());
    }
  }

  static void run(String property, Object value, Runnable step) {
    check(property, value, () -> {
      step.run();
      return null;
    });
  }
}
