package io.github.resilienthttp.server;

import java.util.Objects;
import java.util.Optional;

/**
 * Reads the {@code Idempotency-Key} request header value as the IETF draft "The Idempotency-Key HTTP
 * Header Field" defines it: an RFC 8941 Item Structured Header whose value is a String
 * ({@code "8e03978e-40d5-43e8-bc93-6894a57f9324"}: printable ASCII between double quotes, with
 * {@code \"} and {@code \\} as the only escapes). Parameters after the string ({@code ;a=1}) are
 * allowed by RFC 8941 and ignored.
 *
 * <p>{@link Format#STRING_OR_TOKEN} (the default) also accepts a bare key of visible ASCII without
 * quotes, commas or backslashes ({@code Idempotency-Key: 8e03978e-...}): what most payment APIs and
 * this SDK's client send by default. {@link Format#STRING} accepts the draft's form only.
 *
 * <p>A key is 1 to {@link #MAX_LENGTH} characters after unquoting (the draft sets no bound; the
 * SDK's client sends at most 255). Stateless and thread-safe.
 */
public final class IdempotencyKeyHeader {
  /** The longest key accepted, in characters after unquoting. */
  public static final int MAX_LENGTH = 255;

  /** Which spellings of the key are accepted. */
  public enum Format {
    /** Only the draft's structured-field String: {@code "abc"}. */
    STRING,
    /** The draft's String, or a bare key of visible ASCII: {@code abc}. The default. */
    STRING_OR_TOKEN
  }

  private IdempotencyKeyHeader() {}

  /**
   * Parses one header value.
   *
   * @param value the header's value as received (may have surrounding spaces), not null
   * @param format which spellings are accepted
   * @return the key, or empty with no reason when the value is not a key: see {@link #problem}
   */
  public static Optional<String> parse(String value, Format format) {
    return problem(value, format) == null ? Optional.of(unquote(value.strip())) : Optional.empty();
  }

  /**
   * Why a header value is not a key.
   *
   * @param value the header's value as received
   * @param format which spellings are accepted
   * @return a sentence naming the problem, or {@code null} when the value is a valid key
   */
  public static String problem(String value, Format format) {
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(format, "format");
    String v = value.strip();
    if (v.isEmpty()) return "the Idempotency-Key header is empty";
    if (v.charAt(0) == '"') {
      int end = closingQuote(v);
      if (end < 0) return "the Idempotency-Key string is not closed or has an invalid escape or character";
      String rest = v.substring(end + 1);
      if (!rest.isEmpty() && rest.charAt(0) != ';') {
        return "the Idempotency-Key header has text after its string (a list is not allowed)";
      }
      String key = unquote(v);
      if (key.isEmpty()) return "the Idempotency-Key string is empty";
      if (key.length() > MAX_LENGTH) return "the Idempotency-Key is longer than " + MAX_LENGTH + " characters";
      return null;
    }
    if (format == Format.STRING) {
      return "the Idempotency-Key must be a structured-field string (\"...\") per the IETF draft";
    }
    if (v.length() > MAX_LENGTH) return "the Idempotency-Key is longer than " + MAX_LENGTH + " characters";
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == ',') {
        return "the Idempotency-Key has a character outside visible ASCII (or a space, comma, quote or"
            + " backslash) at index " + i;
      }
    }
    return null;
  }

  /** The index of the closing quote of the sf-string starting at 0, or -1 when malformed. */
  private static int closingQuote(String v) {
    for (int i = 1; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '\\') {
        if (i + 1 >= v.length()) return -1;
        char n = v.charAt(i + 1);
        if (n != '"' && n != '\\') return -1;
        i++;
      } else if (c == '"') {
        return i;
      } else if (c < 0x20 || c > 0x7e) {
        return -1;
      }
    }
    return -1;
  }

  private static String unquote(String v) {
    if (v.isEmpty() || v.charAt(0) != '"') return v;
    StringBuilder sb = new StringBuilder();
    for (int i = 1; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '\\') {
        sb.append(v.charAt(++i));
      } else if (c == '"') {
        break;
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }
}
