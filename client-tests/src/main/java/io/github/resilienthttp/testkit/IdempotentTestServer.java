package io.github.resilienthttp.testkit;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import okio.ByteString;

/**
 * A test server that behaves like an idempotent payments API implementing the IETF draft "The
 * Idempotency-Key HTTP Header Field", with a per-attempt fault script. Built on MockWebServer 3
 * with a custom {@link Dispatcher}; plain HTTP/1.1 on the loopback interface. Accepted connections
 * have {@code TCP_NODELAY} set, so an exchange takes about a millisecond instead of the ~40 ms
 * Nagle/delayed-ACK stall MockWebServer otherwise shows between response headers and body.
 *
 * <h2>Request handling (when no fault applies)</h2>
 *
 * <ul>
 *   <li>Only the <em>effect methods</em> (default {@code POST} and {@code PATCH}) perform a business
 *       effect and take part in idempotency; other methods (GET, HEAD, PUT, ...) are handed to the
 *       {@link BusinessHandler} with effect number 0 and their key header is ignored.
 *   <li>First request with a key: sleeps for the processing time, performs the effect (counted,
 *       recorded as an {@link Effect}), builds the response with the handler and stores it against
 *       the key together with a SHA-256 fingerprint of method, path (with query) and body bytes.
 *       The key header value is used verbatim as an opaque string.
 *   <li>Same key and fingerprint, completed: the stored response is replayed with an extra {@code
 *       Idempotent-Replayed: true} header; no effect.
 *   <li>Same key and fingerprint, first request still processing: {@code 409} problem+json
 *       ({@value #PROBLEM_KEY_IN_USE}).
 *   <li>Same key, different fingerprint (checked first, even while the first request is still
 *       processing): {@code 422} problem+json ({@value #PROBLEM_KEY_MISMATCH}); no effect.
 *   <li>Effect method without key: {@code 400} problem+json ({@value #PROBLEM_KEY_MISSING}) if
 *       {@link Builder#requireKeyForNonIdempotent(boolean)}, otherwise processed with one new effect
 *       each time (how a naive client causes duplicates).
 * </ul>
 *
 * <h2>Faults</h2>
 *
 * Each request that reaches the dispatcher takes the next {@link Fault} from the script (FIFO),
 * else, if {@link #randomFaults(long, FaultMix) random mode} is on, draws one from the seeded
 * {@link Random}; else it is served normally. All faults are decided in {@code dispatch}, after the
 * whole request was read: {@link Dispatcher#peek()} is overridden to always return a plain response,
 * because MockWebServer calls it per connection (before a request is known) and, with concurrent
 * connections, a peeked fault could be attributed to the wrong request.
 *
 * <h2>Thread safety</h2>
 *
 * All methods are thread-safe; MockWebServer dispatches concurrently on one thread per connection.
 * Counters and snapshots are exact and consistent with each other (guarded by one lock); the
 * processing-time sleep happens outside the lock. There is no static mutable state.
 *
 * <p>Typical use:
 *
 * <pre>{@code
 * try (IdempotentTestServer server = IdempotentTestServer.builder()
 *     .processingTime(Duration.ofMillis(200)).build().start()) {
 *   server.script(Fault.processThenDrop(), Fault.status(503, "1"));
 *   HttpUrl url = server.url("/payments");
 *   ...
 *   assertThat(server.effectCount()).isEqualTo(1);
 * }
 * }</pre>
 */
public final class IdempotentTestServer implements Closeable {

  /** Default idempotency key request header name. */
  public static final String DEFAULT_KEY_HEADER = "Idempotency-Key";

  /** Default response header name marking replayed responses (value {@code true}). */
  public static final String DEFAULT_REPLAY_HEADER = "Idempotent-Replayed";

  /** Media type of the RFC 9457 problem details bodies. */
  public static final String PROBLEM_JSON = "application/problem+json";

  /** Problem type URI of the 409 "key in use" answer. */
  public static final String PROBLEM_KEY_IN_USE =
      "https://resilienthttp.github.io/problems/idempotency-key-in-use";

