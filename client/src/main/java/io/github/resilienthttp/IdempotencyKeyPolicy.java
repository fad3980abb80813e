package io.github.resilienthttp;

import java.util.Objects;
import java.util.UUID;
import okhttp3.Request;

/**
 * When and how an operation's idempotency key is sent (IETF draft "The Idempotency-Key HTTP Header
 * Field", draft-ietf-httpapi-idempotency-key-header).
 *
 * <p>Every operation has exactly one key, fixed the first time it is read or sent: the caller's
 * ({@link Operation#idempotencyKey(String)}), or the request's own key header, or a new random UUID
 * version 4 ({@link UUID#randomUUID()}, drawn from {@link java.security.SecureRandom}). The same key
 * is sent on every attempt of that operation; a new operation gets a new key. The key names a
 * business intent, not a network attempt.
 *
 * <p>Defaults: header {@code Idempotency-Key}, sent for methods that are not idempotent (POST, PATCH
 * and any other method outside RFC 9110 §9.2.2's GET, HEAD, OPTIONS, TRACE, PUT, DELETE), formatted
 * as a bare token ({@code Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324}), which is what most
 * payment APIs accept. The draft itself specifies a structured-field string
 * ({@code Idempotency-Key: "8e03978e-..."}): choose {@link Format#STRUCTURED_STRING} for such servers.
 *
 * <p>Immutable and thread-safe.
 */
public final class IdempotencyKeyPolicy {

  /** The longest key accepted, in characters. */
  public static final int MAX_KEY_LENGTH = 255;

  /** How the key is written in the header. */
  public enum Format {
    /** The key as a bare token: {@code Idempotency-Key: abc}. The default. */
    TOKEN,
    /**
     * The key as an RFC 8941 structured-field string, as the IETF draft specifies:
     * {@code Idempotency-Key: "abc"} (with {@code "} and {@code \} escaped).
     */
    STRUCTURED_STRING
  }

  /** For which operations the key is sent. */
  public enum Send {
    /** Only when the method is not idempotent per RFC 9110 §9.2.2 (POST, PATCH, ...). The default. */
    FOR_NON_IDEMPOTENT_METHODS,
    /** For every operation. */
    ALWAYS,
    /** Never (an operation can still force it on with {@link Operation#sendIdempotencyKey(boolean)}). */
    NEVER
  }

  private static final IdempotencyKeyPolicy DEFAULTS = builder().build();

  private final String headerName;
  private final Format format;
  private final Send send;

  private IdempotencyKeyPolicy(Builder b) {
    this.headerName = b.headerName;
    this.format = b.format;
    this.send = b.send;
  }

  /**
   * Header {@code Idempotency-Key}, {@link Format#TOKEN}, {@link Send#FOR_NON_IDEMPOTENT_METHODS}.
   *
   * @return the default policy
   */
  public static IdempotencyKeyPolicy defaults() {
    return DEFAULTS;
  }

  /** {@return a builder starting from the defaults} */
  public static Builder builder() {
    return new Builder();
  }

  /** {@return a builder starting from this policy's settings} */
  public Builder toBuilder() {
    return new Builder().headerName(headerName).format(format).send(send);
  }

  /** {@return the name of the header that carries the key} */
  public String headerName() {
    return headerName;
  }

  /** {@return the key header's value format} */
  public Format format() {
    return format;
  }

  /** {@return which operations send their key by default} */
  public Send send() {
    return send;
  }

  /**
   * Whether an operation with this method sends its key, absent a per-operation override.
   *
   * @param method an HTTP method name
   * @return whether such an operation sends its key
   */
  public boolean sendsKeyFor(String method) {
    switch (send) {
      case ALWAYS:
        return true;
      case NEVER:
        return false;
      default:
        return !AttemptOutcome.isIdempotentMethod(method);
    }
  }

  /**
   * The header value that carries {@code key} in this policy's format.
   *
   * @param key a valid key
   * @return the header value
   */
  public String headerValue(String key) {
    if (format == Format.TOKEN) {
      return key;
    }
    StringBuilder sb = new StringBuilder(key.length() + 2).append('"');
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.append('"').toString();
  }

  /**
   * The key carried by a key header the caller put on a request: the header value itself, or, in
   * {@link Format#STRUCTURED_STRING} format, the string inside the quotes (with escaped quotes and
   * backslashes unescaped), so that {@link #headerValue(String)} gives the same header back.
   *
   * @param headerValue the header's value, may be {@code null}
   * @return the key, or {@code null} when {@code headerValue} is {@code null}
   */
  public String keyFromHeader(String headerValue) {
    if (headerValue == null || format != Format.STRUCTURED_STRING) {
      return headerValue;
    }
    int n = headerValue.length();
    if (n < 2 || headerValue.charAt(0) != '"' || headerValue.charAt(n - 1) != '"') {
      return headerValue;
    }
    StringBuilder key = new StringBuilder(n - 2);
    for (int i = 1; i < n - 1; i++) {
      char c = headerValue.charAt(i);
      if (c == '\\' && i + 1 < n - 1) {
        c = headerValue.charAt(++i);
      }
      key.append(c);
    }
    return key.toString();
  }

