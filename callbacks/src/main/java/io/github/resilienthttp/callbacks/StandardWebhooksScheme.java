package io.github.resilienthttp.callbacks;

import io.github.resilienthttp.callbacks.internal.Hmac;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.SignatureException;
import java.security.spec.X509EncodedKeySpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
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
 * {@code v1} signature matches under any secret. The asymmetric {@code v1a} signatures (Ed25519,
 * RFC 8032, over the same {@code id.timestamp.body}) are verified with the JDK's own Ed25519 (Java 15+,
 * JEP 339) under the {@code whpk_} public keys of {@link #ofPublicKeys(String...)} or
 * {@link #withPublicKeys(String...)}, which need no shared secret: the sender alone can sign. Other
 * versions are ignored. The event ID is the signed {@code webhook-id}; the timestamp must be whole
 * seconds from 1970 to 9999 (else {@link MalformedCallbackException}).
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

  private static final String PUBLIC_PREFIX = "whpk_";
  /** The DER prefix of an X.509 SubjectPublicKeyInfo for Ed25519 (RFC 8410 §4), before the key. */
  private static final byte[] ED25519_SPKI_PREFIX = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65,
      0x70, 0x03, 0x21, 0x00};

  private final List<byte[]> keys;
  private final List<PublicKey> publicKeys;

  private StandardWebhooksScheme(List<byte[]> keys, List<PublicKey> publicKeys) {
    this.keys = keys;
    this.publicKeys = publicKeys;
  }

  /**
   * A scheme that accepts {@code v1a} (Ed25519) signatures under any of {@code publicKeys}, and no
   * {@code v1} ones.
   *
   * @param publicKeys one or more {@code whpk_…} keys (base64 of the 32-byte Ed25519 public key; the
   *     prefix may be omitted), the current one first
   * @return the scheme
   * @throws IllegalArgumentException when no key is given, or one is not base64 of 32 bytes (the
   *     message names the key's position)
   */
  public static StandardWebhooksScheme ofPublicKeys(String... publicKeys) {
    return new StandardWebhooksScheme(List.of(), decodePublicKeys(publicKeys));
  }

  /**
   * This scheme, also accepting {@code v1a} (Ed25519) signatures under {@code publicKeys} (a sender
   * moving from secrets to key pairs signs with both for a while).
   *
   * @param publicKeys one or more {@code whpk_…} keys
   * @return the scheme
   * @throws IllegalArgumentException as {@link #ofPublicKeys(String...)}
   */
  public StandardWebhooksScheme withPublicKeys(String... publicKeys) {
    return new StandardWebhooksScheme(keys, decodePublicKeys(publicKeys));
  }

  /** Base64 after an optional {@code prefix}; the message names the position, never the value. */
  private static byte[] decodePrefixed(String value, String prefix, String field) {
    String s = Objects.requireNonNull(value, field);
    try {
      return Base64.getDecoder().decode(s.startsWith(prefix) ? s.substring(prefix.length()) : s);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(field + ": not base64 after the " + prefix
          + " prefix (value not shown)");
    }
  }

  private static List<PublicKey> decodePublicKeys(String... publicKeys) {
    Objects.requireNonNull(publicKeys, "publicKeys");
    if (publicKeys.length == 0) {
      throw new IllegalArgumentException("publicKeys: at least one is required");
    }
    List<PublicKey> out = new ArrayList<>();
    for (int i = 0; i < publicKeys.length; i++) {
      byte[] raw = decodePrefixed(publicKeys[i], PUBLIC_PREFIX, "publicKeys[" + i + "]");
      if (raw.length != 32) {
        throw new IllegalArgumentException("publicKeys[" + i + "]: decodes to " + raw.length
            + " bytes, not the 32 of an Ed25519 public key");
      }
      byte[] der = Arrays.copyOf(ED25519_SPKI_PREFIX, ED25519_SPKI_PREFIX.length + 32);
      System.arraycopy(raw, 0, der, ED25519_SPKI_PREFIX.length, 32);
      try {
        out.add(KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der)));
      } catch (GeneralSecurityException e) {
        throw new IllegalArgumentException("publicKeys[" + i + "]: not an Ed25519 public key", e);
      }
    }
    return List.copyOf(out);
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
      byte[] key = decodePrefixed(secrets[i], PREFIX, "secrets[" + i + "]");
      if (key.length < MIN_KEY_BYTES) {
        throw new IllegalArgumentException("secrets[" + i + "]: decodes to " + key.length
            + " bytes, fewer than " + MIN_KEY_BYTES + " (value not shown)");
      }
      keys.add(key);
    }
    return new StandardWebhooksScheme(List.copyOf(keys), List.of());
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
    Instant timestamp = SignedTimestamps.checked(NAME, TIMESTAMP, seconds);
    List<String> sigHeaders = headers.all(SIGNATURE);
    if (sigHeaders.isEmpty()) throw new MalformedCallbackException(NAME, SIGNATURE, "is missing");
    List<byte[]> candidates = new ArrayList<>();
    List<byte[]> asymmetric = new ArrayList<>();
    int entries = 0;
    for (String value : sigHeaders) {
      for (String entry : value.trim().split(" +")) {
        int comma = entry.indexOf(',');
        if (comma <= 0) continue;
        entries++;
        String version = entry.substring(0, comma);
        if (version.equals("v1")) {
          candidates.add(base64OrNull(entry.substring(comma + 1)));
        } else if (version.equals("v1a")) {
          asymmetric.add(base64OrNull(entry.substring(comma + 1)));
        }
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
          return new VerifiedCallback(NAME, id, timestamp, body, headers);
        }
      }
    }
    for (PublicKey key : publicKeys) {
      for (byte[] candidate : asymmetric) {
        if (ed25519Verifies(key, prefix, body, candidate)) {
          return new VerifiedCallback(NAME, id, timestamp, body, headers);
        }
      }
    }
    throw new SignatureMismatchException(NAME, candidates.size() + asymmetric.size(),
        keys.size() + publicKeys.size());
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

  private static boolean ed25519Verifies(PublicKey key, byte[] prefix, byte[] body,
      byte[] signature) {
    if (signature == null || signature.length != 64) {
      return false;
    }
    try {
      Signature verifier = Signature.getInstance("Ed25519");
      verifier.initVerify(key);
      verifier.update(prefix);
      verifier.update(body);
      return verifier.verify(signature);
    } catch (SignatureException e) {
      return false; // a malformed signature (RFC 8032 §5.1.7) is one that does not match
    } catch (GeneralSecurityException e) {
      // Ed25519 is in every Java SE 15+ runtime (JEP 339); the key came from its own KeyFactory.
      throw new IllegalStateException("Ed25519 is not available", e);
    }
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
    return "StandardWebhooksScheme{secrets=" + keys.size()
        + (publicKeys.isEmpty() ? "" : ", publicKeys=" + publicKeys.size()) + "}";
  }
}