  /** Problem type URI of the 422 "key reused with another request" answer. */
  public static final String PROBLEM_KEY_MISMATCH =
      "https://resilienthttp.github.io/problems/idempotency-key-mismatch";

  /** Problem type URI of the 400 "key required" answer. */
  public static final String PROBLEM_KEY_MISSING =
      "https://resilienthttp.github.io/problems/idempotency-key-missing";

  /** Problem type URI of the 500 answer sent when the business handler throws. */
  public static final String PROBLEM_HANDLER_FAILED =
      "https://resilienthttp.github.io/problems/handler-failed";

  private final String keyHeader;
  private final String replayHeader;
  private final boolean requireKey;
  private final BusinessHandler handler;
  private final Set<String> effectMethods;
  private volatile long processingNanos;

  private final MockWebServer server = new MockWebServer();
  private final CountDownLatch closing = new CountDownLatch(1);
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger maxInFlight = new AtomicInteger();

  private final Object lock = new Object();
  // Everything below is guarded by lock.
  private int generation;
  private final ArrayDeque<Fault> script = new ArrayDeque<>();
  private Random random;
  private FaultMix mix;
  private final List<Entry> requests = new ArrayList<>();
  private final List<String> keysSeen = new ArrayList<>();
  private final Map<String, KeyState> keys = new HashMap<>();
  private final List<Effect> effects = new ArrayList<>();
  private int requestCount;
  private int replayCount;
  private int inProgressCount;
  private int mismatchCount;
  private int missingKeyCount;
  private int faultedCount;

  private IdempotentTestServer(Builder b) {
    this.keyHeader = b.keyHeader;
    this.replayHeader = b.replayHeader;
    this.requireKey = b.requireKey;
    this.handler = b.handler;
    this.effectMethods = Collections.unmodifiableSet(new LinkedHashSet<>(b.effectMethods));
    this.processingNanos = b.processingTime.toNanos();
    server.setServerSocketFactory(new NoDelayServerSocketFactory());
    server.setDispatcher(new KeyedDispatcher());
  }

  /**
   * Starts configuring a server.
   *
   * @return a new builder with the defaults described on {@link Builder}
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Builds a server with all defaults and starts it on the loopback interface, random port.
   *
   * @return the started server; close it when done
   * @throws IOException if the server socket cannot be bound
   */
  public static IdempotentTestServer startDefault() throws IOException {
    return builder().build().start();
  }

  /**
   * Binds the loopback interface on a random free port and starts serving. Calling it again is a
   * no-op; calling it after {@link #close()} fails.
   *
   * @return this server
   * @throws IOException if the server socket cannot be bound
   */
  public IdempotentTestServer start() throws IOException {
    synchronized (server) {
      server.start(InetAddress.getLoopbackAddress(), 0);
    }
    return this;
  }

  /**
   * Returns the URL of {@code path} on this server. The host is the loopback IP literal (e.g.
   * {@code 127.0.0.1}), never {@code localhost}, so clients do no DNS lookup and have exactly one
   * route. Starts the server if needed.
   *
   * @param path an absolute path, optionally with a query, e.g. {@code /payments}
   * @return the URL
   * @throws IllegalArgumentException if {@code path} cannot be resolved
   * @throws UncheckedIOException if the server had to be started and could not bind
   */
  public HttpUrl url(String path) {
    ensureStarted();
    int port = server.getPort();
    String host = server.getSocketAddress().getAddress().getHostAddress();
    HttpUrl base = new HttpUrl.Builder().scheme("http").host(host).port(port).build();
    HttpUrl url = base.resolve(path);
    if (url == null) {
      throw new IllegalArgumentException("invalid path: " + path);
    }
    return url;
  }

  /**
   * Returns the bound port. Starts the server if needed.
   *
   * @return the TCP port, 1..65535
   * @throws UncheckedIOException if the server had to be started and could not bind
   */
  public int port() {
    ensureStarted();
    return server.getPort();
  }

