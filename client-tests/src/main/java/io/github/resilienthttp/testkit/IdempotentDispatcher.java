package io.github.resilienthttp.testkit;

import io.github.resilienthttp.TimeSource;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import okio.ByteString;

/**
 * The request handling of {@link IdempotentTestServer}: logs the request, applies its fault, and
 * runs the idempotency steps against the {@link IdempotencyLedger} (claim, business write,
 * complete), with the configured {@link Flaw} and an armed {@link CrashPoint}. All decisions are
 * taken in {@link #dispatch}, never in {@link #peek}: MockWebServer calls {@code peek} per
 * connection, before a request is known, and with concurrent connections a peeked fault could be
 * attributed to the wrong request. Not API.
 */
final class IdempotentDispatcher extends Dispatcher {

  /** The immutable settings of one server. */
  record Settings(
      String keyHeader,
      String replayHeader,
      boolean requireKey,
      BusinessHandler handler,
      Set<String> effectMethods,
      Flaw flaw,
      long leaseNanos,
      long retentionNanos,
      TimeSource clock) {}

  private final Settings settings;
  private final IdempotencyLedger ledger;
  private final RequestLog log;
  private final FaultPlan plan;
  private final AtomicLong processingNanos;
  private final CountDownLatch closing;
  private final AtomicReference<CrashPoint> armedCrash = new AtomicReference<>();
  private final Runnable onCrash;
  private volatile boolean crashed;
  private final MockResponse plain = new MockResponse.Builder().build();

  IdempotentDispatcher(
      Settings settings,
      IdempotencyLedger ledger,
      RequestLog log,
      FaultPlan plan,
      AtomicLong processingNanos,
      CountDownLatch closing,
      Runnable onCrash) {
    this.settings = settings;
    this.ledger = ledger;
    this.log = log;
    this.plan = plan;
    this.processingNanos = processingNanos;
    this.closing = closing;
    this.onCrash = onCrash;
  }

  void armCrash(CrashPoint point) {
    armedCrash.set(point);
  }

  boolean crashed() {
    return crashed;
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
    log.enter();
    try {
      return handle(request);
    } finally {
      log.exit();
    }
  }

  /**
   * Called by MockWebServer per connection, before any request is read, for connection-level
   * effects. It must not consume or reveal a per-request fault, so it always returns a plain
   * response.
   */
  @Override
  public MockResponse peek() {
    return plain;
  }

  @Override
  public void close() {
    closing.countDown();
  }

  private MockResponse handle(RecordedRequest request) throws InterruptedException {
    String key = request.getHeaders().get(settings.keyHeader());
    String method = request.getMethod();
    String path = pathOf(request);
    ByteString bodyBytes = request.getBody() == null ? ByteString.EMPTY : request.getBody();
    RequestLog.Entry entry =
        log.arrive(method, path, request.getHeaders(), bodyBytes.utf8(), key, plan);
    if (crashed) {
      log.finish(entry, Outcome.CRASHED, -1);
      return closeSocket();
    }
    Fault fault = entry.fault;
    switch (fault.kind()) {
      case STATUS:
        log.finish(entry, Outcome.FAULT_STATUS, fault.statusCode());
        return faultStatus(fault);
      case DROP_BEFORE_PROCESSING:
        log.finish(entry, Outcome.FAULT_DROPPED, -1);
        return closeSocket();
      case NO_RESPONSE:
        log.finish(entry, Outcome.FAULT_NO_RESPONSE, -1);
        return new MockResponse.Builder().onResponseStart(SocketEffect.Stall.INSTANCE).build();
      default:
        break;
    }

    Result result = process(entry, request, bodyBytes);
    if (result.outcome == Outcome.ABORTED || result.outcome == Outcome.CRASHED) {
      log.finish(entry, result.outcome, -1);
      if (result.outcome == Outcome.CRASHED) {
        onCrash.run(); // after the log is written: the stop closes the client's connection
      }
      return closeSocket();
    }
    MockResponse.Builder response = toMock(result.response, method);
    switch (fault.kind()) {
      case PROCESS_THEN_DROP:
        log.finish(entry, result.outcome, -1);
        return response.onResponseStart(new SocketEffect.CloseSocket(true, false, false)).build();
      case DELAY_HEADERS:
        response.headersDelay(fault.delay().toNanos(), TimeUnit.NANOSECONDS);
        break;
      case THROTTLE_BODY:
        response.throttleBody(
            fault.bytesPerPeriod(), fault.period().toNanos(), TimeUnit.NANOSECONDS);
        break;
      default:
        break;
    }
    log.finish(entry, result.outcome, result.response.status());
    return response.build();
  }