  /**
   * A new random key: a UUID version 4 from {@link java.security.SecureRandom}.
   *
   * @return a new key
   */
  public static String newKey() {
    return UUID.randomUUID().toString();
  }

  /**
   * Checks a caller-supplied key: 1 to 255 visible ASCII characters (0x21 to 0x7E), so that it can be
   * sent as a header in either format.
   *
   * @param key the key to check
   * @return {@code key}
   * @throws IllegalArgumentException naming the rule that {@code key} breaks
   */
  public static String validateKey(String key) {
    Objects.requireNonNull(key, "idempotency key");
    if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
      throw new IllegalArgumentException("idempotency key must be 1.." + MAX_KEY_LENGTH
          + " visible ASCII characters (0x21-0x7E) but its length was " + key.length());
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw new IllegalArgumentException(String.format(
            "idempotency key must be 1..%d visible ASCII characters (0x21-0x7E) but the character at"
                + " index %d was U+%04X", MAX_KEY_LENGTH, i, (int) c));
      }
    }
    return key;
  }

  /**
   * The start of a key, for logs: its first 8 characters, and never more than half of it, so that a
   * short key is not logged whole either. Enough to correlate logs, too little to reuse the key.
   *
   * @param key a key
   * @return at most 8 characters and at most half of the key
   */
  public static String shorten(String key) {
    if (key == null) {
      return "null";
    }
    return key.substring(0, Math.min(8, key.length() / 2));
  }

  @Override
  public String toString() {
    return "IdempotencyKeyPolicy{header=" + headerName + ", format=" + format + ", send=" + send + "}";
  }

  /** Builds an {@link IdempotencyKeyPolicy}. Not thread-safe. */
  public static final class Builder {
    private String headerName = "Idempotency-Key";
    private Format format = Format.TOKEN;
    private Send send = Send.FOR_NON_IDEMPOTENT_METHODS;

    private Builder() {}

    /**
     * The header name; an HTTP token. Default {@code Idempotency-Key}.
     *
     * @param headerName the header name
     * @return this builder
     */
    public Builder headerName(String headerName) {
      this.headerName = Objects.requireNonNull(headerName, "headerName");
      return this;
    }

    /**
     * Default {@link Format#TOKEN}.
     *
     * @param format the value format
     * @return this builder
     */
    public Builder format(Format format) {
      this.format = Objects.requireNonNull(format, "format");
      return this;
    }

    /**
     * Default {@link Send#FOR_NON_IDEMPOTENT_METHODS}.
     *
     * @param send which operations send their key
     * @return this builder
     */
    public Builder send(Send send) {
      this.send = Objects.requireNonNull(send, "send");
      return this;
    }

    /**
     * Builds the policy.
     *
     * @return the policy
     * @throws IllegalArgumentException when the header name is empty, not an HTTP token (RFC 9110
     *     §5.6.2), or a header with its own meaning (Authorization, Content-Length, Host, ...)
     */
    public IdempotencyKeyPolicy build() {
      if (headerName.isEmpty() || !isToken(headerName)) {
        throw new IllegalArgumentException(
            "headerName must be an HTTP token (RFC 9110 §5.6.2) but was '" + headerName + "'");
      }
      for (String reserved : RESERVED_HEADERS) {
        if (reserved.equalsIgnoreCase(headerName)) {
          throw new IllegalArgumentException("headerName must not be a header with its own meaning"
              + " in HTTP (" + String.join(", ", RESERVED_HEADERS) + ") but was '" + headerName + "'");
        }
      }
      return new IdempotencyKeyPolicy(this);
    }

    /** Headers that carry framing, routing or credentials: never a key's header. */
    private static final java.util.List<String> RESERVED_HEADERS = java.util.List.of(
        "Authorization", "Connection", "Content-Length", "Content-Type", "Cookie", "Expect", "Host",
        "Proxy-Authorization", "TE", "Transfer-Encoding", "Upgrade");

    static boolean isToken(String s) {
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        boolean ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
            || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
        if (!ok) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * The request with {@code key} in this policy's key header, or the request itself when it already
   * carries that header (a caller's own key is never replaced).
   *
   * @param request the request
   * @param key a valid key (see {@link #validateKey(String)})
   * @return the request carrying a key
   */
  public Request withKey(Request request, String key) {
    if (request.header(headerName) != null) {
      return request;
    }
    // addHeader, not header: the header is known to be absent, so nothing needs removing.
    return request.newBuilder().addHeader(headerName, headerValue(key)).build();
  }
}
