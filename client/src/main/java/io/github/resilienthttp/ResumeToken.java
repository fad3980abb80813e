package io.github.resilienthttp;

import io.github.resilienthttp.internal.async.ResumeTokenSigner;
import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectInputStream;
import java.io.ObjectStreamException;
import java.io.Serializable;
import java.time.DateTimeException;
import java.time.Duration;
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
 *
 * <p><b>Signed.</b> Whoever can write a token (an outbox row, a queue message, a pasted log line)
 * would otherwise choose where {@link ResilientHttpClient#resume resume} and
 * {@link ResilientHttpClient#cancelOnServer cancelOnServer} send the client's credentials, and
 * whether a POST without a sent key may be re-sent. So a token that a client hands out (in a
 * failure, a listener event, the outbox) is bound to that client's
 * {@link ResilientHttpClient.Builder#resumeTokenKey(byte[], byte[]...) resume token keys}: its text is
 * {@code rhr2.}, base64url of its fields, {@code .}, and base64url of an HMAC-SHA256 over what comes
 * before; the client verifies it before acting on a token, and refuses an unsigned, altered or
 * foreign one with {@link InvalidResumeTokenException} (nothing is sent). A token built with
 * {@link #forSubmit} or changed with {@link #accepted}/{@link #withCancelUrl} by the caller is
 * unsigned ({@code rhr1.} text, the format of earlier versions), as are tokens read back from earlier
 * versions; see {@link ResilientHttpClient.Builder#acceptUnsignedResumeTokens} to migrate them.
 * {@link #parse(String)} and Java deserialization check the form only (they know no keys), and refuse
 * anything else with {@link InvalidResumeTokenException} (deserialization: an
 * {@link InvalidObjectException} caused by it).
 */
public final class ResumeToken implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final String UNSIGNED_PREFIX = "rhr1.";
  private static final String PREFIX = "rhr2.";
  private static final int MAX_TEXT = 16 * 1024;
  /** Base64url without padding of a 32-byte HMAC-SHA256. */
  private static final int SIGNATURE_CHARS = 43;
  /** How far a key's creation time may be ahead of the resuming client's clock (clock skew). */
  static final Duration MAX_KEY_TIME_SKEW = Duration.ofMinutes(1);
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

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
  /** The signature read from a signed text (base64url), or {@code null}. */
  private final String signature;
  /** The client signer this token was handed out by (then it signs when printed), or {@code null}. */
  private final transient ResumeTokenSigner signer;

  private ResumeToken(String method, String url, String statusUrl, String resultUrl,
      String idempotencyKey, boolean idempotencyKeySent, Instant keyCreatedAt, String cancelUrl,
      String signature, ResumeTokenSigner signer) {
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
    if (signature != null && (signature.length() != SIGNATURE_CHARS
        || !signature.matches("[A-Za-z0-9_-]+"))) {
      throw new IllegalArgumentException("signature must be " + SIGNATURE_CHARS
          + " base64url characters");
    }
    this.signature = signature;
    this.signer = signer;
  }

  /**
   * A token for an operation that has not been accepted (or whose acceptance was not seen): resuming it
   * re-submits the request with the same key. Unsigned: a client accepts it only as
   * {@link ResilientHttpClient.Builder#acceptUnsignedResumeTokens} says.
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
        keyCreatedAt, null, null, null);
  }

  /**
   * This token with the status resource of the accepted operation, and where its result will be when
   * the submit's response said ({@code Location} beside {@code Operation-Location}). Signed by the
   * same client as this token, if any (a parsed token's signature does not cover the change).
   *
   * @param statusUrl the status resource
   * @param resultUrl the final result's location, or {@code null}
   * @return the token
   */
  public ResumeToken accepted(HttpUrl statusUrl, HttpUrl resultUrl) {
    return new ResumeToken(method, url, statusUrl.toString(),
        resultUrl == null ? null : resultUrl.toString(), idempotencyKey, idempotencyKeySent,
        keyCreatedAt, cancelUrl, null, signer);
  }

  /**
   * This token with the URL that cancels the server's job ({@link ResilientHttpClient#cancelOnServer}).
   * Signed as {@link #accepted}.
   *
   * @param cancelUrl the cancel URL the server gave
   * @return the token
   */
  public ResumeToken withCancelUrl(HttpUrl cancelUrl) {
    return new ResumeToken(method, url, statusUrl, resultUrl, idempotencyKey, idempotencyKeySent,
        keyCreatedAt, Objects.requireNonNull(cancelUrl, "cancelUrl").toString(), null, signer);
  }

  /** This token, handed out by the client whose signer this is: it signs when printed. */
  ResumeToken signedWith(ResumeTokenSigner s) {
    return s == signer ? this : new ResumeToken(method, url, statusUrl, resultUrl, idempotencyKey,
        idempotencyKeySent, keyCreatedAt, cancelUrl, null, Objects.requireNonNull(s, "signer"));
  }

  /**
   * This token if the client whose signer {@code s} is may act on it, bound to that signer.
   *
   * @throws InvalidResumeTokenException when unsigned (and not accepted unsigned), the signature
   *     does not verify, or the key time is in the future
   */
  ResumeToken verifiedBy(ResumeTokenSigner s, Instant now) {
    if (signer != s) {
      String signed = PREFIX + B64.encodeToString(fields().getBytes(StandardCharsets.UTF_8));
      byte[] sig = signer != null ? signer.sign(signed)
          : signature != null ? Base64.getUrlDecoder().decode(signature) : null;
      if (sig == null) {
        if (!s.acceptsUnsigned(url()) || !statusUrl().map(s::acceptsUnsigned).orElse(true)
            || !resultUrl().map(s::acceptsUnsigned).orElse(true)
            || !cancelUrl().map(s::acceptsUnsigned).orElse(true)) {
          throw new InvalidResumeTokenException(InvalidResumeTokenException.UNSIGNED, "refused an"
              + " unsigned resume token (written by a version before signed tokens, or built by"
              + " hand): nothing was sent. To migrate stored tokens, accept unsigned tokens for the"
              + " origins you trust (ResilientHttpClient.Builder.acceptUnsignedResumeTokens) and"
              + " store verifyResumeToken(token).toText() instead");
        }
      } else if (!s.verifies(signed, sig)) {
        throw new InvalidResumeTokenException(InvalidResumeTokenException.BAD_SIGNATURE, "refused a"
            + " resume token whose signature matches none of this client's keys (altered, or signed"
            + " with another key: configure the same resumeTokenKey on every process that resumes;"
            + " without one a client signs with a random key of its own): nothing was sent");
      }
    }
    if (keyCreatedAt.isAfter(now.plus(MAX_KEY_TIME_SKEW))) {
      throw new InvalidResumeTokenException(InvalidResumeTokenException.KEY_TIME_IN_FUTURE,
          "refused a resume token whose key was made after now (keyCreatedAt " + keyCreatedAt
              + ", more than " + MAX_KEY_TIME_SKEW.toSeconds() + " s ahead): nothing was sent");
    }
    return signedWith(s);
  }

  /**
   * {@return whether this token carries a signature (read from {@code rhr2.} text, or handed out by a
   * client); whether it verifies is for the client to say}
   */
  public boolean isSigned() {
    return signature != null || signer != null;
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

  /** The fields, one a line; an eighth line only with a cancel URL (the format of rhr1 texts). */
  private String fields() {
    String plain = String.join("\n", method, url, nz(statusUrl), nz(resultUrl), idempotencyKey,
        idempotencyKeySent ? "1" : "0", Long.toString(keyCreatedAt.toEpochMilli()));
    return cancelUrl == null ? plain : plain + "\n" + cancelUrl;
  }

  /**
   * The token as one line of URL-safe text: {@code rhr2.}, base64url of its fields, {@code .} and
   * base64url of its signature, for a signed token; {@code rhr1.} and base64url of its fields (the
   * format of earlier versions) for an unsigned one.
   *
   * @return the text
   */
  public String toText() {
    String payload = B64.encodeToString(fields().getBytes(StandardCharsets.UTF_8));
    if (signer != null) {
      String signed = PREFIX + payload;
      return signed + "." + B64.encodeToString(signer.sign(signed));
    }
    return signature != null ? PREFIX + payload + "." + signature : UNSIGNED_PREFIX + payload;
  }

  /**
   * Parses {@link #toText()}: a signed ({@code rhr2.}) or unsigned ({@code rhr1.}) token. Checks the
   * form only: whether a client acts on the token (its signature) is checked when it is used.
   *
   * @param text the text
   * @return the token
   * @throws InvalidResumeTokenException (reason {@code malformed}) when {@code text} is not a token
   */
  public static ResumeToken parse(String text) {
    Objects.requireNonNull(text, "text");
    String t = text.trim();
    if (t.length() > MAX_TEXT) {
      throw malformed("longer than " + MAX_TEXT + " characters", null);
    }
    String payload;
    String signature = null;
    if (t.startsWith(PREFIX)) {
      int dot = t.lastIndexOf('.');
      if (dot < PREFIX.length()) {
        throw malformed("no signature", null);
      }
      payload = t.substring(PREFIX.length(), dot);
      signature = t.substring(dot + 1);
    } else if (t.startsWith(UNSIGNED_PREFIX)) {
      payload = t.substring(UNSIGNED_PREFIX.length());
    } else {
      throw malformed("expected rhr2.… or rhr1.…", null);
    }
    String plain;
    try {
      plain = new String(Base64.getUrlDecoder().decode(payload), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw malformed("bad base64url", e);
    }
    if (!B64.encodeToString(plain.getBytes(StandardCharsets.UTF_8)).equals(payload)) {
      throw malformed("not the canonical encoding", null); // one token, one text: what is signed
    }
    String[] f = plain.split("\n", -1);
    if ((f.length != 7 && f.length != 8) || !(f[5].equals("0") || f[5].equals("1"))
        || (f.length == 8 && f[7].isEmpty())) {
      throw malformed("wrong fields", null);
    }
    try {
      return new ResumeToken(f[0], f[1], f[2].isEmpty() ? null : f[2],
          f[3].isEmpty() ? null : f[3], f[4], f[5].equals("1"),
          Instant.ofEpochMilli(Long.parseLong(f[6])), f.length == 8 ? f[7] : null, signature,
          null);
    } catch (IllegalArgumentException | DateTimeException | NullPointerException e) {
      // NumberFormatException is an IllegalArgumentException; the message names the field only.
      throw malformed(e instanceof NumberFormatException || e instanceof DateTimeException
          ? "bad key time" : e.getMessage(), e);
    }
  }

  private static InvalidResumeTokenException malformed(String why, Throwable cause) {
    return new InvalidResumeTokenException(InvalidResumeTokenException.MALFORMED,
        "not a resume token: " + why, cause);
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }

  /**
   * Serialized as its text, so that deserialization goes through {@link #parse(String)}.
   *
   * @return the serial form
   */
  private Object writeReplace() {
    return new SerialForm(toText());
  }

  /**
   * The serialized form of earlier versions (the fields): read, then checked like a parsed unsigned
   * token by {@link #readResolve()}.
   *
   * @param in the stream
   * @throws IOException as the stream, or {@link InvalidObjectException} for a bad field
   * @throws ClassNotFoundException as the stream
   */
  private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
    try {
      in.defaultReadObject();
    } catch (DateTimeException | ClassCastException e) {
      throw invalidObject(malformed("bad field", e));
    }
  }

  /**
   * The token read in the earlier form, through the constructor's checks (unsigned unless the
   * stream had a signature).
   *
   * @return the checked token
   * @throws ObjectStreamException ({@link InvalidObjectException}) when a field is not valid
   */
  private Object readResolve() throws ObjectStreamException {
    try {
      return new ResumeToken(method, url, statusUrl, resultUrl, idempotencyKey, idempotencyKeySent,
          keyCreatedAt, cancelUrl, signature, null);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw invalidObject(malformed(String.valueOf(e.getMessage()), e));
    }
  }

  private static InvalidObjectException invalidObject(InvalidResumeTokenException e) {
    InvalidObjectException x = new InvalidObjectException(e.getMessage());
    x.initCause(e);
    return x;
  }

  /** The serialized form: the token's text. */
  private static final class SerialForm implements Serializable {
    private static final long serialVersionUID = 2L;
    /** The token's text, {@link #toText()}. */
    private final String text;

    SerialForm(String text) {
      this.text = text;
    }

    private Object readResolve() throws ObjectStreamException {
      if (text == null) {
        throw invalidObject(malformed("no text", null));
      }
      try {
        return parse(text);
      } catch (InvalidResumeTokenException e) {
        throw invalidObject(e);
      }
    }
  }

  /** Equal when the fields are; a token's signature is not part of its value. */
  @Override
  public boolean equals(Object o) {
    return o instanceof ResumeToken r && r.fields().equals(fields());
  }

  @Override
  public int hashCode() {
    return fields().hashCode();
  }

  @Override
  public String toString() {
    return "ResumeToken{" + method + " " + HttpUrl.get(url).redact()
        + (statusUrl == null ? "" : ", status=" + HttpUrl.get(statusUrl).redact())
        + ", key=" + IdempotencyKeyPolicy.shorten(idempotencyKey) + "…, keyCreatedAt="
        + keyCreatedAt + (isSigned() ? "" : ", unsigned") + "}";
  }
}
