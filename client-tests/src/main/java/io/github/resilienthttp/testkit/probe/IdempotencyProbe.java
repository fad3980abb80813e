package io.github.resilienthttp.testkit.probe;

import io.github.resilienthttp.TimeSource;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import okhttp3.Headers;
import okhttp3.HttpUrl;
import okhttp3.MediaType;

/**
 * Checks, from the outside, whether a server that claims to honour {@code Idempotency-Key}
 * does: the server's half of the pre-launch checklist. It runs a fixed battery ({@link
 * ProbeCheck}) against one URL and reports pass / fail / not applicable per check, with the
 * evidence.
 *
 * <h2>What "executed" means here</h2>
 *
 * The probe sees only what the server answers, never its database. It judges each 2xx answer for a
 * key: a <em>replay</em> when it carries the replay header ({@code Idempotent-Replayed: true} by
 * default), or names the same resource as an earlier answer for the key; an <em>execution</em>
 * otherwise. The resource is the id a {@link ResourceIdExtractor} finds (default: the JSON member
 * {@code id}); when it finds none, whole bodies are compared. So two answers for one key that name
 * different resources prove two executions; the same resource twice proves one. A server that marks
 * no replays and returns no id can only be judged by its bodies: give it an extractor.
 *
 * <h2>The checks</h2>
 *
 * <ol>
 *   <li>{@link ProbeCheck#REPLAY}: the body with a new key, then again with the same key: same
 *       status, same resource (2 requests).
 *   <li>{@link ProbeCheck#KEY_REUSE_REJECTED}: a new key with the body, then with {@link
 *       Builder#otherBody(String) another body}: the status must be {@link
 *       Builder#mismatchStatus(int) 422}; then the first body again must still name the first
 *       resource (3 requests).
 *   <li>{@link ProbeCheck#CONCURRENT_REQUESTS}: {@link Builder#concurrency(int) N} identical
 *       requests with one new key, each on its own connection, opened first and written at one
 *       instant (a barrier): at most one resource among the 2xx answers, the others 409 or
 *       replays (429 and 503, "not processed", are tolerated; any other answer fails: its outcome
 *       is unknown) (N requests).
 *   <li>{@link ProbeCheck#LOST_RESPONSE}: the body with a new key on a connection the probe closes
 *       as soon as the answer begins, unread; then the same again (waiting out 409s): a 2xx that
 *       is a replay (when the server marks replays) and that a further retry repeats (2 + up to
 *       {@link Builder#inProgressRetries(int)} + 1 requests).
 *   <li>{@link ProbeCheck#KEY_REQUIRED}, only with {@link Builder#keyRequired(boolean)}: the body
 *       without a key must get {@link Builder#keyRequiredStatus(int) 400} (1 request).
 *   <li>{@link ProbeCheck#RETENTION}, only with {@link
 *       Builder#retention(Duration, AfterRetention)}: a new key, a wait of the retention, the same
 *       again: executed again, replayed or rejected, as configured (2 requests).
 * </ol>
 *
 * <h2>Bounds</h2>
 *
 * Every request goes to the one URL given, with the method, body and headers given (redirects are
 * not followed; OkHttp's own retries are off). The battery's largest possible number of requests
 * is known before it starts ({@link #plannedRequests()}) and must not exceed {@link
 * Builder#maxRequests(int)}; a run sends at most that many. Waits (between 409s, for the
 * retention) go through a {@link TimeSource}, so tests are instant. Each request has a timeout.
 * Keys are new random UUIDs prefixed {@code probe-}, one per check. Checks 1 to 4 create up to
 * {@code 6 + N} resources on the server when it is broken, 4 when it is not: point the probe at a
 * staging server.
 *
 * <p>Immutable and thread-safe; {@link #run()} may be called again (new keys each time).
 */
public final class IdempotencyProbe {
  final HttpUrl url;
  final String method;
  final String body;
  final String otherBody;
  final MediaType contentType;
  final Headers headers;
  final String keyHeader;
  final String replayHeader;
  final int mismatchStatus;
  final int concurrency;
  final boolean keyRequired;
  final int keyRequiredStatus;
  final Duration retention;
  final AfterRetention afterRetention;
  final ResourceIdExtractor resourceId;
  final int inProgressRetries;
  final Duration inProgressPause;
  final Duration requestTimeout;
  final int maxRequests;
  final EffectCounter effectCounter;
  final TimeSource time;

