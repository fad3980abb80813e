package io.github.resilienthttp.internal.async;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import okhttp3.HttpUrl;

/**
 * Signs and verifies resume tokens: HMAC-SHA256 (RFC 2104, FIPS 198-1) over the token's text, with
 * the keys the client was built with. The first key signs; every key verifies, so a key can be
 * rotated by adding the new one first and removing the old one once stored tokens have been
 * re-signed or have expired. Without configured keys, a client gets a random key of its own (tokens
 * resume in that process, and its {@code newBuilder()} clients, only).
 *
 * <p>Also holds the origins for which the client accepts unsigned tokens (written by a version before
 * signed tokens), the migration opt-in. Immutable and thread-safe; keys are copied and never
 * printed. Not API.
 */
public final class ResumeTokenSigner {
  /** The least key length: the HMAC-SHA256 output size (RFC 2104 §3). */
  public static final int MIN_KEY_BYTES = 32;
  private static final String ALGORITHM = "HmacSHA256";

  private final List<SecretKeySpec> keys;
  private final boolean configured;
  private final Set<String> unsignedOrigins;

  private ResumeTokenSigner(List<SecretKeySpec> keys, boolean configured,
      Set<String> unsignedOrigins) {
    this.keys = List.copyOf(keys);
    this.configured = configured;
    this.unsignedOrigins = Set.copyOf(unsignedOrigins);
  }

  /**
   * A signer with the given keys.
   *
   * @param keys the keys, the signing one first; each at least {@value #MIN_KEY_BYTES} bytes
   * @param unsignedOrigins origins ({@code scheme://host:port}) whose unsigned tokens are accepted
   * @return the signer
   * @throws IllegalArgumentException when there is no key or a key is too short
   */
  public static ResumeTokenSigner of(List<byte[]> keys, Set<String> unsignedOrigins) {
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("resumeTokenKey: at least one key");
    }
    List<SecretKeySpec> specs = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      byte[] k = Objects.requireNonNull(keys.get(i), "resumeTokenKey");
      if (k.length < MIN_KEY_BYTES) {
        throw new IllegalArgumentException("resumeTokenKey: key " + (i + 1) + " has " + k.length
            + " bytes; at least " + MIN_KEY_BYTES + " (256 bits) of random bytes");
      }
      specs.add(new SecretKeySpec(k.clone(), ALGORITHM));
    }
    return new ResumeTokenSigner(specs, true, unsignedOrigins);
  }

  /**
   * A signer with a random key of its own, made with {@code random}.
   *
   * @param random the source of the key
   * @param unsignedOrigins origins whose unsigned tokens are accepted
   * @return the signer
   */
  public static ResumeTokenSigner random(SecureRandom random, Set<String> unsignedOrigins) {
    byte[] k = new byte[MIN_KEY_BYTES];
    random.nextBytes(k);
    return new ResumeTokenSigner(List.of(new SecretKeySpec(k, ALGORITHM)), false,
        unsignedOrigins);
  }

  /** {@return whether the keys were configured (not a random key of this client's own)} */
  public boolean configured() {
    return configured;
  }

  /**
   * The signature of {@code signedText} with the first key.
   *
   * @param signedText the token text that the signature covers
   * @return the 32-byte signature
   */
  public byte[] sign(String signedText) {
    return mac(keys.get(0), signedText);
  }

  /**
   * Whether {@code signature} is the signature of {@code signedText} under any key, compared in
   * constant time.
   *
   * @param signedText the token text that the signature covers
   * @param signature the signature read from the token
   * @return whether one key verifies it
   */
  public boolean verifies(String signedText, byte[] signature) {
    boolean ok = false;
    for (SecretKeySpec key : keys) {
      ok |= MessageDigest.isEqual(mac(key, signedText), signature);
    }
    return ok;
  }

  /**
   * Whether an unsigned token on {@code url}'s origin is accepted (the migration opt-in).
   *
   * @param url one of the token's URLs
   * @return whether its origin is one whose unsigned tokens are accepted
   */
  public boolean acceptsUnsigned(HttpUrl url) {
    return unsignedOrigins.contains(url.scheme() + "://" + url.host() + ":" + url.port());
  }

  /** {@return the origins whose unsigned tokens are accepted} */
  public Set<String> unsignedOrigins() {
    return unsignedOrigins;
  }

  /**
   * This signer's keys with other unsigned origins (for the client builder's read-back).
   *
   * @param origins the origins
   * @return a signer with the same keys
   */
  public ResumeTokenSigner withUnsignedOrigins(Set<String> origins) {
    return new ResumeTokenSigner(keys, configured, origins);
  }

  private static byte[] mac(SecretKeySpec key, String text) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return mac.doFinal(text.getBytes(StandardCharsets.US_ASCII));
    } catch (GeneralSecurityException e) {
      // HmacSHA256 is a required JCA algorithm (every Java SE platform has it).
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }

  @Override
  public String toString() {
    return "ResumeTokenSigner{" + keys.size() + " key(s)" + (configured ? "" : ", random") + "}";
  }
}
