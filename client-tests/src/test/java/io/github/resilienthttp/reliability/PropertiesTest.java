package io.github.resilienthttp.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryAfter;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.internal.classify.DefaultResponseClassifier;
import io.github.resilienthttp.internal.engine.RetryLoop;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ProtocolException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.function.Function;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Properties that the unit tests in {@code client/src/test} do not cover yet: the default classifier
 * over every method, status, key flag, {@code Retry-After} value and exception type, checked against
 * README's table; {@code Retry-After} HTTP-dates in all three formats at any time; and, end to end
 * against the real server, any short fault script on a keyed POST.
 */
class PropertiesTest {
  private static final ResponseClassifier DEFAULTS = ResponseClassifier.defaults();
  private static final MediaType JSON = MediaType.get("application/json");

  // ------------------------------------------------------------------------ classifier totality

  @Property(tries = 1000)
  void everyResponseGetsTheDecisionOfTheReadmeTable(@ForAll("methods") String method,
      @ForAll("statuses") int status, @ForAll boolean keySent,
      @ForAll("retryAfterValues") Optional<String> retryAfter, @ForAll @IntRange(min = 1, max = 100) int attempt,
      @ForAll Body body) {
    Response response = new Response.Builder().request(request(method))
        .protocol(Protocol.HTTP_1_1).code(status).message("x")
        .headers(retryAfter.map(v -> Headers.of("Retry-After", v)).orElse(Headers.of()))
        .body(ResponseBody.create(body.text, MediaType.get(body.contentType)))
        .build();

    Decision d = DEFAULTS.classify(AttemptOutcome.ofResponse(response, attempt, keySent));

    boolean parses = retryAfter.flatMap(v -> RetryAfter.parse(v, Instant.now())).isPresent();
    assertThat(d).isNotNull();
    assertThat(d.kind()).isEqualTo(readmeKind(status, keySent, parses, body));
    assertThat(d.kind() == Decision.Kind.SUCCESS).isEqualTo(status >= 100 && status < 400);
    assertThat(d.reason()).isEqualTo(readmeReason(status, keySent, parses, body));
    boolean honoursRetryAfter = d.isRetryable() && status != 408;
    assertThat(d.retryAfter().isPresent()).as("Retry-After carried").isEqualTo(honoursRetryAfter && parses);
    d.retryAfter().ifPresent(delay -> assertThat(delay).isGreaterThanOrEqualTo(Duration.ZERO));
  }

  @Property(tries = 500)
  void everyExceptionGetsARetryOrAFailureNeverASuccess(@ForAll("methods") String method,
      @ForAll("exceptions") IOException exception, @ForAll boolean mayHaveReachedServer,
      @ForAll boolean keySent) {
    Decision d = DEFAULTS.classify(
        AttemptOutcome.ofException(request(method), exception, 1, mayHaveReachedServer, keySent));

    assertThat(d).isNotNull();
    assertThat(d.kind()).isNotIn(Decision.Kind.SUCCESS, Decision.Kind.DEFER);
    assertThat(d.retryAfter()).isEmpty();
    boolean untrusted = exception instanceof SSLPeerUnverifiedException
        || (exception instanceof SSLHandshakeException && exception.getCause() instanceof CertificateException);
    if (untrusted) {
      assertThat(d).isEqualTo(Decision.fail("tls-untrusted"));
    } else if (exception.getClass().getSimpleName().equals("ConnectionShutdownException")) {
      assertThat(d).isEqualTo(Decision.retry("http2-connection-shutdown"));
    } else if (exception.getClass().getSimpleName().equals("StreamResetException")
        && exception.getMessage().endsWith("REFUSED_STREAM")) {
      assertThat(d).isEqualTo(Decision.retry("http2-refused-stream"));
    } else if (exception instanceof ProtocolException
        && exception.getMessage().startsWith("Too many follow-up requests")) {
      assertThat(d).isEqualTo(Decision.fail("too-many-follow-ups"));
    } else if (mayHaveReachedServer) {
      assertThat(d).isEqualTo(Decision.retryIfIdempotent("outcome-unknown"));
    } else {
      assertThat(d).isEqualTo(Decision.retry("not-sent"));
    }
  }

  /** README "Default classification", written independently of DefaultResponseClassifier. */
  private static Decision.Kind readmeKind(int status, boolean keySent, boolean retryAfter, Body body) {
    if (status >= 100 && status <= 399) {
      return Decision.Kind.SUCCESS;
    }
    if (status == 408 || status == 429 || status == 503) {
      return Decision.Kind.RETRY;
    }
    if (status == 409 && keySent && (retryAfter || body.namesKey)) {
      return Decision.Kind.RETRY;
    }
    if (status >= 500 && status <= 599 && status != 501 && status != 505) {
      return Decision.Kind.RETRY_IF_IDEMPOTENT;
    }
    return Decision.Kind.FAIL;
  }

