package io.github.resilienthttp.internal.guard;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Optional;
import okhttp3.Headers;

/**
 * What a response says of the client's remaining quota at the server: how many requests are left in
 * the current window and when it resets. Reads, in this order:
 *
 * <ol>
 *   <li>the IETF httpapi {@code RateLimit} field (draft-ietf-httpapi-ratelimit-headers, -07 and
 *       later): a structured-field list of quota items, {@code "default";r=50;t=30}, with {@code r}
 *       the remaining quota units and {@code t} the seconds until they reset; the item with the least
 *       {@code r} decides;
 *   <li>the earlier drafts' {@code RateLimit-Remaining} and {@code RateLimit-Reset} (seconds);
 *   <li>the common {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset}, whose reset is seconds
 *       from now or, when it is above {@value #EPOCH_SECONDS_THRESHOLD} (as GitHub's is), a Unix time
 *       in seconds.
 * </ol>
 *
 * <p>Server input is untrusted: malformed, negative or absurd values are ignored (the field as a
 * whole when it cannot be read), never thrown. A reset beyond {@link #MAX_RESET} is absurd for pacing
 * (an epoch in milliseconds read as seconds, a proxy's garbage) and ignored with its field, rather
 * than pausing a target for longer: one bad answer must not stop a target for a day. An
 * {@code X-RateLimit-Reset} above {@value #EPOCH_MILLIS_THRESHOLD} is a Unix time in milliseconds.
 * Not API.
 */
public final class RateLimitHeaders {
  /** Resets beyond this are ignored (with their field): an hour. */
  public static final Duration MAX_RESET = Duration.ofHours(1);
  /** An epoch reset above this is in milliseconds (2001-09-09 in milliseconds), not seconds. */
  static final long EPOCH_MILLIS_THRESHOLD = 1_000_000_000_000L;
  /** A reset above this many seconds is a Unix time (2001-09-09), not a delay. */
  static final long EPOCH_SECONDS_THRESHOLD = 1_000_000_000L;

  /** Requests left in the window, and the time until the window resets. */
  public record Quota(long remaining, Duration reset) {}

  private RateLimitHeaders() {}

  /**
   * Reads the quota of a response.
   *
   * @param headers the response's headers
   * @param now the wall clock, for a reset given as a Unix time
   * @return the quota, or empty when the response says nothing readable about one
   */
  public static Optional<Quota> read(Headers headers, Instant now) {
    Optional<Quota> sf = structured(headers.get("RateLimit"));
    if (sf.isPresent()) {
      return sf;
    }
    Optional<Quota> draft = pair(headers.get("RateLimit-Remaining"), headers.get("RateLimit-Reset"),
        now, false);
    if (draft.isPresent()) {
      return draft;
    }
    return pair(headers.get("X-RateLimit-Remaining"), headers.get("X-RateLimit-Reset"), now, true);
  }

  /** {@code "default";r=50;t=30, "daily";r=1000;t=3600}: the item with the least remaining. */
  private static Optional<Quota> structured(String field) {
    if (field == null || field.length() > 4096) {
      return Optional.empty();
    }
    Quota least = null;
    for (String item : field.split(",")) {
      Long r = null;
      Long t = null;
      String[] parts = item.split(";");
      for (int i = 1; i < parts.length; i++) {
        String p = parts[i].trim();
        int eq = p.indexOf('=');
        if (eq <= 0) {
          continue;
        }
        String name = p.substring(0, eq).trim().toLowerCase(Locale.ROOT);
        Long value = nonNegative(p.substring(eq + 1).trim());
        if ("r".equals(name)) {
          r = value;
        } else if ("t".equals(name)) {
          t = value;
        }
      }
      Duration reset = seconds(t == null ? 0 : t);
      if (r != null && reset != null) {
        Quota q = new Quota(r, reset);
        if (least == null || q.remaining() < least.remaining()) {
          least = q;
        }
      }
    }
    return Optional.ofNullable(least);
  }

  private static Optional<Quota> pair(String remaining, String reset, Instant now, boolean epochAllowed) {
    Long r = remaining == null ? null : nonNegative(remaining.trim());
    if (r == null) {
      return Optional.empty();
    }
    Long t = reset == null ? null : nonNegative(reset.trim());
    if (t == null) {
      return Optional.of(new Quota(r, Duration.ZERO));
    }
    Duration delay;
    if (epochAllowed && t > EPOCH_MILLIS_THRESHOLD) {
      delay = seconds(Math.max(0, (t - now.toEpochMilli()) / 1000));
    } else if (epochAllowed && t > EPOCH_SECONDS_THRESHOLD) {
      delay = seconds(Math.max(0, t - now.getEpochSecond()));
    } else {
      delay = seconds(t);
    }
    return delay == null ? Optional.empty() : Optional.of(new Quota(r, delay));
  }

  /** {@code s} seconds, or {@code null} when beyond {@link #MAX_RESET} (ignored). */
  private static Duration seconds(long s) {
    return s > MAX_RESET.toSeconds() ? null : Duration.ofSeconds(s);
  }

  /** A non-negative decimal integer of at most 18 digits, or null. */
  private static Long nonNegative(String s) {
    if (s.isEmpty() || s.length() > 18) {
      return null;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return null;
      }
    }
    return Long.parseLong(s);
  }
}
