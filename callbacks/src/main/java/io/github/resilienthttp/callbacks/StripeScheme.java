package io.github.resilienthttp.callbacks;

import io.github.resilienthttp.callbacks.internal.Hmac;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Stripe's webhook signatures: header {@code Stripe-Signature: t=<Unix seconds>,v1=<hex>[,v1=<hex>…]},
 * where each {@code v1} is the lower-case hex HMAC-SHA256 of {@code t.body} keyed with the endpoint's
 * signing secret ({@code whsec_…}, used as its UTF-8 bytes, prefix included). Several {@code v1}
 * values appear while Stripe rolls a secret; {@code v0} (test-mode legacy) and unknown keys are ignored.
 *
 * <p>Stripe does not sign an event ID in a header; it is the {@code id} of the JSON body, so a
 * {@link CallbackReceiver} for Stripe needs {@link CallbackReceiver.Builder#eventId} (this module has no
 * JSON parser).
 *
 * <p>Immutable and thread-safe. {@link #toString()} never shows a secret.
 */
public final class StripeScheme implements SignatureScheme {
  /** The scheme's name in messages. */
  public static final String NAME = "stripe";
  static final String HEADER = "Stripe-Signature";

  private final List<byte[]> keys;

  private StripeScheme(List<byte[]> keys) {
    this.keys = keys;
  }

  /**
   * A scheme that accepts signatures under any of {@code secrets}; all of them sign ({@link #sign}).
   *
   * @param secrets one or more endpoint signing secrets, the current one first
   * @return the scheme
   * @throws IllegalArgumentException when no secret is given or one is empty
   */
  public static StripeScheme of(String... secrets) {
    Objects.requireNonNull(secrets, "secrets");
    if (secrets.length == 0) throw new IllegalArgumentException("secrets: at least one is required");
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < secrets.length; i++) {
      String s = Objects.requireNonNull(secrets[i], "secrets[" + i + "]");
      if (s.isEmpty()) throw new IllegalArgumentException("secrets[" + i + "]: is empty");
      keys.add(s.getBytes(StandardCharsets.UTF_8));
    }
    return new StripeScheme(List.copyOf(keys));
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public VerifiedCallback authenticate(CallbackHeaders headers, byte[] body)
      throws MalformedCallbackException, SignatureMismatchException {
    List<String> values = headers.all(HEADER);
    if (values.isEmpty()) throw new MalformedCallbackException(NAME, HEADER, "is missing");
    if (values.size() > 1) throw new MalformedCallbackException(NAME, HEADER, "is repeated");
    String t = null;
    List<byte[]> candidates = new ArrayList<>();
    for (String item : values.get(0).split(",")) {
      int eq = item.indexOf('=');
      if (eq <= 0) throw new MalformedCallbackException(NAME, HEADER, "has an item without key=value");
      String key = item.substring(0, eq).trim();
      String value = item.substring(eq + 1).trim();
      if (key.equals("t")) {
        if (t != null) throw new MalformedCallbackException(NAME, HEADER, "has more than one t");
        t = value;
      } else if (key.equals("v1")) {
        candidates.add(Hmac.unhex(value));
      }
    }
    if (t == null) throw new MalformedCallbackException(NAME, HEADER, "has no t (timestamp)");
    long seconds;
    try {
      seconds = Long.parseLong(t);
    } catch (NumberFormatException e) {
      throw new MalformedCallbackException(NAME, HEADER, "has a t that is not an integer");
    }
    Instant timestamp = SignedTimestamps.checked(NAME, HEADER, seconds);
    if (candidates.isEmpty()) throw new SignatureMismatchException(NAME, 0, keys.size());
    byte[] prefix = (t + ".").getBytes(StandardCharsets.UTF_8);
    for (byte[] key : keys) {
      byte[] expected = Hmac.sha256(key, prefix, body);
      for (byte[] candidate : candidates) {
        if (Hmac.matches(expected, candidate)) {
          return new VerifiedCallback(NAME, null, timestamp, body, headers);
        }
      }
    }
    throw new SignatureMismatchException(NAME, candidates.size(), keys.size());
  }

  /**
   * The {@code Stripe-Signature} header a sender adds, with one {@code v1} per secret.
   *
   * @param eventId ignored (Stripe signs no event ID header); present so that this method fits
   *     {@code CallbackSigner}
   * @param timestamp {@code t} (seconds are kept)
   * @param body the raw body bytes
   * @return {@code Stripe-Signature}
   */
  public Map<String, String> sign(String eventId, Instant timestamp, byte[] body) {
    String t = Long.toString(timestamp.getEpochSecond());
    byte[] prefix = (t + ".").getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder("t=").append(t);
    for (byte[] key : keys) sb.append(",v1=").append(Hmac.hex(Hmac.sha256(key, prefix, body)));
    return Map.of(HEADER, sb.toString());
  }

  @Override
  public String toString() {
    return "StripeScheme{secrets=" + keys.size() + "}";
  }
}
