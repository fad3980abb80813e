package io.github.resilienthttp.spring;

import io.github.resilienthttp.callbacks.VerifiedCallback;

/**
 * Where a verified delivery's event ID is, when the scheme does not carry it in a header: a bean of
 * this type is required for {@code scheme=stripe} (Stripe's ID is the JSON body's {@code "id"}), and
 * replaces the scheme's own ID for the others.
 */
@FunctionalInterface
public interface CallbackEventId {
  /**
   * The event ID of {@code callback}.
   *
   * @param callback the verified delivery
   * @return the ID (1 to 255 characters), or null when it has none (answered 400)
   */
  String of(VerifiedCallback callback);
}
