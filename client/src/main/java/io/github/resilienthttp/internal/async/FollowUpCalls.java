package io.github.resilienthttp.internal.async;

import io.github.resilienthttp.internal.okhttp.OriginGuard;
import java.util.LinkedHashSet;
import java.util.Set;
import okhttp3.Headers;
import okhttp3.HttpUrl;
import okhttp3.Request;

/**
 * Builds the requests the SDK sends on the caller's behalf after a submit (polls, the result fetch,
 * the server-side cancel): tagged for {@link OriginGuard} with the submit's original origin, and
 * carrying the headers the policy names from the submit (by default {@code Authorization}) plus the
 * policy's own follow-up headers, only when the request goes to that origin. Immutable and
 * thread-safe. Not API.
 *
 * @param origin the origin: the submit's original request URL, or a resumed token's URL
 * @param allowOtherOrigins whether a hop to another origin may go (without the carried headers)
 * @param carried the headers to carry (from the submit, then the policy's)
 */
public record FollowUpCalls(HttpUrl origin, boolean allowOtherOrigins, Headers carried) {

  /**
   * The follow-up calls of a wait.
   *
   * @param origin the submit's original URL (before redirects) or the resumed token's
   * @param allowOtherOrigins the policy's origin rule
   * @param submit the submit's request, or {@code null} for a resumed wait (nothing to carry from)
   * @param carriedNames the names of the submit's headers to carry (case-insensitive)
   * @param extra the policy's headers for every follow-up call (after the carried ones; they win)
   * @return the follow-up calls
   */
  public static FollowUpCalls of(HttpUrl origin, boolean allowOtherOrigins, Request submit,
      Set<String> carriedNames, Headers extra) {
    Headers.Builder h = new Headers.Builder();
    if (submit != null) {
      for (String name : carriedNames) {
        for (String value : submit.headers(name)) {
          h.add(name, value);
        }
      }
    }
    for (String name : extra.names()) {
      h.removeAll(name);
      for (String value : extra.values(name)) {
        h.add(name, value);
      }
    }
    return new FollowUpCalls(origin, allowOtherOrigins, h.build());
  }

  /**
   * {@code builder} (whose URL is set) as a follow-up call: the carried headers when its URL is on
   * the origin, and the guard's tag.
   *
   * @param builder the request, URL and method set
   * @return the request
   */
  public Request request(Request.Builder builder) {
    Request bare = builder.build();
    Request.Builder b = bare.newBuilder();
    if (OriginGuard.sameOrigin(bare.url(), origin)) {
      for (String name : carried.names()) {
        b.removeHeader(name);
        for (String value : carried.values(name)) {
          b.addHeader(name, value);
        }
      }
    }
    Set<String> names = new LinkedHashSet<>(carried.names());
    return b.tag(OriginGuard.FollowUp.class,
        new OriginGuard.FollowUp(origin, allowOtherOrigins, names)).build();
  }

  /**
   * {@code request} tagged with its own URL as the origin (for a request the caller wrote, such as
   * an outcome query): its redirects may not leave that origin. Nothing is carried.
   *
   * @param request the caller's request
   * @return the tagged request
   */
  public static Request sameOriginOnly(Request request) {
    return request.newBuilder().tag(OriginGuard.FollowUp.class,
        new OriginGuard.FollowUp(request.url(), false, Set.of())).build();
  }
}
