package io.github.resilienthttp.callbacks;

/**
 * How one sender signs its deliveries: the extension point for schemes beyond
 * {@link StandardWebhooksScheme} and {@link StripeScheme}.
 *
 * <p>An implementation reads its headers, checks the signature over the raw body with a constant-time
 * comparison ({@link java.security.MessageDigest#isEqual(byte[], byte[])}), and returns what was signed.
 * It does <em>not</em> check the timestamp against a clock: {@link CallbackVerifier} does that, after
 * the signature, the same way for every scheme. Exception messages must not contain a secret or a
 * signature value.
 *
 * <p>Implementations must be immutable and thread-safe.
 */
public interface SignatureScheme {

  /** {@return a short name for messages and {@link VerifiedCallback#scheme()}, e.g. {@code stripe}} */
  String name();

  /**
   * Checks the delivery's signature.
   *
   * @param headers the delivery's headers
   * @param body the raw body bytes, exactly as received (not re-encoded)
   * @return the verified delivery, with the signed timestamp and, when signed, the event ID
   * @throws MalformedCallbackException when a signature header is missing or cannot be parsed
   * @throws SignatureMismatchException when no signature matches under any secret
   */
  VerifiedCallback authenticate(CallbackHeaders headers, byte[] body)
      throws MalformedCallbackException, SignatureMismatchException;
}
