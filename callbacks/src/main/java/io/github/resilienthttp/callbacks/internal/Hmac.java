package io.github.resilienthttp.callbacks.internal;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 (RFC 2104) over a prefix and the raw body, and a constant-time comparison. Not API.
 *
 * <p>Thread-safe: a {@link Mac} is created per call ({@code Mac} instances are not thread-safe, and
 * creating one costs about a microsecond).
 */
public final class Hmac {
  private Hmac() {}

  /**
   * HMAC-SHA256 of {@code prefix} followed by {@code body}, without concatenating them first.
   *
   * @param key the key bytes (never empty)
   * @param prefix the signed bytes before the body, e.g. {@code id.timestamp.}
   * @param body the raw body bytes
   * @return the 32-byte MAC
   */
  public static byte[] sha256(byte[] key, byte[] prefix, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update(prefix);
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      // Every Java SE runtime must provide HmacSHA256 (javax.crypto.Mac's Javadoc).
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }

  /**
   * Compares two MACs in time that depends on their lengths only ({@link MessageDigest#isEqual}).
   *
   * @param expected the MAC computed by the receiver
   * @param candidate the MAC sent with the delivery, or {@code null} when it did not decode
   * @return true when equal
   */
  public static boolean matches(byte[] expected, byte[] candidate) {
    return candidate != null && MessageDigest.isEqual(expected, candidate);
  }

  /**
   * Lower-case hex of bytes.
   *
   * @param bytes the bytes
   * @return two hex digits per byte
   */
  public static String hex(byte[] bytes) {
    StringBuilder sb = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) {
      sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return sb.toString();
  }

  /**
   * Parses hex (either case).
   *
   * @param hex the text
   * @return the bytes, or {@code null} when {@code hex} is not an even number of hex digits
   */
  public static byte[] unhex(String hex) {
    if ((hex.length() & 1) != 0) return null;
    byte[] out = new byte[hex.length() / 2];
    for (int i = 0; i < out.length; i++) {
      int hi = Character.digit(hex.charAt(2 * i), 16);
      int lo = Character.digit(hex.charAt(2 * i + 1), 16);
      if (hi < 0 || lo < 0) return null;
      out[i] = (byte) ((hi << 4) | lo);
    }
    return out;
  }
}