  private IdempotencyProbe(Builder b) {
    this.url = b.url;
    this.method = b.method;
    this.body = b.body;
    this.otherBody = b.otherBody != null ? b.otherBody : variantOf(b.body);
    this.contentType = b.contentType;
    this.headers = b.headers.build();
    this.keyHeader = b.keyHeader;
    this.replayHeader = b.replayHeader;
    this.mismatchStatus = b.mismatchStatus;
    this.concurrency = b.concurrency;
    this.keyRequired = b.keyRequired;
    this.keyRequiredStatus = b.keyRequiredStatus;
    this.retention = b.retention;
    this.afterRetention = b.afterRetention;
    this.resourceId = b.resourceId;
    this.inProgressRetries = b.inProgressRetries;
    this.inProgressPause = b.inProgressPause;
    this.requestTimeout = b.requestTimeout;
    this.maxRequests = b.maxRequests;
    this.effectCounter = b.effectCounter;
    this.time = b.time;
  }

  /**
   * Starts configuring a probe of {@code url}.
   *
   * @param url the http or https URL to probe, e.g. {@code http://127.0.0.1:8080/payments}
   * @return a builder with the defaults described on {@link Builder}
   */
  public static Builder builder(HttpUrl url) {
    return new Builder(url);
  }

  /**
   * The most requests a {@link #run()} of this probe can send.
   *
   * @return the planned maximum, at most {@link Builder#maxRequests(int)}
   */
  public int plannedRequests() {
    return Math.min(maxRequests,
        plannedRequests(concurrency, inProgressRetries, keyRequired, retention != null));
  }

  private static int plannedRequests(
      int concurrency, int inProgressRetries, boolean keyRequired, boolean retention) {
    return 2 + 3 + concurrency + (2 + inProgressRetries + 1) + (keyRequired ? 1 : 0)
        + (retention ? 2 : 0);
  }

  /**
   * Runs the battery, in check order, and returns what it found. Never throws for what the server
   * does (a failed connection is evidence).
   *
   * @return the report
   * @throws InterruptedException if the thread is interrupted during a burst or a wait
   */
  public ProbeReport run() throws InterruptedException {
    try (ProbeTransport transport =
        new ProbeTransport(
            url, method, contentType, headers, keyHeader, plannedRequests(), requestTimeout)) {
      List<CheckResult> results = new ProbeBattery(this, transport).run();
      return new ProbeReport(
          method, shown(url), keyHeader, plannedRequests(), transport.sent(), results);
    }
  }

  @Override
  public String toString() {
    return "IdempotencyProbe[" + method + " " + shown(url) + ", at most " + plannedRequests()
        + " requests]";
  }

  /**
   * The URL as reports show it: without user info and query (where credentials hide), with its
   * path.
   *
   * @param url a URL
   * @return e.g. {@code https://staging.example/payments}
   */
  public static String shown(HttpUrl url) {
    return url.newBuilder().username("").password("").query(null).fragment(null).build()
        .toString();
  }

  /** Another request for check 2: the body with one more JSON member, or one more line. */
  static String variantOf(String body) {
    String trimmed = body.stripLeading();
    if (trimmed.startsWith("{")) {
      String rest = trimmed.substring(1).stripLeading();
      return rest.startsWith("}")
          ? "{\"probe_variant\":\"other\"" + rest
          : "{\"probe_variant\":\"other\"," + rest;
    }
    return body + "\nprobe_variant=other";
  }

  /**
   * Configures an {@link IdempotencyProbe}. Defaults: method {@code POST}, body {@code {}},
   * content type {@code application/json}, key header {@code Idempotency-Key}, replay header
   * {@code Idempotent-Replayed}, mismatch status 422, concurrency 8, key not required (check 5 not
   * run), no retention (check 6 not run), resource id from the JSON member {@code id}, up to 5
   * retries 200 ms apart while the server answers 409, a 10 s timeout per request, at most 100
   * requests, the system clock. Not thread-safe.
   */
  public static final class Builder {
    private final HttpUrl url;
    private String method = "POST";
    private String body = "{}";
    private String otherBody;
    private MediaType contentType = MediaType.get("application/json");
    private final Headers.Builder headers = new Headers.Builder();
    private String keyHeader = "Idempotency-Key";
    private String replayHeader = "Idempotent-Replayed";
    private int mismatchStatus = 422;
    private int concurrency = 8;
    private boolean keyRequired;
    private int keyRequiredStatus = 400;
    private Duration retention;
    private AfterRetention afterRetention;
    private ResourceIdExtractor resourceId = ResourceIdExtractor.jsonField("id");
    private int inProgressRetries = 5;
    private Duration inProgressPause = Duration.ofMillis(200);
    private Duration requestTimeout = Duration.ofSeconds(10);
    private int maxRequests = 100;
    private EffectCounter effectCounter;
    private TimeSource time = TimeSource.system();