  private static String readmeReason(int status, boolean keySent, boolean retryAfter, Body body) {
    if (keySent && status == 409 && (retryAfter || body.namesKey)) {
      return "idempotency-key-in-progress";
    }
    if (keySent && status == 422 && body.namesKey) {
      return "idempotency-key-mismatch";
    }
    if (keySent && status == 400 && body == Body.STRIPE_IDEMPOTENCY_ERROR) {
      return "idempotency-key-mismatch";
    }
    return "status-" + status;
  }

  /** Answer bodies: with or without a signal that they are about the idempotency key. */
  enum Body {
    EMPTY("text/plain", "", false),
    PLAIN_CONFLICT("application/json", "{\"error\":\"email already taken\"}", false),
    VALIDATION_PROBLEM("application/problem+json",
        "{\"type\":\"https://api.example/validation\",\"title\":\"invalid\"}", false),
    DRAFT_PROBLEM("application/problem+json",
        "{\"type\":\"https://developer.example.com/idempotency\",\"title\":\"x\"}", true),
    STRIPE_IN_USE("application/json",
        "{\"error\":{\"code\":\"idempotency_key_in_use\",\"type\":\"invalid_request_error\"}}",
        true),
    STRIPE_IDEMPOTENCY_ERROR("application/json",
        "{\"error\":{\"type\":\"idempotency_error\",\"message\":\"other parameters\"}}", true),
    /** Names the key, but not as JSON: no signal (the SDK has no parser for other formats). */
    HTML_MENTION("text/html", "<p>\"type\": \"idempotency\"</p>", false);

    final String contentType;
    final String text;
    final boolean namesKey;

    Body(String contentType, String text, boolean namesKey) {
      this.contentType = contentType;
      this.text = text;
      this.namesKey = namesKey;
    }
  }

