package io.github.resilienthttp.testkit;

import io.github.resilienthttp.TimeSource;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import mockwebserver3.MockWebServer;
import okhttp3.HttpUrl;

/**
 * A test server that behaves like an idempotent payments API implementing the IETF draft "The
 * Idempotency-Key HTTP Header Field", with a per-attempt fault script, deliberate {@link Flaw}s and
 * {@link CrashPoint crash drills}. Built on MockWebServer 3; plain HTTP/1.1 on the loopback
 * interface. Accepted connections have {@code TCP_NODELAY} set, so an exchange takes about a
 * millisecond instead of the ~40 ms Nagle/delayed-ACK stall MockWebServer otherwise shows.
 *
 * <p>This class is the façade. The parts, one idea each: the {@link IdempotencyLedger} (key →
 * record, fingerprint, replay, 409/422, leases, business writes; durable across restarts), the
 * fault plan (script and seeded random faults), the request log, and {@link ServerStats}, one
 * immutable value with every count.
 *
 * <h2>Request handling (when no fault applies)</h2>
 *
 * <ul>
 *   <li>Only the <em>effect methods</em> (default {@code POST} and {@code PATCH}) perform a business
 *       effect and take part in idempotency; other methods (GET, HEAD, PUT, ...) are handed to the
 *       {@link BusinessHandler} with effect number 0 and their key header is ignored.
 *   <li>First request with a key: claims it in the ledger (an in-progress record with a lease),
 *       sleeps for the processing time, performs the effect (a business write stored with the key,
 *       an {@link Effect}), builds the response with the handler and completes the record with it
 *       and a SHA-256 fingerprint of method, path (with query) and body bytes. The key header value
 *       is used verbatim as an opaque string.
 *   <li>Same key and fingerprint, completed: the stored response is replayed with an extra {@code
 *       Idempotent-Replayed: true} header; no effect.
 *   <li>Same key and fingerprint, first request still in progress (its lease running): {@code 409}
 *       problem+json ({@value #PROBLEM_KEY_IN_USE}). After the lease, the record is taken over: see
 *       {@link CrashPoint} for the recovery.
 *   <li>Same key, different fingerprint (checked first, even while the first request is still
 *       processing): {@code 422} problem+json ({@value #PROBLEM_KEY_MISMATCH}); no effect.
 *   <li>Effect method without key: {@code 400} problem+json ({@value #PROBLEM_KEY_MISSING}) if
 *       {@link Builder#requireKeyForNonIdempotent(boolean)}, otherwise processed with one new effect
 *       each time (how a naive client causes duplicates).
 *   <li>A completed record is forgotten once {@link Builder#retention(Duration)} has passed since it
 *       was completed (kept for ever by default): the next request with its key is new.
 * </ul>
 *
 * <h2>Faults</h2>
 *
 * Each request that reaches the dispatcher takes the next {@link Fault} from the script (FIFO),
 * else, if {@link #randomFaults(long, FaultMix) random mode} is on, draws one from the seeded
 * {@link java.util.Random}; else it is served normally. All faults are decided after the whole
 * request was read.
 *
 * <h2>Thread safety</h2>
 *
 * All methods are thread-safe; MockWebServer dispatches concurrently on one thread per connection.
 * The processing-time sleep happens outside every lock. There is no static mutable state.
 *
 * <p>Typical use:
 *
 * <pre>{@code
 * try (IdempotentTestServer server = IdempotentTestServer.builder()
 *     .processingTime(Duration.ofMillis(200)).build().start()) {
 *   server.script(Fault.processThenDrop(), Fault.status(503, "1"));
 *   HttpUrl url = server.url("/payments");
 *   ...
 *   assertThat(server.stats().effects()).isEqualTo(1);
 * }
 * }</pre>
 */
public final class IdempotentTestServer implements Closeable {

  /** Default idempotency key request header name. */
  public static final String DEFAULT_KEY_HEADER = "Idempotency-Key";

  /** Default response header name marking replayed responses (value {@code true}). */
  public static final String DEFAULT_REPLAY_HEADER = "Idempotent-Replayed";