  private void ensureStarted() {
    try {
      start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Returns the underlying MockWebServer for advanced tests (e.g. {@code takeRequest()}). Do not
   * replace its dispatcher.
   *
   * @return the MockWebServer
   */
  public MockWebServer mockWebServer() {
    return server;
  }

  /**
   * Stops the server: wakes up requests sleeping in their processing time (they abort without
   * effect and their connection is closed), closes all connections (including stalled ones) and
   * releases the threads. Idempotent.
   */
  @Override
  public void close() {
    closing.countDown();
    server.close();
  }

  /**
   * Returns the configured idempotency key header name.
   *
   * @return e.g. {@code Idempotency-Key}
   */
  public String keyHeader() {
    return keyHeader;
  }

  /**
   * Returns the configured replay marker header name.
   *
   * @return e.g. {@code Idempotent-Replayed}
   */
  public String replayHeader() {
    return replayHeader;
  }

  /**
   * Changes the simulated processing time for requests arriving from now on.
   *
   * @param processingTime time slept inside dispatch before the effect happens; zero or positive
   * @return this server
   * @throws IllegalArgumentException if negative
   */
  public IdempotentTestServer processingTime(Duration processingTime) {
    this.processingNanos = checkNonNegative(processingTime, "processingTime").toNanos();
    return this;
  }

  /**
   * Returns the simulated processing time.
   *
   * @return the duration slept inside dispatch for every processed request
   */
  public Duration processingTime() {
    return Duration.ofNanos(processingNanos);
  }

  // ---------------------------------------------------------------- fault script

  /**
   * Appends faults to the script. Each request that reaches the dispatcher consumes exactly one
   * scripted fault, FIFO, in arrival order; scripted faults take precedence over random ones.
   *
   * @param faults the faults to append, in order
   * @return this server
   */
  public IdempotentTestServer script(Fault... faults) {
    Objects.requireNonNull(faults, "faults");
    synchronized (lock) {
      for (Fault f : faults) {
        script.addLast(Objects.requireNonNull(f, "fault"));
      }
    }
    return this;
  }

  /**
   * Removes all faults not consumed yet from the script (random mode is unaffected).
   *
   * @return this server
   */
  public IdempotentTestServer clearScript() {
    synchronized (lock) {
      script.clear();
    }
    return this;
  }

  /**
   * Returns the faults not consumed yet, in order.
   *
   * @return an immutable snapshot
   */
  public List<Fault> pendingScript() {
    synchronized (lock) {
      return List.copyOf(script);
    }
  }

  /**
   * Turns on seeded random faults for requests that find the script empty. Draws happen under the
   * server lock from one {@code new Random(seed)}, one draw per such request in arrival order, so
   * the same seed and the same arrival order give the same faults. Replaces a previous random mode.
   *
   * @param seed the seed of the {@link Random}
   * @param mix the fault probabilities
   * @return this server
   */
  public IdempotentTestServer randomFaults(long seed, FaultMix mix) {
    Objects.requireNonNull(mix, "mix");
    synchronized (lock) {
      this.random = new Random(seed);
      this.mix = mix;
    }
    return this;
  }

  /**
   * Turns random faults off (the script is unaffected).
   *
   * @return this server
   */
  public IdempotentTestServer stopRandomFaults() {
    synchronized (lock) {
      this.random = null;
      this.mix = null;
    }
    return this;
  }

  // ---------------------------------------------------------------- observations

  /**
   * Number of requests that reached the dispatcher (faulted or not). Requests that failed while
   * being read (e.g. the client hung up mid-body) never reach it and are not counted.
   *
   * @return the count since start or the last {@link #reset()}
   */
  public int requestCount() {
    synchronized (lock) {
      return requestCount;
    }
  }

  /**
   * Number of business effects performed (e.g. payments created).
   *
   * @return the count since start or the last {@link #reset()}
   */
  public int effectCount() {
    synchronized (lock) {
      return effects.size();
    }
  }

  /**
   * Snapshot of all effects in the order they were performed.
   *
   * @return an immutable list
   */
  public List<Effect> effects() {
    synchronized (lock) {
      return List.copyOf(effects);
    }
  }

  /**
   * Number of effects performed for one key.
   *
   * @param key the key header value verbatim; {@code null} counts keyless effects
   * @return the count, 0 or 1 for a key unless the server was misused
   */
  public int effectCountForKey(String key) {
    synchronized (lock) {
      int n = 0;
      for (Effect e : effects) {
        if (Objects.equals(e.key(), key)) {
          n++;
        }
      }
      return n;
    }
  }

  /**
   * Number of duplicate effects per business id: effects beyond the first one for the same id.
   * For example, a naive client that retries a lost "pay order 42" POST without a key creates two
   * effects with the same body and this returns 1 when {@code businessId} is {@link Effect#body()}.
   *
   * @param businessId extracts the business operation identity from an effect (null is an id too)
   * @return {@code effectCount() - distinct ids}; 0 means no operation happened twice
   */
  public int duplicateEffects(Function<Effect, String> businessId) {
    Objects.requireNonNull(businessId, "businessId");
    List<Effect> snapshot = effects();
    Set<String> ids = new HashSet<>();
    for (Effect e : snapshot) {
      ids.add(businessId.apply(e));
    }
    return snapshot.size() - ids.size();
  }

  /**
   * Duplicate effects using the request body as business id, see {@link
   * #duplicateEffects(Function)}.
   *
   * @return the number of effects beyond the first per distinct request body
   */
  public int duplicateEffects() {
    return duplicateEffects(Effect::body);
  }

  /**
   * Number of replayed responses (same key and fingerprint, already completed).
   *
   * @return the count since start or the last {@link #reset()}
   */
  public int replayCount() {
    synchronized (lock) {
      return replayCount;
    }
  }

  /**
   * Number of 409 answers (same key while the first request was still processing).
   *
   * @return the count since start or the last {@link #reset()}
   */
  public int inProgressCount() {
    synchronized (lock) {
      return inProgressCount;
    }
  }

  /**
   * Number of 422 answers (key reused with a different fingerprint).
   *
   * @return the count since start or the last {@link #reset()}
   */
  public int mismatchCount() {
    synchronized (lock) {
      return mismatchCount;
    }
  }

  /**
   * Number of effect-method requests (POST/PATCH by default) processed without a key header,
   * whether rejected with 400 (keys required) or processed with a new effect.
   *
   * @return the count since start or the last {@link #reset()}
   */
  public int missingKeyCount() {
    synchronized (lock) {
      return missingKeyCount;
    }
  }

  /**
   * Number of requests that got an actual fault (scripted or random; {@link Fault#ok()} does not
   * count).
   *
   * @return the count since start or the last {@link #reset()}
   */
  public int faultedCount() {
    synchronized (lock) {
      return faultedCount;
    }
  }

  /**
   * Key header values of all requests in arrival order, {@code null} for requests without one.
   *
   * @return an unmodifiable snapshot (may contain nulls)
   */
  public List<String> keysSeen() {
    synchronized (lock) {
      return Collections.unmodifiableList(new ArrayList<>(keysSeen));
    }
  }

  /**
   * Snapshots of all requests in arrival order, with their fault, outcome and sent status.
   *
   * @return an immutable list
   */
  public List<ReceivedRequest> requests() {
    synchronized (lock) {
      List<ReceivedRequest> out = new ArrayList<>(requests.size());
      for (Entry e : requests) {
        out.add(e.snapshot());
      }
      return List.copyOf(out);
    }
  }

  /**
   * Peak number of dispatch calls in flight at the same time (includes the processing time, but not
   * header delays, throttling or stalls, which happen after dispatch returns).
   *
   * @return the peak since start or the last {@link #reset()}
   */
  public int maxConcurrentRequests() {
    return maxInFlight.get();
  }

  /**
   * Number of dispatch calls in flight right now.
   *
   * @return the current count
   */
  public int inFlightRequests() {
    return inFlight.get();
  }

  /**
   * Clears all state: stored keys, effects, requests, counters, the peak concurrency, the script
   * and random mode. Requests still in flight finish normally but no longer affect the state.
   * Configuration (headers, handler, processing time) is kept.
   *
   * @return this server
   */
  public IdempotentTestServer reset() {
    synchronized (lock) {
      generation++;
      script.clear();
      random = null;
      mix = null;
      requests.clear();
      keysSeen.clear();
      keys.clear();
      effects.clear();
      requestCount = 0;
      replayCount = 0;
      inProgressCount = 0;
      mismatchCount = 0;
      missingKeyCount = 0;
      faultedCount = 0;
      maxInFlight.set(0);
    }
    return this;
  }

  @Override
  public String toString() {
    return "IdempotentTestServer[" + server + "]";
  }

  // ---------------------------------------------------------------- dispatching

  private MockResponse handle(RecordedRequest request) throws InterruptedException {
    String key = request.getHeaders().get(keyHeader);
    String method = request.getMethod();
    String path = pathOf(request);
    ByteString bodyBytes = request.getBody() == null ? ByteString.EMPTY : request.getBody();
    String body = bodyBytes.utf8();

    Entry entry;
    Fault fault;
    synchronized (lock) {
      requestCount++;
      keysSeen.add(key);
      fault = script.pollFirst();
      if (fault == null) {
        fault = random != null ? mix.draw(random) : Fault.ok();
      }
      if (fault.isFault()) {
        faultedCount++;
      }
      entry =
          new Entry(
              generation, requestCount, method, path, request.getHeaders(), body, key, fault);
      requests.add(entry);
    }

    switch (fault.kind()) {
      case STATUS:
        finish(entry, Outcome.FAULT_STATUS, fault.statusCode());
        return faultStatus(fault);
      case DROP_BEFORE_PROCESSING:
        finish(entry, Outcome.FAULT_DROPPED, -1);
        return closeSocket();
      case NO_RESPONSE:
        finish(entry, Outcome.FAULT_NO_RESPONSE, -1);
        return new MockResponse.Builder().onResponseStart(SocketEffect.Stall.INSTANCE).build();
      default:
        break;
    }

    Result result = process(entry, request, bodyBytes);
    if (result.outcome == Outcome.ABORTED) {
      finish(entry, Outcome.ABORTED, -1);
      return closeSocket();
    }
    MockResponse.Builder response = toMock(result.response, method);
    switch (fault.kind()) {
      case PROCESS_THEN_DROP:
        finish(entry, result.outcome, -1);
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
    finish(entry, result.outcome, result.response.status());
    return response.build();
  }

  private Result process(Entry entry, RecordedRequest request, ByteString bodyBytes)
      throws InterruptedException {
    String method = entry.method;
    if (!effectMethods.contains(method)) {
      if (!sleepProcessing()) {
        return Result.ABORTED;
      }
      return callHandler(request, 0, Outcome.SERVED);
    }

    String key = entry.key;
    if (key == null) {
      synchronized (lock) {
        if (entry.generation == generation) {
          missingKeyCount++;
        }
      }
      if (requireKey) {
        return new Result(
            Outcome.KEY_MISSING,
            problem(
                400,
                PROBLEM_KEY_MISSING,
                "Idempotency key missing"));
      }
      if (!sleepProcessing()) {
        return Result.ABORTED;
      }
      int n = recordEffect(entry);
      return callHandler(request, n, Outcome.CREATED);
    }

    String fingerprint = fingerprint(method, entry.path, bodyBytes);
    KeyState state;
    synchronized (lock) {
      KeyState existing = keys.get(key);
      if (existing != null) {
        if (!existing.fingerprint.equals(fingerprint)) {
          if (entry.generation == generation) {
            mismatchCount++;
          }
          return new Result(
              Outcome.KEY_MISMATCH,
              problem(422, PROBLEM_KEY_MISMATCH, "Idempotency key reused with a different request"));
        }
        if (existing.response == null) {
          if (entry.generation == generation) {
            inProgressCount++;
          }
          return new Result(
              Outcome.IN_PROGRESS, problem(409, PROBLEM_KEY_IN_USE, "Idempotency key in use"));
        }
        if (entry.generation == generation) {
          replayCount++;
        }
        return new Result(
            Outcome.REPLAYED, existing.response.withHeader(replayHeader, "true"));
      }
      state = new KeyState(fingerprint);
      if (entry.generation == generation) {
        keys.put(key, state);
      }
    }

    boolean completed = false;
    try {
      if (!sleepProcessing()) {
        return Result.ABORTED;
      }
      int n = recordEffect(entry);
      Result result = callHandler(request, n, Outcome.CREATED);
      if (result.outcome == Outcome.CREATED) {
        synchronized (lock) {
          state.response = result.response;
        }
        completed = true;
      }
      return result;
    } finally {
      if (!completed) {
        synchronized (lock) {
          keys.remove(key, state);
        }
      }
    }
  }

  /** Sleeps the processing time; false if the server is closing. */
  private boolean sleepProcessing() throws InterruptedException {
    long nanos = processingNanos;
    if (nanos <= 0) {
      return closing.getCount() > 0;
    }
    return !closing.await(nanos, TimeUnit.NANOSECONDS);
  }

  private int recordEffect(Entry entry) {
    synchronized (lock) {
      int n = effects.size() + 1;
      if (entry.generation == generation) {
        effects.add(new Effect(n, entry.key, entry.method, entry.path, entry.body));
      }
      return n;
    }
  }

  private Result callHandler(RecordedRequest request, int effectNumber, Outcome outcome) {
    try {
      ServerResponse response = handler.handle(request, effectNumber);
      if (response == null) {
        throw new NullPointerException("BusinessHandler returned null");
      }
      return new Result(outcome, response);
    } catch (Exception e) {
      return new Result(
          Outcome.HANDLER_FAILED,
          problem(500, PROBLEM_HANDLER_FAILED, "Handler failed"));
    }
  }

  private void finish(Entry entry, Outcome outcome, int status) {
    synchronized (lock) {
      entry.outcome = outcome;
      entry.status = status;
    }
  }

  private static ServerResponse problem(int status, String type, String title) {
    return ServerResponse.of(
        status,
        PROBLEM_JSON,
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

  private static Duration checkNonNegative(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative()) {
      throw new IllegalArgumentException(name + " must not be negative: " + d);
    }
    return d;
  }

  /** The MockWebServer dispatcher; all decisions are taken in dispatch, never in peek. */
  private final class KeyedDispatcher extends Dispatcher {
    private final MockResponse plain = new MockResponse.Builder().build();

    @Override
    public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
      int now = inFlight.incrementAndGet();
      maxInFlight.accumulateAndGet(now, Math::max);
      try {
        return handle(request);
      } finally {
        inFlight.decrementAndGet();
      }
    }

    /**
     * Called by MockWebServer per connection, before any request is read, for connection-level
     * effects (onRequestStart, failHandshake, informational responses, request body handling). It
     * must not consume or reveal a per-request fault, so it always returns a plain response.
     */
    @Override
    public MockResponse peek() {
      return plain;
    }

    @Override
    public void close() {
      closing.countDown();
    }
  }

  private static final class Result {
    static final Result ABORTED = new Result(Outcome.ABORTED, null);

    final Outcome outcome;
    final ServerResponse response;

    Result(Outcome outcome, ServerResponse response) {
      this.outcome = outcome;
      this.response = response;
    }
  }

  /** Per-key idempotency record; response is null while the first request is processing. */
  private static final class KeyState {
    final String fingerprint;
    ServerResponse response; // guarded by the server lock

    KeyState(String fingerprint) {
      this.fingerprint = fingerprint;
    }
  }

  /** Mutable per-request record; outcome and status are guarded by the server lock. */
  private static final class Entry {
    final int generation;
    final int sequence;
    final String method;
    final String path;
    final okhttp3.Headers headers;
    final String body;
    final String key;
    final Fault fault;
    Outcome outcome = Outcome.PENDING;
    int status = -1;

    Entry(
        int generation,
        int sequence,
        String method,
        String path,
        okhttp3.Headers headers,
        String body,
        String key,
        Fault fault) {
      this.generation = generation;
      this.sequence = sequence;
      this.method = method;
      this.path = path;
      this.headers = headers;
      this.body = body;
      this.key = key;
      this.fault = fault;
    }

    ReceivedRequest snapshot() {
      return new ReceivedRequest(
          sequence, method, path, headers, body, key, fault, outcome, status);
    }
  }

  /**
   * Configures an {@link IdempotentTestServer}. Defaults: key header {@value
   * IdempotentTestServer#DEFAULT_KEY_HEADER}, replay header {@value
   * IdempotentTestServer#DEFAULT_REPLAY_HEADER}, processing time 0, keys not required, effect
   * methods POST and PATCH, {@link BusinessHandler#defaultHandler()}. Not thread-safe; use from
   * one thread.
   */
  public static final class Builder {
    private String keyHeader = DEFAULT_KEY_HEADER;
    private String replayHeader = DEFAULT_REPLAY_HEADER;
    private boolean requireKey;
    private BusinessHandler handler = BusinessHandler.defaultHandler();
    private Set<String> effectMethods = new LinkedHashSet<>(List.of("POST", "PATCH"));
    private Duration processingTime = Duration.ZERO;

    private Builder() {}

    /**
     * Sets the idempotency key request header name (matched case-insensitively).
     *
     * @param name the header name
     * @return this builder
     */
    public Builder keyHeader(String name) {
      this.keyHeader = requireName(name);
      return this;
    }

    /**
     * Sets the name of the header added (value {@code true}) to replayed responses.
     *
     * @param name the header name
     * @return this builder
     */
    public Builder replayHeader(String name) {
      this.replayHeader = requireName(name);
      return this;
    }

    /**
     * Sets how long each processed request sleeps inside dispatch before its effect happens (the
     * window in which a concurrent request with the same key gets 409). Can be changed later with
     * {@link IdempotentTestServer#processingTime(Duration)}.
     *
     * @param processingTime zero or positive
     * @return this builder
     */
    public Builder processingTime(Duration processingTime) {
      this.processingTime = checkNonNegative(processingTime, "processingTime");
      return this;
    }

    /**
     * Whether effect-method requests without a key are rejected with 400 (default false: they are
     * processed, one new effect each).
     *
     * @param require true to require keys
     * @return this builder
     */
    public Builder requireKeyForNonIdempotent(boolean require) {
      this.requireKey = require;
      return this;
    }

    /**
     * Sets the business handler that builds responses of processed requests.
     *
     * @param handler a thread-safe handler
     * @return this builder
     */
    public Builder handler(BusinessHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /**
     * Sets the methods that perform a business effect and use idempotency keys (default POST,
     * PATCH). Other methods never create effects.
     *
     * @param methods method names, case-sensitive (upper case)
     * @return this builder
     */
    public Builder effectMethods(String... methods) {
      Set<String> set = new LinkedHashSet<>();
      for (String m : methods) {
        set.add(Objects.requireNonNull(m, "method").toUpperCase(Locale.ROOT));
      }
      this.effectMethods = set;
      return this;
    }

    /**
     * Builds the (not yet started) server.
     *
     * @return the server; call {@link IdempotentTestServer#start()}
     */
    public IdempotentTestServer build() {
      return new IdempotentTestServer(this);
    }

    /**
     * Builds and starts the server.
     *
     * @return the started server
     * @throws IOException if the server socket cannot be bound
     */
    public IdempotentTestServer start() throws IOException {
      return build().start();
    }

    private static String requireName(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank()) {
        throw new IllegalArgumentException("header name must not be blank");
      }
      return name;
    }
  }
}