    private Builder(HttpUrl url) {
      this.url = Objects.requireNonNull(url, "url");
    }

    /**
     * The method of every request (default {@code POST}).
     *
     * @param method e.g. {@code POST} or {@code PATCH}
     * @return this builder
     */
    public Builder method(String method) {
      this.method = Objects.requireNonNull(method, "method").toUpperCase(Locale.ROOT);
      return this;
    }

    /**
     * The body of every request (default {@code {}}), e.g. a payment the server accepts.
     *
     * @param body the body text, sent as UTF-8
     * @return this builder
     */
    public Builder body(String body) {
      this.body = Objects.requireNonNull(body, "body");
      return this;
    }

    /**
     * The different body of check 2 (default: the body with a {@code "probe_variant"} member
     * added, or a line appended when it is not a JSON object).
     *
     * @param otherBody a body the server accepts that differs from {@link #body(String)}
     * @return this builder
     */
    public Builder otherBody(String otherBody) {
      this.otherBody = Objects.requireNonNull(otherBody, "otherBody");
      return this;
    }

    /**
     * The request's media type (default {@code application/json}).
     *
     * @param contentType e.g. {@code application/json}
     * @return this builder
     */
    public Builder contentType(String contentType) {
      this.contentType = MediaType.get(Objects.requireNonNull(contentType, "contentType"));
      return this;
    }

    /**
     * A header sent with every request, e.g. {@code Authorization}.
     *
     * @param name the header name
     * @param value the value
     * @return this builder
     */
    public Builder header(String name, String value) {
      headers.add(name, value);
      return this;
    }

    /**
     * The idempotency key header name (default {@code Idempotency-Key}).
     *
     * @param name the header name
     * @return this builder
     */
    public Builder keyHeader(String name) {
      this.keyHeader = requireName(name, "keyHeader");
      return this;
    }

    /**
     * The header a server marks replays with, value {@code true} (default {@code
     * Idempotent-Replayed}).
     *
     * @param name the header name
     * @return this builder
     */
    public Builder replayHeader(String name) {
      this.replayHeader = requireName(name, "replayHeader");
      return this;
    }

    /**
     * The status the server documents for a key reused with another request (default 422).
     *
     * @param status 400..499
     * @return this builder
     */
    public Builder mismatchStatus(int status) {
      this.mismatchStatus = status;
      return this;
    }

    /**
     * How many identical requests check 3 sends at once (default 8).
     *
     * @param n 2..64
     * @return this builder
     */
    public Builder concurrency(int n) {
      this.concurrency = n;
      return this;
    }

    /**
     * Whether the server requires a key for this method, so that check 5 runs (default false).
     *
     * @param required true when the server documents that a request without key is rejected
     * @return this builder
     */
    public Builder keyRequired(boolean required) {
      this.keyRequired = required;
      return this;
    }

    /**
     * The status for a request without a key when one is required (default 400).
     *
     * @param status 400..499
     * @return this builder
     */
    public Builder keyRequiredStatus(int status) {
      this.keyRequiredStatus = status;
      return this;
    }

    /**
     * The server's documented retention of a completed key and what it does with a retry after
     * it, so that check 6 runs: the probe waits {@code retention} between the two requests.
     *
     * @param retention positive, at most 24 hours
     * @param expected what the server documents
     * @return this builder
     */
    public Builder retention(Duration retention, AfterRetention expected) {
      this.retention = Objects.requireNonNull(retention, "retention");
      this.afterRetention = Objects.requireNonNull(expected, "expected");
      return this;
    }

