package io.github.resilienthttp.callbacks;

import io.github.resilienthttp.callbacks.internal.Hmac;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Standard Webhooks v1 (standardwebhooks.com, the symmetric scheme also used by Svix): headers
 * {@code webhook-id}, {@code webhook-timestamp} (Unix seconds) and {@code webhook-signature}, a
 * space-separated list of {@code v1,<base64 HMAC-SHA256>} over {@code id.timestamp.body}.
 *
 * <p>Secrets are {@code whsec_} followed by base64 (the prefix may be omitted); at least 16 bytes after
 * decoding. Several secrets may be given so a secret can rotate: a delivery is authentic when any
 * {@code v1} signature matches under any secret. Signatures of other versions ({@code v1a}, asymmetric)
 * are ignored. The event ID is the signed {@code webhook-id}.
 *
 * <p>Immutable and thread-safe. {@link #toString()} never shows a secret.
 */
public final class StandardWebhooksScheme implements SignatureScheme {
  /** The scheme's name in messages. */
  public static final String NAME = "standard-webhooks";
  static final String ID = "webhook-id";
  static final String TIMESTAMP = "webhook-timestamp";
  static final String SIGNATURE = "webhook-signature";
  private static final String PREFIX = "whsec_";
  private static final int MIN_KEY_BYTES = 16;

  private final List<byte[]> keys;

  private StandardWebhooksScheme(List<byte[]> keys) {
    this.keys = keys;
  }

  /**
   * A scheme that accepts signatures under any of {@code secrets}; the first signs ({@link #sign}).
   *
   * @param secrets one or more {@code whsec_…} secrets, the current one first
   * @return the scheme
   * @throws IllegalArgumentException when no secret is given, or one is not base64 or decodes to fewer
   *     than 16 bytes (the message names the secret's position, not its value)
   */
  public static StandardWebhooksScheme of(String... secrets) {
    Objects.requireNonNull(secrets, "secrets");
    if (secrets.length == 0) throw new IllegalArgumentException("secrets: at least one is required");
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < secrets.length; i++) {
      String s = Objects.requireNonNull(secrets[i], "secrets[" + i + "]");
      String b64 = s.startsWith(PREFIX) ? s.substring(PREFIX.length()) : s;
      byte[] key;
      try {
        key = Base64.getDecoder().decode(b64);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "secrets[" + i + "]: not base64 after the whsec_ prefix (value not shown)");
      }
      if (key.length < MIN_KEY_BYTES) {
        throw new IllegalArgumentException("secrets[" + i + "]: decodes to " + key.length
            + " bytes, fewer than " + MIN_KEY_BYTES + " (value not shown)");
      }
      keys.add(key);
    }
    return new StandardWebhooksScheme(List.copyOf(keys));
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public VerifiedCallback authenticate(CallbackHeaders headers, byte[] body)
      throws MalformedCallbackException, SignatureMismatchException {
    String id = single(headers, ID);
    if (id.isEmpty()) throw new MalformedCallbackException(NAME, ID, "is empty");
    String ts = single(headers, TIMESTAMP);
    long seconds;
    try {
      seconds = Long.parseLong(ts.trim());
    } catch (NumberFormatException e) {
      throw new MalformedCallbackException(NAME, TIMESTAMP, "is not an integer number of seconds");
    }
    List<String> sigHeaders = headers.all(SIGNATURE);
    if (sigHeaders.isEmpty()) throw new MalformedCallbackException(NAME, SIGNATURE, "is missing");
    List<byte[]> candidates = new ArrayList<>();
    int entries = 0;
    for (String value : sigHeaders) {
      for (String entry : value.trim().split(" +")) {
        int comma = entry.indexOf(',');
        if (comma <= 0) continue;
        entries++;
        if (!entry.substring(0, comma).equals("v1")) continue;
        candidates.add(base64OrNull(entry.substring(comma + 1)));
      }
    }
    if (entries == 0) {
      throw new MalformedCallbackException(NAME, SIGNATURE, "has no version,signature entry");
    }
    byte[] prefix = (id + "." + ts.trim() + ".").getBytes(StandardCharsets.UTF_8);
    for (byte[] key : keys) {
      byte[] expected = Hmac.sha256(key, prefix, body);
      for (byte[] candidate : candidates) {
        if (Hmac.matches(expected, candidate)) {
          return new VerifiedCallback(NAME, id, Instant.ofEpochSecond(seconds), body, headers);
        }
      }
    }
    throw new SignatureMismatchException(NAME, candidates.size(), keys.size());
  }

  /**
   * The three headers a sender adds, signed under every secret of this scheme (as a sender does while
   * rotating), for senders and tests.
   *
   * @param eventId the {@code webhook-id}
   * @param timestamp the {@code webhook-timestamp} (seconds are kept)
   * @param body the raw body bytes
   * @return {@code webhook-id}, {@code webhook-timestamp} and {@code webhook-signature}
   */
  public Map<String, String> sign(String eventId, Instant timestamp, byte[] body) {
    String ts = Long.toString(timestamp.getEpochSecond());
    byte[] prefix = (eventId + "." + ts + ".").getBytes(StandardCharsets.UTF_8);
    StringBuilder sig = new StringBuilder();
    for (byte[] key : keys) {
      if (sig.length() > 0) sig.append(' ');
      sig.append("v1,").append(Base64.getEncoder().encodeToString(Hmac.sha256(key, prefix, body)));
    }
    Map<String, String> out = new LinkedHashMap<>();
    out.put(ID, eventId);
    out.put(TIMESTAMP, ts);
    out.put(SIGNATURE, sig.toString());
    return out;
  }

  private static String single(CallbackHeaders headers, String name) throws MalformedCallbackException {
    List<String> values = headers.all(name);
    if (values.isEmpty()) throw new MalformedCallbackException(NAME, name, "is missing");
    if (values.size() > 1) throw new MalformedCallbackException(NAME, name, "is repeated");
    return values.get(0);
  }

  private static byte[] base64OrNull(String text) {
    try {
      return Base64.getDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  @Override
  public String toString() {
    return "StandardWebhooksScheme{secrets=" + keys.size() + "}";
  }
}