  @Provide
  Arbitrary<String> methods() {
    return Arbitraries.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE",
        "PROPFIND", "QUERY");
  }

  @Provide
  Arbitrary<Integer> statuses() {
    return Arbitraries.oneOf(
        Arbitraries.integers().between(0, 1000),
        Arbitraries.of(100, 199, 200, 399, 400, 408, 409, 422, 429, 499, 500, 501, 502, 503, 504, 505, 599, 600));
  }

  @Provide
  Arbitrary<Optional<String>> retryAfterValues() {
    Arbitrary<String> seconds = Arbitraries.longs().between(0, 99_999_999_999L).map(String::valueOf);
    Arbitrary<String> dates = Arbitraries.longs().between(-86_400, 86_400)
        .map(s -> Instant.now().plusSeconds(s))
        .flatMap(t -> Arbitraries.of(IMF_FIXDATE, RFC_850, ASCTIME).map(f -> f.format(t)));
    Arbitrary<String> garbage = Arbitraries.oneOf(
        Arbitraries.of("", " ", "-1", "1.5", "soon", "0x10", "+5", "1e3", "Sun, 32 Nov 1994 08:49:37 GMT"),
        Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(70));
    return Arbitraries.oneOf(seconds, dates, garbage).optional();
  }

  @Provide
  Arbitrary<IOException> exceptions() {
    List<Function<String, IOException>> kinds = List.of(
        IOException::new, SocketTimeoutException::new, ConnectException::new, EOFException::new,
        UnknownHostException::new, InterruptedIOException::new, NoRouteToHostException::new,
        SocketException::new, ProtocolException::new, SSLPeerUnverifiedException::new,
        SSLHandshakeException::new,
        m -> {
          SSLHandshakeException e = new SSLHandshakeException(m);
          e.initCause(new CertificateException("untrusted"));
          return e;
        },
        m -> new ProtocolException("Too many follow-up requests: 21"),
        m -> http2("StreamResetException", "REFUSED_STREAM"),
        m -> http2("StreamResetException", "CANCEL"),
        m -> http2("ConnectionShutdownException", null));
    return Combinators.combine(Arbitraries.of(kinds), Arbitraries.strings().ofMaxLength(30))
        .as(Function::apply);
  }

  /** OkHttp's internal HTTP/2 exceptions (not API), made by reflection. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static IOException http2(String type, String errorCode) {
    try {
      Class<?> c = Class.forName("okhttp3.internal.http2." + type);
      if (errorCode == null) {
        return (IOException) c.getConstructor().newInstance();
      }
      Class code = Class.forName("okhttp3.internal.http2.ErrorCode");
      return (IOException) c.getConstructor(code).newInstance(Enum.valueOf(code, errorCode));
    } catch (ReflectiveOperationException e) {
      throw new AssertionError("OkHttp's HTTP/2 exceptions moved", e);
    }
  }

  private static Request request(String method) {
    boolean body = List.of("POST", "PUT", "PATCH", "QUERY").contains(method);
    return new Request.Builder().url("http://localhost/payments")
        .method(method, body ? RequestBody.create("{}", JSON) : null).build();
  }

  // ------------------------------------------------------------------------ Retry-After dates

  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter RFC_850 =
      DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter ASCTIME =
      DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC);

  /**
   * Any date within 40 years of any "now" (RFC 850's two-digit year is unambiguous there), in each
   * of the three formats, gives the same delay: the time until the date rounded up to the next
   * millisecond, or zero for a date that has passed. Never earlier than the server asked.
   */
  @Property(tries = 1000)
  void httpDatesInAllThreeFormatsRoundTrip(
      @ForAll @LongRange(min = 631_152_000L, max = 4_102_444_800L) long nowSecond,
      @ForAll @IntRange(min = 0, max = 999_999_999) int nowNanos,
      @ForAll @LongRange(min = -1_260_000_000L, max = 1_260_000_000L) long offsetSeconds) {
    Instant now = Instant.ofEpochSecond(nowSecond, nowNanos);
    Instant date = Instant.ofEpochSecond(nowSecond + offsetSeconds);
    Duration expected = date.isAfter(now) ? ceilToMillis(Duration.between(now, date)) : Duration.ZERO;

    for (DateTimeFormatter format : List.of(IMF_FIXDATE, RFC_850, ASCTIME)) {
      String header = format.format(date);
      assertThat(RetryAfter.parse(header, now)).as(header).contains(expected);
      assertThat(now.plus(expected)).as("never earlier: " + header).isAfterOrEqualTo(date);
    }
  }

  @Property(tries = 500)
  void deltaSecondsRoundTripAndSaturate(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seconds,
      @ForAll @IntRange(min = 0, max = 3) int leadingZeros) {
    Optional<Duration> parsed = RetryAfter.parse("0".repeat(leadingZeros) + seconds, Instant.EPOCH);
    Duration expected = seconds > RetryAfter.MAX.getSeconds() ? RetryAfter.MAX : Duration.ofSeconds(seconds);
    assertThat(parsed).contains(expected);
  }

  /**
   * RFC 9110 §10.2.3: {@code delta-seconds = 1*DIGIT}, so leading zeros are allowed and
   * {@code 0000000000000000005} means 5 seconds (19 characters, under the parser's 64-character cap).
   */
  @Example
  void deltaSecondsWithManyLeadingZerosIsStillTheValue() {
    assertThat(RetryAfter.parse("0".repeat(18) + "5", Instant.EPOCH)).contains(Duration.ofSeconds(5));
  }

  private static Duration ceilToMillis(Duration d) {
    Duration millis = Duration.ofMillis(d.toMillis());
    return millis.equals(d) ? d : millis.plusMillis(1);
  }

  // ------------------------------------------------------------------------ end to end

  private static IdempotentTestServer server;
  private static OkHttpClient okHttp;

  @BeforeContainer
  static void startServer() throws IOException {
    server = IdempotentTestServer.startDefault();
    okHttp = new OkHttpClient();
  }

  @AfterContainer
  static void stopServer() {
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private static final Duration BACKOFF = Duration.ofMillis(10);
  private static final Duration ATTEMPT_TIMEOUT = Duration.ofMillis(300);
  private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(60);

  /**
   * Any fault script of up to 4 faults (then normal answers) on a POST with a key, with 1 to 4
   * attempts: the result is exactly what the classification rules and an idempotent server imply
   * (attempts, outcome, waits, effects), every attempt carries the operation's key, the order is
   * charged at most once, and no connection is left in use.
   */
  @Property(tries = 30)
  void anyFaultScriptOnAKeyedPostChargesAtMostOnceWithOneKey(
      @ForAll("scripts") List<Step> script, @ForAll @IntRange(min = 1, max = 4) int maxAttempts)
      throws Exception {
    server.reset();
    server.script(script.stream().map(s -> s.fault).toArray(Fault[]::new));
    FakeTimeSource time = new FakeTimeSource();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .timeSource(time).random(new SplittableRandom(1))
        .retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(BACKOFF))
            .attemptTimeout(ATTEMPT_TIMEOUT).maxRetryAfter(MAX_RETRY_AFTER)
            .deadline(Duration.ofHours(1)).build())
        .build();
    Operation op = client.operation(new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"p-1\",\"amount\":1000}", JSON)).build());
    Model expected = Model.run(script, maxAttempts);

    if (expected.status > 0) {
      try (Response r = op.execute()) {
        assertThat(r.code()).as("status").isEqualTo(expected.status);
        assertThat("true".equals(r.header("Idempotent-Replayed"))).as("replayed").isEqualTo(expected.replayed);
      }
    } else {
      assertThatThrownBy(op::execute).isInstanceOfSatisfying(OutcomeUnknownException.class, e -> {
        assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
        assertThat(e.reason()).isEqualTo("attempts-exhausted");
        assertThat(e.attempts()).isEqualTo(expected.attempts);
      });
    }
    assertThat(op.attempts()).as("attempts").isEqualTo(expected.attempts);
    assertThat(server.stats().requests()).as("server requests").isEqualTo(expected.attempts);
    assertThat(server.keysSeen()).as("keys").hasSize(expected.attempts).containsOnly(op.idempotencyKey());
    assertThat(server.stats().effects()).as("effects").isEqualTo(expected.effects).isLessThanOrEqualTo(1);
    assertThat(time.sleeps()).as("waits").isEqualTo(expected.waits);
    assertThat(okHttp.connectionPool().connectionCount()).as("connections in use")
        .isEqualTo(okHttp.connectionPool().idleConnectionCount());
  }

  @Provide
  Arbitrary<List<Step>> scripts() {
    return Arbitraries.of(Step.values()).list().ofMaxSize(4);
  }

  /** One scripted answer and what the rules make of it for a keyed POST. */
  enum Step {
    OK(Fault.ok(), 0, true, null),
    RESPONSE_LOST(Fault.processThenDrop(), -1, true, null),
    DROP_BEFORE_PROCESSING(Fault.dropBeforeProcessing(), -1, false, null),
    SLOW_HEADERS(Fault.delayHeaders(Duration.ofMillis(1_200)), -1, true, null),
    NO_RESPONSE(Fault.noResponse(), -1, false, null),
    S503(Fault.status(503), 503, false, null),
    S503_RETRY_AFTER_1(Fault.status(503, "1"), 503, false, Duration.ofSeconds(1)),
    S429_RETRY_AFTER_HUGE(Fault.status(429, "999999"), 429, false, Duration.ofSeconds(999_999)),
    S500(Fault.status(500), 500, false, null),
    S502_RETRY_AFTER_GARBAGE(Fault.status(502, "soon"), 502, false, null),
    /** An ordinary conflict: final. */
    S409(Fault.status(409), 409, false, null),
    /** A conflict that says "in progress" with a Retry-After. */
    S409_RETRY_AFTER_1(Fault.status(409, "1"), 409, false, Duration.ofSeconds(1)),
    S422(Fault.status(422), 422, false, null),
    S400(Fault.status(400), 400, false, null);

    final Fault fault;
    /** 0: the normal answer; -1: no response (an exception after the request was written). */
    final int status;
    final boolean processes;
    final Duration retryAfter;

    Step(Fault fault, int status, boolean processes, Duration retryAfter) {
      this.fault = fault;
      this.status = status;
      this.processes = processes;
      this.retryAfter = retryAfter;
    }

    /** Every scripted answer but 422, 400 and a 409 without a signal is retryable for a keyed POST. */
    boolean retryable() {
      return status != 422 && status != 400 && this != S409;
    }
  }

  /** The expected result: the rules of README and RetryLoop, applied step by step. */
  static final class Model {
    int attempts;
    int status = -1;
    boolean replayed;
    int effects;
    final List<Duration> waits = new ArrayList<>();

    static Model run(List<Step> script, int maxAttempts) {
      Model m = new Model();
      boolean recorded = false;
      // Whether an earlier attempt may have reached the server (an exception after the request was
      // written, or a 500/502): then a 409 is about that attempt (AnswerInContext).
      boolean mayHaveReached = false;
      for (int attempt = 1; attempt <= maxAttempts; attempt++) {
        Step step = attempt <= script.size() ? script.get(attempt - 1) : Step.OK;
        m.attempts = attempt;
        boolean aboutEarlier = (step == Step.S409 || step == Step.S409_RETRY_AFTER_1) && mayHaveReached;
        if (step.processes) {
          m.replayed = recorded;
          if (!recorded) {
            m.effects++;
            recorded = true;
          }
        }
        if (step == Step.OK) {
          m.status = 201;
          return m;
        }
        if (!step.retryable() && !aboutEarlier) {
          m.status = step.status;
          return m;
        }
        if (attempt == maxAttempts) {
          // -1: OutcomeUnknownException, after an exception or ending on a 409 about an earlier attempt
          m.status = aboutEarlier ? -1 : step.status;
          return m;
        }
        if (step.retryAfter != null && step.retryAfter.compareTo(MAX_RETRY_AFTER) > 0) {
          m.status = step.status;
          return m;
        }
        mayHaveReached |= step.status == -1 || step == Step.S500 || step == Step.S502_RETRY_AFTER_GARBAGE;
        m.replayed = false;
        m.waits.add(step.retryAfter != null && step.retryAfter.compareTo(BACKOFF) > 0
            ? step.retryAfter : BACKOFF);
      }
      throw new AssertionError("unreachable");
    }
  }
}