    /**
     * How to find the resource id in an answer (default {@link
     * ResourceIdExtractor#jsonField(String) jsonField("id")}).
     *
     * @param extractor the extractor
     * @return this builder
     */
    public Builder resourceId(ResourceIdExtractor extractor) {
      this.resourceId = Objects.requireNonNull(extractor, "resourceId");
      return this;
    }

    /**
     * How many times a request answered 409 (in progress) is sent again, and the pause before each
     * (defaults 5 and 200 ms).
     *
     * @param retries 0..20
     * @param pause zero or positive, at most 10 s
     * @return this builder
     */
    public Builder inProgressRetries(int retries, Duration pause) {
      this.inProgressRetries = retries;
      this.inProgressPause = Objects.requireNonNull(pause, "pause");
      return this;
    }

    /**
     * The retries of {@link #inProgressRetries(int, Duration)} with the default pause.
     *
     * @param retries 0..20
     * @return this builder
     */
    public Builder inProgressRetries(int retries) {
      this.inProgressRetries = retries;
      return this;
    }

    /**
     * The timeout of each request: connect, write and each read (default 10 s).
     *
     * @param timeout 1 ms..5 min
     * @return this builder
     */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = Objects.requireNonNull(timeout, "requestTimeout");
      return this;
    }

    /**
     * The most requests a run may send (default 100); {@link #build()} fails when the configured
     * battery could need more.
     *
     * @param max 1..1000
     * @return this builder
     */
    public Builder maxRequests(int max) {
      this.maxRequests = max;
      return this;
    }

    /**
     * The clock and sleeper of the probe's waits (default the system's).
     *
     * @param time e.g. a {@code FakeTimeSource} shared with a test server's clock
     * @return this builder
     */
    /**
     * Counts the server's effects, for servers whose answers do not identify them (no resource id,
     * no replay header: {@code 201 {"status":"created"}} or {@code 204}). Without one, checks 1, 3, 4
     * and 6 against such a server say {@link Verdict#CANNOT_TELL}. Its reads (e.g.
     * {@link EffectCounter#url}) are not counted against the cap.
     *
     * @param counter the counter
     * @return this builder
     */
    public Builder effectCounter(EffectCounter counter) {
      this.effectCounter = Objects.requireNonNull(counter, "effectCounter");
      return this;
    }

    /**
     * The clock of the probe's waits and timings. Default {@link TimeSource#system()}.
     *
     * @param time the clock
     * @return this builder
     */
    public Builder timeSource(TimeSource time) {
      this.time = Objects.requireNonNull(time, "timeSource");
      return this;
    }

    /**
     * Validates the configuration and builds the probe.
     *
     * @return the probe
     * @throws IllegalArgumentException naming the field and its value when one is out of range
     */
    public IdempotencyProbe build() {
      if (!url.isHttps() && !"http".equals(url.scheme())) {
        throw new IllegalArgumentException("url must be http or https but was " + shown(url));
      }
      checkRange("concurrency", concurrency, 2, 64);
      checkRange("mismatchStatus", mismatchStatus, 400, 499);
      checkRange("keyRequiredStatus", keyRequiredStatus, 400, 499);
      checkRange("inProgressRetries", inProgressRetries, 0, 20);
      checkRange("maxRequests", maxRequests, 1, 1000);
      checkDuration("inProgressPause", inProgressPause, Duration.ZERO, Duration.ofSeconds(10));
      checkDuration("requestTimeout", requestTimeout, Duration.ofMillis(1), Duration.ofMinutes(5));
      if (retention != null) {
        checkDuration("retention", retention, Duration.ofNanos(1), Duration.ofHours(24));
      }
      if (body.equals(otherBody)) {
        throw new IllegalArgumentException("otherBody must differ from body");
      }
      return new IdempotencyProbe(this);
    }

    private static void checkRange(String field, int value, int min, int max) {
      if (value < min || value > max) {
        throw new IllegalArgumentException(
            field + " must be in " + min + ".." + max + " but was " + value);
      }
    }

    private static void checkDuration(String field, Duration value, Duration min, Duration max) {
      if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
        throw new IllegalArgumentException(
            field + " must be in " + min + ".." + max + " but was " + value);
      }
    }

    private static String requireName(String name, String field) {
      Objects.requireNonNull(name, field);
      if (name.isBlank()) {
        throw new IllegalArgumentException(field + " must not be blank");
      }
      return name;
    }
  }
}