  private Result process(RequestLog.Entry entry, RecordedRequest request, ByteString bodyBytes)
      throws InterruptedException {
    if (!settings.effectMethods().contains(entry.method)) {
      if (!sleepProcessing()) {
        return Result.ABORTED;
      }
      return callHandler(request, 0, Outcome.SERVED);
    }
    int epoch = ledger.epoch();
    String key = entry.key;
    if (key == null) {
      log.count(entry, RequestLog.Counter.MISSING_KEY);
      if (settings.requireKey()) {
        return new Result(
            Outcome.KEY_MISSING,
            problem(400, IdempotentTestServer.PROBLEM_KEY_MISSING, "Idempotency key missing"));
      }
      return execute(entry, request, epoch, -1);
    }
    if (settings.flaw() == Flaw.NO_DEDUPLICATION) {
      return execute(entry, request, epoch, -1);
    }

    String fingerprint = fingerprint(entry.method, entry.path, bodyBytes);
    boolean race = settings.flaw() == Flaw.CHECK_THEN_INSERT_RACE;
    IdempotencyLedger.Claim claim =
        ledger.claim(
            epoch,
            key,
            fingerprint,
            now(),
            settings.leaseNanos(),
            settings.flaw() == Flaw.FORGETS_KEYS_AT_ONCE ? 0 : settings.retentionNanos(),
            settings.flaw() != Flaw.FINGERPRINT_NOT_CHECKED,
            !race);
    switch (claim.kind()) {
      case MISMATCH:
        log.count(entry, RequestLog.Counter.MISMATCH);
        return new Result(
            Outcome.KEY_MISMATCH,
            problem(
                422,
                IdempotentTestServer.PROBLEM_KEY_MISMATCH,
                "Idempotency key reused with a different request"));
      case IN_PROGRESS:
        log.count(entry, RequestLog.Counter.IN_PROGRESS);
        return new Result(
            Outcome.IN_PROGRESS,
            problem(409, IdempotentTestServer.PROBLEM_KEY_IN_USE, "Idempotency key in use"));
      case REPLAY:
        log.count(entry, RequestLog.Counter.REPLAY);
        ServerResponse recorded = claim.response();
        if (settings.flaw() == Flaw.REPLAYS_DIFFERENT_RESULT) {
          recorded = new ServerResponse(200, recorded.headers(), recorded.body());
        }
        return new Result(Outcome.REPLAYED, recorded.withHeader(settings.replayHeader(), "true"));
      case RECOVER:
        return recover(entry, request, epoch, claim);
      default:
        break;
    }
    if (race) {
      return executeRacy(entry, request, epoch, fingerprint);
    }
    return executeClaimed(entry, request, epoch, claim.token());
  }

  /** Executes a request holding the record claimed with {@code token}: write, complete, answer. */
  private Result executeClaimed(
      RequestLog.Entry entry, RecordedRequest request, int epoch, long token)
      throws InterruptedException {
    String key = entry.key;
    boolean keep = false;
    try {
      if (crashHere(CrashPoint.AFTER_KEY_REGISTERED)) {
        keep = true;
        return Result.CRASHED;
      }
      if (!sleepProcessing()) {
        return Result.ABORTED;
      }
      Effect effect = ledger.write(epoch, token, key, entry.method, entry.path, entry.body);
      if (effect == null) {
        // Our lease was taken over while we worked: the new owner answers for the key.
        keep = true;
        log.count(entry, RequestLog.Counter.IN_PROGRESS);
        return new Result(
            Outcome.IN_PROGRESS,
            problem(409, IdempotentTestServer.PROBLEM_KEY_IN_USE, "Idempotency key in use"));
      }
      if (crashHere(CrashPoint.AFTER_BUSINESS_WRITE)) {
        keep = true;
        return Result.CRASHED;
      }
      Result result = callHandler(request, effect.number(), Outcome.CREATED);
      if (result.outcome == Outcome.CREATED) {
        keep = ledger.complete(epoch, token, key, result.response, now());
        if (settings.flaw() == Flaw.FORGETS_KEYS_AT_ONCE) {
          ledger.forget(epoch, key);
        }
        if (crashHere(CrashPoint.AFTER_KEY_COMPLETED)) {
          return Result.CRASHED;
        }
      }
      return result;
    } finally {
      if (!keep) {
        ledger.release(epoch, token, key);
      }
    }
  }

  /** {@link Flaw#CHECK_THEN_INSERT_RACE}: looked up, found nothing, records only at the end. */
  private Result executeRacy(
      RequestLog.Entry entry, RecordedRequest request, int epoch, String fingerprint)
      throws InterruptedException {
    if (!sleepProcessing()) {
      return Result.ABORTED;
    }
    Effect effect = ledger.write(epoch, -1, entry.key, entry.method, entry.path, entry.body);
    Result result = callHandler(request, effect.number(), Outcome.CREATED);
    if (result.outcome == Outcome.CREATED) {
      ledger.put(epoch, entry.key, fingerprint, result.response, now());
    }
    return result;
  }

  /** A request without a usable record: one new effect. */
  private Result execute(RequestLog.Entry entry, RecordedRequest request, int epoch, long token)
      throws InterruptedException {
    if (!sleepProcessing()) {
      return Result.ABORTED;
    }
    Effect effect = ledger.write(epoch, token, entry.key, entry.method, entry.path, entry.body);
    return callHandler(request, effect.number(), Outcome.CREATED);
  }

