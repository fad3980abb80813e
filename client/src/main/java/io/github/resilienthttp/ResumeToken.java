package io.github.resilienthttp;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import okhttp3.HttpUrl;

/**
 * The handle of an intent that a restarted process can hand back to continue it: the status resource of
 * an accepted asynchronous operation (to continue waiting), the idempotency key and when it was made
 * (to re-submit safely, and to tell a key the server may have forgotten), and the original request's
 * method and URL. Never its body or headers: a token holds no credentials of its own, but its URLs are
 * kept whole (a pre-signed status URL's query is what lets one poll it), so store and log
 * {@link #toText()} as you would those URLs; {@link #toString()} redacts them.
 *
 * <p>Prints and parses as one line of URL-safe text ({@link #toText()}, {@link #parse(String)}), and is
 * {@link Serializable}. Immutable and thread-safe.
 */
public final class ResumeToken implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final String PREFIX = "rhr1.";
  private static final int MAX_TEXT = 16 * 1024;

  /** The method. */
  private final String method;
  /** The url. */
  private final String url;
  /** The status url. */
  private final String statusUrl;
  /** The result url. */
  private final String resultUrl;
  /** The idempotency key. */
  private final String idempotencyKey;
  /** The idempotency key sent. */
  private final boolean idempotencyKeySent;
  /** The key created at. */
  private final Instant keyCreatedAt;
  /** The server-side cancel url, when the server gave one. */
  private final String cancelUrl;

  private ResumeToken(String method, String url, String statusUrl, String resultUrl,
      String idempotencyKey, boolean idempotencyKeySent, Instant keyCreatedAt, String cancelUrl) {
    if (method == null || !method.matches("[A-Z]{1,16}")) {
      throw new IllegalArgumentException("method must be 1 to 16 upper-case letters");
    }
    this.method = method;
    this.url = checkUrl("url", Objects.requireNonNull(url, "url"));
    this.statusUrl = statusUrl == null ? null : checkUrl("statusUrl", statusUrl);
    this.resultUrl = resultUrl == null ? null : checkUrl("resultUrl", resultUrl);
    this.idempotencyKey = IdempotencyKeyPolicy.validateKey(idempotencyKey);
    this.idempotencyKeySent = idempotencyKeySent;
    this.keyCreatedAt = Objects.requireNonNull(keyCreatedAt, "keyCreatedAt")
        .truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
    this.cancelUrl = cancelUrl == null ? null : checkUrl("cancelUrl", cancelUrl);
  }

  /**
   * A token for an operation that has not been accepted (or whose acceptance was not seen): resuming it
   * re-submits the request with the same key.
   *
   * @param method the original request's method
   * @param url the original request's URL
   * @param idempotencyKey the operation's key
   * @param idempotencyKeySent whether the key was sent (resubmitting is safe only when it was, or the
   *     method is idempotent)
   * @param keyCreatedAt when the key was made (first sent)
   * @return the token
   */
  public static ResumeToken forSubmit(String method, HttpUrl url, String idempotencyKey,
      boolean idempotencyKeySent, Instant keyCreatedAt) {
    return new ResumeToken(method, url.toString(), null, null, idempotencyKey, idempotencyKeySent,
        keyCreatedAt, null);
  }

  /**
   * This token with the status resource of the accepted operation, and where its result will be when
   * the submit's response said ({@code Location} beside {@code Operation-Location}).
   *
   * @param statusUrl the status resource
   * @param resultUrl the final result's location, or {@code null}
   * @return the token
   */
  public ResumeToken accepted(HttpUrl statusUrl, HttpUrl resultUrl) {
    return new ResumeToken(method, url, statusUrl.toString(),
        resultUrl == null ? null : resultUrl.toString(), idempotencyKey, idempotencyKeySent,
        keyCreatedAt, cancelUrl);
  }

  /**
   * This token with the URL that cancels the server's job ({@link ResilientHttpClient#cancelOnServer}).
   *
   * @param cancelUrl the cancel URL the server gave
   * @return the token
   */
  public ResumeToken withCancelUrl(HttpUrl cancelUrl) {
    return new ResumeToken(method, url, statusUrl, resultUrl, idempotencyKey, idempotencyKeySent,
        keyCreatedAt, Objects.requireNonNull(cancelUrl, "cancelUrl").toString());
  }

  /**
   * {@return the URL that cancels the server's job, when the server gave one (a {@code Link} with
   * {@code rel="cancel"}, or what {@link AsyncOperationPolicy#cancelLocator()} finds)}
   */
  public Optional<HttpUrl> cancelUrl() {
    return Optional.ofNullable(cancelUrl).map(HttpUrl::get);
  }

  private static String checkUrl(String name, String value) {
    if (HttpUrl.parse(value) == null) {
      throw new IllegalArgumentException(name + " is not an http(s) URL");
    }
    return value;
  }

  /** {@return the original request's method} */
  public String method() {
    return method;
  }

  /** {@return the original request's URL} */
  public HttpUrl url() {
    return HttpUrl.get(url);
  }

  /** {@return the status resource, when the operation was accepted} */
  public Optional<HttpUrl> statusUrl() {
    return Optional.ofNullable(statusUrl).map(HttpUrl::get);
  }

  /** {@return where the result will be, when the submit's response said} */
  public Optional<HttpUrl> resultUrl() {
    return Optional.ofNullable(resultUrl).map(HttpUrl::get);
  }

  /** {@return whether the operation was accepted: there is a status resource to poll} */
  public boolean isAccepted() {
    return statusUrl != null;
  }

  /** {@return the operation's idempotency key} */
  public String idempotencyKey() {
    return idempotencyKey;
  }

  /** {@return whether the key was sent with the submit} */
  public boolean idempotencyKeySent() {
    return idempotencyKeySent;
  }

  /** {@return when the key was made; with the server's key retention, whether it may be forgotten} */
  public Instant keyCreatedAt() {
    return keyCreatedAt;
  }

  /**
   * The token as one line of URL-safe text: {@code rhr1.} and base64url of its fields. A token without
   * a cancel URL prints exactly as before cancel URLs were carried.
   *
   * @return the text
   */
  public String toText() {
    String plain = String.join("\n", method, url, nz(statusUrl), nz(resultUrl), idempotencyKey,
        idempotencyKeySent ? "1" : "0", Long.toString(keyCreatedAt.toEpochMilli()));
    if (cancelUrl != null) {
      plain += "\n" + cancelUrl; // an eighth field only when present: older texts parse unchanged
    }
    return PREFIX + Base64.getUrlEncoder().withoutPadding()
        .encodeToString(plain.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Parses {@link #toText()}.
   *
   * @param text the text
   * @return the token
   * @throws IllegalArgumentException when {@code text} is not a token
   */
  public static ResumeToken parse(String text) {
    Objects.requireNonNull(text, "text");
    String t = text.trim();
    if (!t.startsWith(PREFIX) || t.length() > MAX_TEXT) {
      throw new IllegalArgumentException("not a resume token (expected rhr1.…)");
    }
    String plain;
    try {
      plain = new String(Base64.getUrlDecoder().decode(t.substring(PREFIX.length())),
          StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not a resume token: bad base64url", e);
    }
    String[] f = plain.split("\n", -1);
    if ((f.length != 7 && f.length != 8) || !(f[5].equals("0") || f[5].equals("1"))
        || (f.length == 8 && f[7].isEmpty())) {
      throw new IllegalArgumentException("not a resume token: wrong fields");
    }
    long millis;
    try {
      millis = Long.parseLong(f[6]);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a resume token: bad key time", e);
    }
    return new ResumeToken(f[0], f[1], f[2].isEmpty() ? null : f[2], f[3].isEmpty() ? null : f[3],
        f[4], f[5].equals("1"), Instant.ofEpochMilli(millis), f.length == 8 ? f[7] : null);
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ResumeToken r && r.toText().equals(toText());
  }

  @Override
  public int hashCode() {
    return toText().hashCode();
  }

  @Override
  public String toString() {
    return "ResumeToken{" + method + " " + HttpUrl.get(url).redact()
        + (statusUrl == null ? "" : ", status=" + HttpUrl.get(statusUrl).redact())
        + ", key=" + IdempotencyKeyPolicy.shorten(idempotencyKey) + "…, keyCreatedAt="
        + keyCreatedAt + "}";
  }
}
