package io.github.resilienthttp.internal.okhttp;

import io.github.resilienthttp.internal.engine.Attempt;
import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * A network interceptor that sees every request OkHttp is about to write on a connection, including
 * OkHttp's own follow-ups (redirects, authentication). It is the first network interceptor: it
 * counts network requests per operation, so the SDK's report equals what the server saw (a request
 * that a user network interceptor then failed is counted too, though nothing was written), and notes
 * when the attempt failed after it but before anything was written (a user network interceptor
 * that throws: not sent, and not the server's doing). Whether bytes were written is the
 * {@link WireListener}'s to say. It also takes the idempotency key off a redirect's GET (see
 * {@link #withoutKeyOnRedirectedGet}). Not API.
 *
 * <p>It also stops the one silent repeat that {@code retryOnConnectionFailure(false)} does not stop:
 * OkHttp 5 re-sends a request at once, by itself, when the answer is {@code 503} with
 * {@code Retry-After: 0}. That repeat would be an attempt the SDK neither counts nor bounds, so for
 * operations run by the SDK this interceptor removes a zero {@code Retry-After} from 503 answers. The
 * SDK's own loop then retries after its backoff (a zero {@code Retry-After} never shortens it).
 *
 * <p>Its first step is {@link OriginGuard}'s rule ({@link OriginGuard#hop(Request)}): a follow-up
 * hop to another origin is refused before it is counted or seen by anything else, so the SDK's
 * clients need one network interceptor, not two (each is one more interceptor chain per network
 * request).
 */
public final class NetworkAttemptTracker implements Interceptor {
  @Override
  public Response intercept(Chain chain) throws IOException {
    // The origin rule first: a refused hop is not a network request of the operation.
    Request hop = OriginGuard.hop(chain.request());
    Attempt attempt = Attempt.of(chain.call());
    if (attempt == null) {
      // Not an SDK attempt: a pass-through call.
      return chain.proceed(hop);
    }
    attempt.networkRequestStarted();
    Request request = withoutKeyOnRedirectedGet(hop, chain, attempt);
    Response response;
    try {
      response = chain.proceed(request);
    } catch (IOException | RuntimeException e) {
      if (!attempt.mayHaveReachedServer()) {
        // A connection was in hand and nothing was written: a user network interceptor failed.
        attempt.failedBeforeWire();
      }
      throw e;
    }
    int code = response.code();
    if (code != 503 && code != 408) {
      return response;
    }
    String retryAfter = response.header("Retry-After");
    if (isZero(retryAfter)) {
      return response.newBuilder().removeHeader("Retry-After").build();
    }
    if (isDigitsBeyondInt(retryAfter)) {
      // OkHttp parses an all-digit Retry-After of a 503 or 408 with Integer.valueOf, which throws
      // NumberFormatException past Integer.MAX_VALUE. Any such value means "not for 68 years" to
      // the SDK too (far above maxRetryAfter), so clamp it rather than let OkHttp crash.
      return response.newBuilder()
          .header("Retry-After", String.valueOf(Integer.MAX_VALUE)).build();
    }
    return response;
  }

  /**
   * A redirect that turned the request into a GET (303 for any method; 301 and 302 for a POST, as
   * browsers and OkHttp do) asks to fetch a result, not to repeat the intent: the key, which names
   * the intent, is not sent on that GET (a server could take a keyed GET as a reuse of the key with
   * another request). A 307 or 308 repeats the same method and body, also to another origin, and
   * keeps the key: the new origin needs it to recognise a repeat of the same intent.
   */
  private static Request withoutKeyOnRedirectedGet(Request request, Chain chain, Attempt attempt) {
    if (!"GET".equals(request.method()) || "GET".equals(chain.call().request().method())) {
      return request;
    }
    String keyHeader = attempt.op().runtime().idempotencyKeyPolicy().headerName();
    return request.header(keyHeader) == null
        ? request : request.newBuilder().removeHeader(keyHeader).build();
  }

  private static boolean isDigitsBeyondInt(String value) {
    if (value == null || value.isEmpty()) {
      return false;
    }
    for (int i = 0; i < value.length(); i++) {
      if (value.charAt(i) < '0' || value.charAt(i) > '9') {
        return false;
      }
    }
    String digits = value.replaceFirst("^0+(?=.)", "");
    return digits.length() > 10
        || (digits.length() == 10 && digits.compareTo(String.valueOf(Integer.MAX_VALUE)) > 0);
  }

  /** "0", "00", ...: OkHttp would repeat the request at once. */
  private static boolean isZero(String retryAfter) {
    if (retryAfter == null || retryAfter.isEmpty()) {
      return false;
    }
    for (int i = 0; i < retryAfter.length(); i++) {
      if (retryAfter.charAt(i) != '0') {
        return false;
      }
    }
    return true;
  }
}