  /** The lease expired and the business write exists: rebuild, complete, answer as a replay. */
  private Result recover(
      RequestLog.Entry entry, RecordedRequest request, int epoch, IdempotencyLedger.Claim claim) {
    log.count(entry, RequestLog.Counter.RECOVERY);
    Result rebuilt = callHandler(request, claim.written().number(), Outcome.RECOVERED);
    if (rebuilt.outcome != Outcome.RECOVERED) {
      return rebuilt; // the record stays in progress; the lease will expire again
    }
    ledger.complete(epoch, claim.token(), entry.key, rebuilt.response, now());
    return new Result(
        Outcome.RECOVERED, rebuilt.response.withHeader(settings.replayHeader(), "true"));
  }

  private boolean crashHere(CrashPoint point) {
    if (armedCrash.compareAndSet(point, null)) {
      crashed = true;
      return true;
    }
    return false;
  }

  private long now() {
    return settings.clock().nanoTime();
  }

  /** Sleeps the processing time; false if the server is closing. */
  private boolean sleepProcessing() throws InterruptedException {
    long nanos = processingNanos.get();
    if (nanos <= 0) {
      return closing.getCount() > 0;
    }
    return !closing.await(nanos, TimeUnit.NANOSECONDS);
  }

  private Result callHandler(RecordedRequest request, int effectNumber, Outcome outcome) {
    try {
      ServerResponse response = settings.handler().handle(request, effectNumber);
      if (response == null) {
        throw new NullPointerException("BusinessHandler returned null");
      }
      return new Result(outcome, response);
    } catch (Exception e) {
      return new Result(
          Outcome.HANDLER_FAILED,
          problem(500, IdempotentTestServer.PROBLEM_HANDLER_FAILED, "Handler failed"));
    }
  }

  private static ServerResponse problem(int status, String type, String title) {
    return ServerResponse.of(
        status,
        IdempotentTestServer.PROBLEM_JSON,
        "{\"type\":\"" + type + "\",\"title\":\"" + title + "\",\"status\":" + status + "}");
  }

  private static MockResponse faultStatus(Fault fault) {
    MockResponse.Builder b =
        new MockResponse.Builder()
            .status(statusLine(fault.statusCode()))
            .addHeader("Content-Type", "text/plain; charset=utf-8");
    if (fault.retryAfter() != null) {
      b.addHeaderLenient("Retry-After", fault.retryAfter());
    }
    return b.body("injected fault: status " + fault.statusCode() + "\n").build();
  }

  private static MockResponse closeSocket() {
    return new MockResponse.Builder()
        .onResponseStart(new SocketEffect.CloseSocket(true, false, false))
        .build();
  }

  private static MockResponse.Builder toMock(ServerResponse response, String method) {
    MockResponse.Builder b =
        new MockResponse.Builder().status(statusLine(response.status())).headers(response.headers());
    if ("HEAD".equals(method)) {
      b.setHeader("Content-Length", response.body().getBytes(StandardCharsets.UTF_8).length);
    } else {
      b.body(response.body());
    }
    return b;
  }

  private static String statusLine(int code) {
    String reason;
    switch (code) {
      case 200: reason = "OK"; break;
      case 201: reason = "Created"; break;
      case 202: reason = "Accepted"; break;
      case 204: reason = "No Content"; break;
      case 400: reason = "Bad Request"; break;
      case 404: reason = "Not Found"; break;
      case 408: reason = "Request Timeout"; break;
      case 409: reason = "Conflict"; break;
      case 422: reason = "Unprocessable Content"; break;
      case 425: reason = "Too Early"; break;
      case 429: reason = "Too Many Requests"; break;
      case 500: reason = "Internal Server Error"; break;
      case 502: reason = "Bad Gateway"; break;
      case 503: reason = "Service Unavailable"; break;
      case 504: reason = "Gateway Timeout"; break;
      default: reason = code < 300 ? "OK" : code < 400 ? "Redirection"
          : code < 500 ? "Client Error" : "Server Error";
    }
    return "HTTP/1.1 " + code + " " + reason;
  }

  private static String pathOf(RecordedRequest request) {
    HttpUrl url = request.getUrl();
    String query = url.encodedQuery();
    return query == null ? url.encodedPath() : url.encodedPath() + "?" + query;
  }

  private static String fingerprint(String method, String path, ByteString body) {
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      sha256.update(method.getBytes(StandardCharsets.UTF_8));
      sha256.update((byte) '\n');
      sha256.update(path.getBytes(StandardCharsets.UTF_8));
      sha256.update((byte) '\n');
      sha256.update(body.toByteArray());
      return ByteString.of(sha256.digest()).hex();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }

  private static final class Result {
    static final Result ABORTED = new Result(Outcome.ABORTED, null);
    static final Result CRASHED = new Result(Outcome.CRASHED, null);

    final Outcome outcome;
    final ServerResponse response;

    Result(Outcome outcome, ServerResponse response) {
      this.outcome = outcome;
      this.response = response;
    }
  }
}
