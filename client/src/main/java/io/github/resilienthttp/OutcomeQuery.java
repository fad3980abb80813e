package io.github.resilienthttp;

import java.util.Objects;
import java.util.function.BiFunction;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Asks a downstream that does not support idempotency keys whether an intent took effect, when an
 * attempt's outcome is unknown and the operation could not be retried safely
 * ({@link OutcomeUnknownException}): for example {@code GET /payments?reference=order-42}. Run by
 * {@link Operation#outcomeQuery(OutcomeQueryPolicy)}; see {@link OutcomeQueryPolicy} for what each
 * {@link Answer} does. Implementations must be thread-safe.
 */
public interface OutcomeQuery {

  /** What a query says about the intent. */
  enum Answer {
    /** It took effect: the query's response is the operation's result. */
    FOUND,
    /** It did not: the attempt counts as not sent, and the operation may be sent again. */
    NOT_FOUND,
    /** The query cannot say: the operation ends with its {@link OutcomeUnknownException}. */
    CANNOT_TELL
  }

  /**
   * The GET that asks (its key is never sent; a query is idempotent).
   *
   * @param original the operation's request
   * @param idempotencyKey the operation's key, to use as a reference if the downstream stores it
   * @return the query request
   */
  Request request(Request original, String idempotencyKey);

  /**
   * Reads the query's response. Must not read or close its body: {@code body} is passed, bounded to
   * 64 KiB.
   *
   * @param response the query's response
   * @param body its body, decoded as UTF-8
   * @return the answer
   */
  Answer read(Response response, String body);

  /**
   * A query that GETs {@code url} and reads the status: {@code 200} found, {@code 404} not found,
   * anything else cannot tell.
   *
   * @param url the lookup URL for the operation's request and key
   * @return the query
   */
  static OutcomeQuery lookup(BiFunction<Request, String, HttpUrl> url) {
    return of(url, (r, body) -> r.code() == 200 ? Answer.FOUND
        : r.code() == 404 ? Answer.NOT_FOUND : Answer.CANNOT_TELL);
  }

  /**
   * A query of a lookup URL and a reader.
   *
   * @param url the lookup URL for the operation's request and key
   * @param read reads the answer from the response and its body
   * @return the query
   */
  static OutcomeQuery of(BiFunction<Request, String, HttpUrl> url,
      BiFunction<Response, String, Answer> read) {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(read, "read");
    return new OutcomeQuery() {
      @Override
      public Request request(Request original, String idempotencyKey) {
        return new Request.Builder().url(url.apply(original, idempotencyKey)).get().build();
      }

      @Override
      public Answer read(Response response, String body) {
        return read.apply(response, body);
      }
    };
  }

  /**
   * Whether {@code response} is the answer of a query that found the intent, rather than the
   * response of an attempt: the SDK marks it with a tag on its request.
   *
   * @param response a response returned by an operation
   * @return whether it was found by an outcome query
   */
  static boolean foundByQuery(Response response) {
    return response.request().tag(FoundByQuery.class) != null;
  }

  /** The tag of a response found by a query. */
  final class FoundByQuery {
    static final FoundByQuery INSTANCE = new FoundByQuery();

    private FoundByQuery() {}

    @Override
    public String toString() {
      return "found-by-query";
    }
  }
}
