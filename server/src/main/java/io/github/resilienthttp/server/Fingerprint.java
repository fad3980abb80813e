package io.github.resilienthttp.server;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * Which parts of a request must be equal for a retry to count as the same request: a SHA-256 digest
 * over the chosen parts, each length-prefixed (so {@code "ab"+"c"} and {@code "a"+"bc"} differ). A key
 * reused with a different digest is refused with {@code 422} (IETF draft, "Error Scenarios").
 *
 * <p>Default {@link #defaults()}: method, path, query and body. Name headers with {@link #withHeaders}
 * when they change the meaning of the request (e.g. {@code X-Account}); leave out parts a client may
 * legitimately vary between retries. Immutable and thread-safe.
 */
public final class Fingerprint {
  /** A part of the request. */
  public enum Part {
    /** The method. */
    METHOD,
    /** The path. */
    PATH,
    /** The raw query, exactly as sent. */
    QUERY,
    /** The body's bytes. */
    BODY
  }

  private static final Fingerprint DEFAULTS = new Fingerprint(EnumSet.allOf(Part.class), List.of());

  private final Set<Part> parts;
  private final List<String> headers;

  private Fingerprint(Set<Part> parts, List<String> headers) {
    this.parts = parts;
    this.headers = headers;
  }

  /** {@return method, path, query and body} */
  public static Fingerprint defaults() {
    return DEFAULTS;
  }

  /**
   * The given parts only.
   *
   * @param first a part
   * @param more more parts
   * @return the fingerprint
   */
  public static Fingerprint of(Part first, Part... more) {
    return new Fingerprint(EnumSet.of(first, more), List.of());
  }

  /**
   * This fingerprint plus the values of the named headers (absent and empty differ).
   *
   * @param names header names, any case
   * @return the new fingerprint
   */
  public Fingerprint withHeaders(String... names) {
    List<String> all = new java.util.ArrayList<>(headers);
    for (String n : names) {
      if (Objects.requireNonNull(n, "header name").isBlank()) throw new IllegalArgumentException("header name: blank");
      all.add(n.toLowerCase(Locale.ROOT));
    }
    return new Fingerprint(parts, List.copyOf(all));
  }

  /**
   * The digest of a request.
   *
   * @param request the request
   * @return {@code sha256:} and 64 hex digits
   */
  public String of(IdempotentRequest request) {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JDK", e);
    }
    for (Part p : Part.values()) {
      if (!parts.contains(p)) {
        add(md, null);
        continue;
      }
      switch (p) {
        case METHOD -> add(md, text(request.method()));
        case PATH -> add(md, text(request.path()));
        case QUERY -> add(md, request.query() == null ? null : text(request.query()));
        case BODY -> add(md, request.body());
        default -> throw new IllegalStateException(p.name());
      }
    }
    for (String h : headers) {
      List<String> values = request.headers().get(h);
      add(md, values == null ? null : text(String.join("\n", values)));
    }
    return "sha256:" + HexFormat.of().formatHex(md.digest());
  }

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void add(MessageDigest md, byte[] bytes) {
    md.update(ByteBuffer.allocate(8).putLong(bytes == null ? -1 : bytes.length).array());
    if (bytes != null) md.update(bytes);
  }

  @Override
  public String toString() {
    return "Fingerprint{" + parts + (headers.isEmpty() ? "" : " + headers " + headers) + "}";
  }
}
