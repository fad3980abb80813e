package io.github.resilienthttp.internal.okhttp;

import java.io.IOException;
import java.util.Objects;
import java.util.Set;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.reflect.KClass;
import okhttp3.HttpUrl;
import okhttp3.Request;

/**
 * The one origin rule for every call the SDK makes on the caller's behalf (polls, the result fetch,
 * the server-side cancel, the outcome query, a resumed wait), applied to every hop of such a call,
 * redirects included, by {@link NetworkAttemptTracker}, the SDK's first network interceptor, before
 * any of the caller's network interceptors add credentials. A hop to another origin (scheme, host, port) than the call's
 * {@link FollowUp#origin() origin} is refused with {@link OtherOriginException} before anything is
 * written, unless the call allows other origins; then the headers carried from the submit are removed
 * from that hop. Calls without a {@link FollowUp} tag (the caller's own) pass untouched.
 *
 * <p>Checking each hop here, not the URL the server named, is what makes the rule hold through
 * redirects: OkHttp follows a {@code 301/302/303/307/308} inside the call, and the application and
 * network interceptors add {@code Authorization} / API keys again on every call. Stateless and
 * thread-safe. Not API.
 *
 * <p>The tracker applies it ({@link #hop(Request)}) as its first step rather than a separate
 * interceptor: each network interceptor is one more {@code RealInterceptorChain} per network request.
 */
public final class OriginGuard {
  /**
   * The type of {@link FollowUp} tags, made once: OkHttp 5's {@code Request.tag(Class)} makes a
   * new {@code KClass} on every lookup.
   */
  private static final KClass<FollowUp> FOLLOW_UP = JvmClassMappingKt.getKotlinClass(FollowUp.class);

  /** The reason of the typed failure a refused hop ends in. */
  public static final String REASON = "other-origin";

  /**
   * The tag of a follow-up call's request.
   *
   * @param origin the origin every hop must stay on: the submit's original request URL (before any
   *     redirect), or a resumed token's (signed) URL
   * @param allowOtherOrigins whether a hop elsewhere may go (without the carried headers)
   * @param carriedHeaders the names of the headers the SDK put on the request from the submit (or
   *     the policy): never sent to another origin
   */
  public record FollowUp(HttpUrl origin, boolean allowOtherOrigins, Set<String> carriedHeaders) {
    /** Validates. */
    public FollowUp {
      Objects.requireNonNull(origin, "origin");
      carriedHeaders = Set.copyOf(carriedHeaders);
    }
  }

  /** A hop to another origin, refused before it was sent. */
  public static final class OtherOriginException extends IOException {
    private static final long serialVersionUID = 1L;

    OtherOriginException(HttpUrl hop, HttpUrl origin) {
      super("refused a request to another origin (" + originOf(hop) + ", the operation's is "
          + originOf(origin) + "): nothing was sent there; AsyncOperationPolicy.allowOtherOrigins"
          + "(true) to allow it (without the submit's credentials)");
    }
  }

  /**
   * Whether {@code url} is on the origin (scheme, host, port) of {@code origin} (RFC 6454 §4).
   *
   * @param url the URL
   * @param origin the origin's URL
   * @return whether both are on one origin
   */
  public static boolean sameOrigin(HttpUrl url, HttpUrl origin) {
    return url.scheme().equals(origin.scheme()) && url.host().equals(origin.host())
        && url.port() == origin.port();
  }

  /**
   * {@code scheme://host:port} of {@code url}, for messages (no path, no query).
   *
   * @param url the URL
   * @return its origin
   */
  public static String originOf(HttpUrl url) {
    return url.scheme() + "://" + url.host() + ":" + url.port();
  }

  /**
   * Whether {@code failure} (or one of its causes) is a refused hop.
   *
   * @param failure a failure
   * @return whether it comes from this guard
   */
  public static boolean refused(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof OtherOriginException) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /**
   * The origin rule for one hop: {@code request} itself when it is not a follow-up or stays on its
   * origin, a copy without the carried headers when it may go elsewhere.
   *
   * @param request the hop about to be written
   * @return the request to send
   * @throws OtherOriginException when the hop goes to another origin and that is not allowed
   */
  static Request hop(Request request) throws OtherOriginException {
    FollowUp followUp = request.tag(FOLLOW_UP);
    if (followUp == null || sameOrigin(request.url(), followUp.origin())) {
      return request;
    }
    if (!followUp.allowOtherOrigins()) {
      throw new OtherOriginException(request.url(), followUp.origin());
    }
    Request.Builder stripped = request.newBuilder();
    followUp.carriedHeaders().forEach(stripped::removeHeader);
    return stripped.build();
  }
}