  /** Default lease of an in-progress record (see {@link CrashPoint}). */
  public static final Duration DEFAULT_IN_PROGRESS_LEASE = Duration.ofSeconds(30);

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

  private final Builder config;
  private final int requestedPort;
  private final IdempotencyLedger ledger;
  private final AtomicLong processingNanos;
  private final MockWebServer server = new MockWebServer();
  private final CountDownLatch closing = new CountDownLatch(1);
  private final FaultPlan plan = new FaultPlan();
  private final RequestLog log = new RequestLog();
  private final IdempotentDispatcher dispatcher;
  private final Thread stopper;
  private final java.util.concurrent.atomic.AtomicBoolean stopping =
      new java.util.concurrent.atomic.AtomicBoolean();

  private IdempotentTestServer(Builder b, int port) {
    this.config = b.copy();
    this.requestedPort = port;
    this.ledger = b.ledger != null ? b.ledger : new IdempotencyLedger();
    this.config.ledger = ledger;
    this.processingNanos = new AtomicLong(b.processingTime.toNanos());
    this.stopper = new Thread(this::close, "IdempotentTestServer crash");
    stopper.setDaemon(true);
    IdempotentDispatcher.Settings settings =
        new IdempotentDispatcher.Settings(
            b.keyHeader,
            b.replayHeader,
            b.requireKey,
            b.handler,
            Collections.unmodifiableSet(new LinkedHashSet<>(b.effectMethods)),
            b.flaw,
            b.lease.toNanos(),
            b.retention == null ? -1 : b.retention.toNanos(),
            b.clock);
    this.dispatcher =
        new IdempotentDispatcher(
            settings, ledger, log, plan, processingNanos, closing, this::crash);
    server.setServerSocketFactory(new NoDelayServerSocketFactory());
    server.setDispatcher(dispatcher);
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
   * Binds the loopback interface (a random free port, or the port of the server this one {@link
   * #restart() restarts}) and starts serving. Calling it again is a no-op; calling it after {@link
   * #close()} fails.
   *
   * @return this server
   * @throws IOException if the server socket cannot be bound
   */
  public IdempotentTestServer start() throws IOException {
    synchronized (server) {
      server.start(InetAddress.getLoopbackAddress(), requestedPort);
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
   * releases the threads. Idempotent. The ledger is kept.
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
    return config.keyHeader;
  }

  /**
   * Returns the configured replay marker header name.
   *
   * @return e.g. {@code Idempotent-Replayed}
   */
  public String replayHeader() {
    return config.replayHeader;
  }

  /**
   * Returns this server's durable state, shared with the servers that {@link #restart() restart}
   * it.
   *
   * @return the ledger
   */
  public IdempotencyLedger ledger() {
    return ledger;
  }

  /**
   * Changes the simulated processing time for requests arriving from now on.
   *
   * @param processingTime time slept inside dispatch before the effect happens; zero or positive
   * @return this server
   * @throws IllegalArgumentException if negative
   */
  public IdempotentTestServer processingTime(Duration processingTime) {
    processingNanos.set(checkNonNegative(processingTime, "processingTime").toNanos());
    return this;
  }

  /**
   * Returns the simulated processing time.
   *
   * @return the duration slept inside dispatch for every processed request
   */
  public Duration processingTime() {
    return Duration.ofNanos(processingNanos.get());
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
    plan.append(faults);
    return this;
  }

  /**
   * Removes all faults not consumed yet from the script (random mode is unaffected).
   *
   * @return this server
   */
  public IdempotentTestServer clearScript() {
    plan.clearScript();
    return this;
  }

  /**
   * Returns the faults not consumed yet, in order.
   *
   * @return an immutable snapshot
   */
  public List<Fault> pendingScript() {
    return plan.pending();
  }

  /**
   * Turns on seeded random faults for requests that find the script empty: one draw per such
   * request in arrival order from one {@code new Random(seed)}, so the same seed and the same
   * arrival order give the same faults. Replaces a previous random mode.
   *
   * @param seed the seed of the {@link java.util.Random}
   * @param mix the fault probabilities
   * @return this server
   */
  public IdempotentTestServer randomFaults(long seed, FaultMix mix) {
    plan.randomFaults(seed, mix);
    return this;
  }

  /**
   * Turns random faults off (the script is unaffected).
   *
   * @return this server
   */
  public IdempotentTestServer stopRandomFaults() {
    plan.stopRandomFaults();
    return this;
  }

  // ---------------------------------------------------------------- crash drills

  /**
   * Arms a one-shot crash: the next keyed request that reaches {@code point} closes its connection
   * unanswered, and the server stops as a process that died (requests in flight are dropped, the
   * listening socket closes). What the ledger holds stays. Use {@link #restart()} to bring a server
   * back on the same ledger.
   *
   * @param point where to crash
   * @return this server
   */
  public IdempotentTestServer crashAt(CrashPoint point) {
    dispatcher.armCrash(Objects.requireNonNull(point, "point"));
    return this;
  }

  /**
   * Tells whether an armed crash happened.
   *
   * @return true once the server crashed
   */
  public boolean crashed() {
    return dispatcher.crashed();
  }

  /**
   * Starts a new server with this one's configuration and {@link #ledger() ledger}, on the same
   * port when it is free again (else a random one: use the new server's {@link #url(String)}). This
   * server is closed first (waiting for a crash to finish stopping it). Its log and counts are not
   * carried over; the ledger's effects are.
   *
   * @return the new, started server
   * @throws IOException if no port can be bound
   */
  public IdempotentTestServer restart() throws IOException {
    int port = server.getStarted() ? server.getPort() : 0;
    close();
    if (stopper.isAlive()) {
      try {
        stopper.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted waiting for the crash to stop");
      }
    }
    try {
      return new IdempotentTestServer(config, port).start();
    } catch (BindException e) {
      return new IdempotentTestServer(config, 0).start();
    }
  }

  private void crash() {
    closing.countDown();
    if (stopping.compareAndSet(false, true)) {
      stopper.start(); // close() from another thread: the crashing dispatch thread must return
    }
  }

  // ---------------------------------------------------------------- observations

  /**
   * Every count of this server, as one consistent snapshot.
   *
   * @return the counts
   */
  public ServerStats stats() {
    return log.stats(ledger.effectCount());
  }

  /**
   * Snapshot of all effects (business writes of the ledger) in the order they were performed.
   *
   * @return an immutable list
   */
  public List<Effect> effects() {
    return ledger.effects();
  }

  /**
   * Number of effects performed for one key.
   *
   * @param key the key header value verbatim; {@code null} counts keyless effects
   * @return the count, 0 or 1 for a key unless the server was misused or is {@link Flaw flawed}
   */
  public int effectCountForKey(String key) {
    int n = 0;
    for (Effect e : ledger.effects()) {
      if (Objects.equals(e.key(), key)) {
        n++;
      }
    }
    return n;
  }

  /**
   * Number of duplicate effects per business id: effects beyond the first one for the same id.
   * For example, a naive client that retries a lost "pay order 42" POST without a key creates two
   * effects with the same body and this returns 1 when {@code businessId} is {@link Effect#body()}.
   *
   * @param businessId extracts the business operation identity from an effect (null is an id too)
   * @return {@code effects - distinct ids}; 0 means no operation happened twice
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
   * Key header values of all requests in arrival order, {@code null} for requests without one.
   *
   * @return an unmodifiable snapshot (may contain nulls)
   */
  public List<String> keysSeen() {
    return log.keysSeen();
  }

  /**
   * Snapshots of all requests in arrival order, with their fault, outcome and sent status.
   *
   * @return an immutable list
   */
  public List<ReceivedRequest> requests() {
    return log.requests();
  }

  /**
   * Clears all state: the ledger (records and effects), requests, counters, the peak concurrency,
   * the script and random mode. Requests still in flight finish normally but no longer affect the
   * state. Configuration (headers, handler, processing time) is kept.
   *
   * @return this server
   */
  public IdempotentTestServer reset() {
    log.reset();
    plan.reset();
    ledger.clear();
    return this;
  }

  @Override
  public String toString() {
    return "IdempotentTestServer[" + server + "]";
  }

  private static Duration checkNonNegative(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative()) {
      throw new IllegalArgumentException(name + " must not be negative: " + d);
    }
    return d;
  }

  /**
   * Configures an {@link IdempotentTestServer}. Defaults: key header {@value
   * IdempotentTestServer#DEFAULT_KEY_HEADER}, replay header {@value
   * IdempotentTestServer#DEFAULT_REPLAY_HEADER}, processing time 0, keys not required, effect
   * methods POST and PATCH, {@link BusinessHandler#defaultHandler()}, a new ledger, no {@link Flaw},
   * an in-progress lease of 30 s, completed records kept for ever, the system clock. Not
   * thread-safe; use from one thread.
   */
  public static final class Builder {
    private String keyHeader = DEFAULT_KEY_HEADER;
    private String replayHeader = DEFAULT_REPLAY_HEADER;
    private boolean requireKey;
    private BusinessHandler handler = BusinessHandler.defaultHandler();
    private Set<String> effectMethods = new LinkedHashSet<>(List.of("POST", "PATCH"));
    private Duration processingTime = Duration.ZERO;
    private IdempotencyLedger ledger;
    private Flaw flaw = Flaw.NONE;
    private Duration lease = DEFAULT_IN_PROGRESS_LEASE;
    private Duration retention;
    private TimeSource clock = TimeSource.system();

    private Builder() {}

    private Builder copy() {
      Builder b = new Builder();
      b.keyHeader = keyHeader;
      b.replayHeader = replayHeader;
      b.requireKey = requireKey;
      b.handler = handler;
      b.effectMethods = new LinkedHashSet<>(effectMethods);
      b.processingTime = processingTime;
      b.ledger = ledger;
      b.flaw = flaw;
      b.lease = lease;
      b.retention = retention;
      b.clock = clock;
      return b;
    }

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
     * Sets the durable state to serve from, e.g. the ledger of a server that crashed (default: a
     * new, empty one).
     *
     * @param ledger the ledger
     * @return this builder
     */
    public Builder ledger(IdempotencyLedger ledger) {
      this.ledger = Objects.requireNonNull(ledger, "ledger");
      return this;
    }

    /**
     * Makes the server deliberately broken in one way (default {@link Flaw#NONE}).
     *
     * @param flaw the flaw
     * @return this builder
     */
    public Builder flaw(Flaw flaw) {
      this.flaw = Objects.requireNonNull(flaw, "flaw");
      return this;
    }

    /**
     * Sets how long an in-progress record belongs to the request that claimed it; after that, a
     * request with its key takes it over (see {@link CrashPoint}). Default 30 s.
     *
     * @param lease positive
     * @return this builder
     * @throws IllegalArgumentException if not positive
     */
    public Builder inProgressLease(Duration lease) {
      Objects.requireNonNull(lease, "inProgressLease");
      if (lease.isNegative() || lease.isZero()) {
        throw new IllegalArgumentException("inProgressLease must be positive: " + lease);
      }
      this.lease = lease;
      return this;
    }

    /**
     * Sets how long a completed record is kept; a request with its key after that is new (it
     * executes again), as the IETF draft allows. Default: kept for ever.
     *
     * @param retention zero or positive
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder retention(Duration retention) {
      this.retention = checkNonNegative(retention, "retention");
      return this;
    }

    /**
     * Sets the clock that leases and retention are measured with, e.g. a {@link FakeTimeSource}
     * shared with the SDK client under test, so that the SDK's waits move the server's time too.
     * The processing time is always real.
     *
     * @param clock the clock (only {@link TimeSource#nanoTime()} is read)
     * @return this builder
     */
    public Builder clock(TimeSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the (not yet started) server.
     *
     * @return the server; call {@link IdempotentTestServer#start()}
     */
    public IdempotentTestServer build() {
      return new IdempotentTestServer(this, 0);
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
