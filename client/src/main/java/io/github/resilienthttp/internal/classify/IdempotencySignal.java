package io.github.resilienthttp.internal.classify;

import java.io.IOException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.MediaType;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Whether an error answer says it is about the idempotency key, so that a 409 is taken as "the
 * key's first request is still in progress" and a 422 (or Stripe's 400) as "key reused with
 * another request" only when the server says so, not for every conflict or validation error of a
 * healthy API.
 *
 * <p>The signal is a JSON body (any {@code json} or {@code +json} media type, e.g. RFC 9457
 * {@code application/problem+json}) with a {@code "type"} or {@code "code"} string member whose
 * value contains {@code idempotency} (case-insensitive): the IETF draft "The Idempotency-Key HTTP
 * Header Field" uses a problem {@code type} link for its 409 and 422 answers (it registers no type
 * URI, so any type naming idempotency counts), Stripe answers {@code "code":
 * "idempotency_key_in_use"} (409) and {@code "type": "idempotency_error"} (400).
 *
 * <p>Only the first {@link #PEEK_LIMIT} bytes are read, with {@link Response#peekBody(long)}: the
 * caller still gets the whole body. There is no JSON parser in the core (Jackson is optional), so
 * the members are found with a small pattern over the text; nesting does not matter (Stripe's
 * members are inside {@code "error"}), escapes in the value do (such values never match). Reading
 * fails quietly: no signal. Stateless. Not API.
 */
public final class IdempotencySignal {
  /** Bytes of the body looked at, at most. */
  public static final long PEEK_LIMIT = 8 * 1024;

  private static final Pattern MEMBER =
      Pattern.compile("\"(type|code)\"\\s*:\\s*\"([^\"\\\\]{0,256})\"");

  private IdempotencySignal() {}

  /** Whether the answer's body names the idempotency key in a {@code type} or {@code code}. */
  public static boolean aboutKey(Response response) {
    return find(response, null);
  }

  /** Whether the answer's body has a {@code type} or {@code code} member equal to {@code value}. */
  public static boolean hasMember(Response response, String value) {
    return find(response, value);
  }

  private static boolean find(Response response, String exact) {
    String text = peekJson(response);
    if (text == null) {
      return false;
    }
    Matcher m = MEMBER.matcher(text);
    while (m.find()) {
      String v = m.group(2);
      if (exact != null ? v.equalsIgnoreCase(exact)
          : v.toLowerCase(Locale.ROOT).contains("idempotency")) {
        return true;
      }
    }
    return false;
  }

  private static String peekJson(Response response) {
    ResponseBody body = response.body();
    MediaType type = body.contentType();
    if (type == null) {
      String header = response.header("Content-Type");
      type = header == null ? null : MediaType.parse(header);
    }
    if (type == null || !type.subtype().toLowerCase(Locale.ROOT).contains("json")) {
      return null;
    }
    try {
      return response.peekBody(PEEK_LIMIT).string();
    } catch (IOException | RuntimeException unreadable) {
      return null;
    }
  }
}
