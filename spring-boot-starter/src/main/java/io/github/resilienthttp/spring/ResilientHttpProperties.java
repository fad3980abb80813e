package io.github.resilienthttp.spring;

import io.github.resilienthttp.IdempotencyKeyPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The starter's settings, under {@code resilient-http}. Every client setting left unset keeps the
 * SDK's default (see the SDK's {@code RetryPolicy}, {@code IdempotencyKeyPolicy},
 * {@code RetryBudget}); values are checked when the context starts, and an invalid one fails the
 * startup with an error that names the property.
 *
 * <p>Mutable (Spring binds it); read once at startup.
 */
@ConfigurationProperties(prefix = "resilient-http")
public class ResilientHttpProperties {
  /** Creates the settings with their defaults (Spring binds the properties). */
  public ResilientHttpProperties() {}


  /** Clients by name; each becomes a ResilientHttpClient bean qualified by its name. */
  private Map<String, Client> clients = new LinkedHashMap<>();

  /** Micrometer binding (when micrometer-core and a MeterRegistry bean are present). */
  private Toggle metrics = new Toggle();

  /** OpenTelemetry tracing (when opentelemetry-api and an OpenTelemetry bean are present). */
  private Tracing tracing = new Tracing();

  /** Actuator health contributor "resilientHttp", one component per client. */
  private Health health = new Health();

  /** Signed callbacks (webhooks) received once, in the application's transactions. */
  private Callbacks callbacks = new Callbacks();

  /** The server-side Idempotency-Key guard (resilient-http-server) as a Servlet filter. */
  private Server server = new Server();

  /** {@return the clients by name} */
  public Map<String, Client> getClients() {
    return clients;
  }

  /**

   * Sets {@code clients}.

   *

   * @param clients the clients by name

   */
  public void setClients(Map<String, Client> clients) {
    this.clients = clients;
  }

  /** {@return the Micrometer switch} */
  public Toggle getMetrics() {
    return metrics;
  }

  /**

   * Sets {@code metrics}.

   *

   * @param metrics the Micrometer switch

   */
  public void setMetrics(Toggle metrics) {
    this.metrics = metrics;
  }

  /** {@return the tracing settings} */
  public Tracing getTracing() {
    return tracing;
  }

  /**

   * Sets {@code tracing}.

   *

   * @param tracing the tracing settings

   */
  public void setTracing(Tracing tracing) {
    this.tracing = tracing;
  }

  /** {@return the health settings} */
  public Health getHealth() {
    return health;
  }

  /**

   * Sets {@code health}.

   *

   * @param health the health settings

   */
  public void setHealth(Health health) {
    this.health = health;
  }

  /** {@return the callback settings} */
  public Callbacks getCallbacks() {
    return callbacks;
  }

  /**

   * Sets {@code callbacks}.

   *

   * @param callbacks the callback settings

   */
  public void setCallbacks(Callbacks callbacks) {
    this.callbacks = callbacks;
  }

  /** {@return the server guard's settings} */
  public Server getServer() {
    return server;
  }

  /**

   * Sets {@code server}.

   *

   * @param server the server guard's settings

   */
  public void setServer(Server server) {
    this.server = server;
  }

  /** Where the server guard keeps its records. */
  public enum ServerStore {
    /** JDBC on the application's single DataSource when there is one, else in memory. */
    AUTO,
    /** JDBC on the application's single DataSource (startup fails without one). */
    JDBC,
    /** In this process's memory: one instance only, lost on restart. */
    MEMORY
  }

  /**
   * The server-side Idempotency-Key guard, registered as a Servlet filter when {@code enabled}.
   * Unset durations and lists keep the guard's defaults (IdempotencyGuard.Builder).
   */
  public static class Server {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Server() {}

    /** Whether the starter registers the idempotency filter (needs resilient-http-server). Default: false. */
    private boolean enabled;

    /** The URL patterns the filter applies to (Servlet syntax). Default: /*. */
    private List<String> urlPatterns = new ArrayList<>(List.of("/*"));

    /** The filter's order; after Spring Security's (-100) so the principal is known. Default: 0. */
    private int order;

    /** Where records are kept. Default: auto (JDBC on the single DataSource, else memory). */
    private ServerStore store = ServerStore.AUTO;

    /** The records' table (JDBC store). Default: idempotency_keys. */
    private String table = "idempotency_keys";

    /** Whether the starter creates the table at startup (CREATE TABLE IF NOT EXISTS). */
    private boolean createSchema;

    /**
     * Whether a keyed request runs in a transaction of the application's PlatformTransactionManager
     * that also records the response (JDBC store only), so the business write and the record commit
     * together. Default: true (effective when there is one transaction manager).
     */
    private boolean transactional = true;

    /** The request header carrying the key. Default: Idempotency-Key. */
    private String headerName;

    /** Whether a guarded request without a key gets 400. Default: false (passes unguarded). */
    private boolean keyRequired;

    /** The guarded methods. Default: POST, PATCH. */
    private List<String> methods = new ArrayList<>();

    /** How long a claim holds a key; longer than the handler takes. Default: 30s. */
    private Duration lease;

    /** The Retry-After of a 409 "in progress" answer. Default: 1s. */
    private Duration retryAfter;

    /** How long a completed response is replayed. Default: 24h. */
    private Duration retention;

    /** {@return whether the filter is registered} */
    public boolean isEnabled() {
      return enabled;
    }

    /**

     * Sets {@code enabled}.

     *

     * @param enabled whether the filter is registered

     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return the URL patterns} */
    public List<String> getUrlPatterns() {
      return urlPatterns;
    }

    /**

     * Sets {@code urlPatterns}.

     *

     * @param urlPatterns the URL patterns

     */
    public void setUrlPatterns(List<String> urlPatterns) {
      this.urlPatterns = urlPatterns;
    }

    /** {@return the filter order} */
    public int getOrder() {
      return order;
    }

    /**

     * Sets {@code order}.

     *

     * @param order the filter order

     */
    public void setOrder(int order) {
      this.order = order;
    }

    /** {@return the store kind} */
    public ServerStore getStore() {
      return store;
    }

    /**

     * Sets {@code store}.

     *

     * @param store the store kind

     */
    public void setStore(ServerStore store) {
      this.store = store;
    }

    /** {@return the table} */
    public String getTable() {
      return table;
    }

    /**

     * Sets {@code table}.

     *

     * @param table the table

     */
    public void setTable(String table) {
      this.table = table;
    }

    /** {@return whether the table is created at startup} */
    public boolean isCreateSchema() {
      return createSchema;
    }

    /**

     * Sets {@code createSchema}.

     *

     * @param createSchema whether the table is created at startup

     */
    public void setCreateSchema(boolean createSchema) {
      this.createSchema = createSchema;
    }

    /** {@return whether keyed requests run in the application's transaction} */
    public boolean isTransactional() {
      return transactional;
    }

    /**

     * Sets {@code transactional}.

     *

     * @param transactional whether keyed requests run in the application's transaction

     */
    public void setTransactional(boolean transactional) {
      this.transactional = transactional;
    }

    /** {@return the key header, or null for the default} */
    public String getHeaderName() {
      return headerName;
    }

    /**

     * Sets {@code headerName}.

     *

     * @param headerName the key header

     */
    public void setHeaderName(String headerName) {
      this.headerName = headerName;
    }

    /** {@return whether a key is required} */
    public boolean isKeyRequired() {
      return keyRequired;
    }

    /**

     * Sets {@code keyRequired}.

     *

     * @param keyRequired whether a key is required

     */
    public void setKeyRequired(boolean keyRequired) {
      this.keyRequired = keyRequired;
    }

    /** {@return the guarded methods; empty for the default} */
    public List<String> getMethods() {
      return methods;
    }

    /**

     * Sets {@code methods}.

     *

     * @param methods the guarded methods

     */
    public void setMethods(List<String> methods) {
      this.methods = methods;
    }

    /** {@return the lease, or null for the default} */
    public Duration getLease() {
      return lease;
    }

    /**

     * Sets {@code lease}.

     *

     * @param lease the lease

     */
    public void setLease(Duration lease) {
      this.lease = lease;
    }

    /** {@return the Retry-After of an in-progress answer, or null for the default} */
    public Duration getRetryAfter() {
      return retryAfter;
    }

    /**

     * Sets {@code retryAfter}.

     *

     * @param retryAfter the Retry-After of an in-progress answer

     */
    public void setRetryAfter(Duration retryAfter) {
      this.retryAfter = retryAfter;
    }

    /** {@return the retention, or null for the default} */
    public Duration getRetention() {
      return retention;
    }

    /**

     * Sets {@code retention}.

     *

     * @param retention the retention

     */
    public void setRetention(Duration retention) {
      this.retention = retention;
    }
  }

  /** An on/off switch. */
  public static class Toggle {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Toggle() {}

    /** Whether this integration is on. */
    private boolean enabled = true;

    /** {@return whether this integration is on} */
    public boolean isEnabled() {
      return enabled;
    }

    /**

     * Sets {@code enabled}.

     *

     * @param enabled whether this integration is on

     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }
  }

  /** Tracing settings. */
  public static class Tracing extends Toggle {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Tracing() {}

    /**
     * Whether each attempt gets a CLIENT span of its own; turn off when OpenTelemetry's own OkHttp
     * instrumentation also runs (every attempt would get two).
     */
    private boolean attemptSpans = true;

    /** {@return whether each attempt gets a span} */
    public boolean isAttemptSpans() {
      return attemptSpans;
    }

    /**

     * Sets {@code attemptSpans}.

     *

     * @param attemptSpans whether each attempt gets a span

     */
    public void setAttemptSpans(boolean attemptSpans) {
      this.attemptSpans = attemptSpans;
    }
  }

  /** Health settings. */
  public static class Health extends Toggle {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Health() {}

    /**
     * The status a client reports while one of its circuit breakers is open (or forced open), for
     * example DOWN, OUT_OF_SERVICE, or a custom "DEGRADED" placed in
     * management.endpoint.health.status.order. Half-open breakers are listed but keep UP.
     */
    private String openStatus = "DOWN";

    /** {@return the status while a breaker is open} */
    public String getOpenStatus() {
      return openStatus;
    }

    /**

     * Sets {@code openStatus}.

     *

     * @param openStatus the status while a breaker is open

     */
    public void setOpenStatus(String openStatus) {
      this.openStatus = openStatus;
    }
  }

  /** One client. */
  public static class Client {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Client() {}

    /** Attempts per operation, the first included; at least 1. SDK default: 3. */
    private Integer maxAttempts;

    /** Full-jitter exponential backoff between attempts. */
    private Backoff backoff = new Backoff();

    /** Total time an operation may take, all attempts and waits included. SDK default: 30s. */
    private Duration deadline;

    /** Cap on each attempt's connect, read and write timeouts. SDK default: none. */
    private Duration attemptTimeout;

    /** The longest Retry-After the client waits for before a retry. SDK default: 60s. */
    private Duration maxRetryAfter;

    /** Idempotency keys. */
    private Idempotency idempotency = new Idempotency();

    /** The retry budget shared by this client's operations. */
    private Budget budget = new Budget();

    /** The per-target circuit breakers. */
    private CircuitBreaker circuitBreaker = new CircuitBreaker();

    /** A bulkhead limiting concurrent attempts; off unless max-concurrent-calls is set. */
    private Bulkhead bulkhead = new Bulkhead();

    /** Hedging of idempotent calls; off unless delay is set. */
    private Hedging hedging = new Hedging();

    /** The OkHttpClient this client wraps. */
    private OkHttp okhttp = new OkHttp();

    /** The response header by which a server marks a replayed result. SDK default: Idempotent-Replayed. */
    private String replayHeader;

    /** {@return the attempts per operation, or null for the SDK default} */
    public Integer getMaxAttempts() {
      return maxAttempts;
    }

    /**

     * Sets {@code maxAttempts}.

     *

     * @param maxAttempts attempts per operation

     */
    public void setMaxAttempts(Integer maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    /** {@return the backoff} */
    public Backoff getBackoff() {
      return backoff;
    }

    /**

     * Sets {@code backoff}.

     *

     * @param backoff the backoff

     */
    public void setBackoff(Backoff backoff) {
      this.backoff = backoff;
    }

    /** {@return the deadline, or null for the SDK default} */
    public Duration getDeadline() {
      return deadline;
    }

    /**

     * Sets {@code deadline}.

     *

     * @param deadline the deadline

     */
    public void setDeadline(Duration deadline) {
      this.deadline = deadline;
    }

    /** {@return the attempt timeout, or null for none} */
    public Duration getAttemptTimeout() {
      return attemptTimeout;
    }

    /**

     * Sets {@code attemptTimeout}.

     *

     * @param attemptTimeout the attempt timeout

     */
    public void setAttemptTimeout(Duration attemptTimeout) {
      this.attemptTimeout = attemptTimeout;
    }

    /** {@return the longest Retry-After waited for, or null for the SDK default} */
    public Duration getMaxRetryAfter() {
      return maxRetryAfter;
    }

    /**

     * Sets {@code maxRetryAfter}.

     *

     * @param maxRetryAfter the longest Retry-After waited for

     */
    public void setMaxRetryAfter(Duration maxRetryAfter) {
      this.maxRetryAfter = maxRetryAfter;
    }

    /** {@return the idempotency key settings} */
    public Idempotency getIdempotency() {
      return idempotency;
    }

    /**

     * Sets {@code idempotency}.

     *

     * @param idempotency the idempotency key settings

     */
    public void setIdempotency(Idempotency idempotency) {
      this.idempotency = idempotency;
    }

    /** {@return the retry budget settings} */
    public Budget getBudget() {
      return budget;
    }

    /**

     * Sets {@code budget}.

     *

     * @param budget the retry budget settings

     */
    public void setBudget(Budget budget) {
      this.budget = budget;
    }

    /** {@return the circuit breaker settings} */
    public CircuitBreaker getCircuitBreaker() {
      return circuitBreaker;
    }

    /**

     * Sets {@code circuitBreaker}.

     *

     * @param circuitBreaker the circuit breaker settings

     */
    public void setCircuitBreaker(CircuitBreaker circuitBreaker) {
      this.circuitBreaker = circuitBreaker;
    }

    /** {@return the bulkhead settings} */
    public Bulkhead getBulkhead() {
      return bulkhead;
    }

    /**

     * Sets {@code bulkhead}.

     *

     * @param bulkhead the bulkhead settings

     */
    public void setBulkhead(Bulkhead bulkhead) {
      this.bulkhead = bulkhead;
    }

    /** {@return the hedging settings} */
    public Hedging getHedging() {
      return hedging;
    }

    /**

     * Sets {@code hedging}.

     *

     * @param hedging the hedging settings

     */
    public void setHedging(Hedging hedging) {
      this.hedging = hedging;
    }

    /** {@return the OkHttpClient settings} */
    public OkHttp getOkhttp() {
      return okhttp;
    }

    /**

     * Sets {@code okhttp}.

     *

     * @param okhttp the OkHttpClient settings

     */
    public void setOkhttp(OkHttp okhttp) {
      this.okhttp = okhttp;
    }

    /** {@return the replay header, or null for the SDK default} */
    public String getReplayHeader() {
      return replayHeader;
    }

    /**

     * Sets {@code replayHeader}.

     *

     * @param replayHeader the replay header

     */
    public void setReplayHeader(String replayHeader) {
      this.replayHeader = replayHeader;
    }
  }

  /** Full-jitter exponential backoff: retry n waits uniformly in [0, min(cap, base * 2^(n-1))]. */
  public static class Backoff {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Backoff() {}

    /** The cap of the first retry's wait; positive. SDK default: 100ms. */
    private Duration base;

    /** The largest cap; at least base. SDK default: 5s. */
    private Duration cap;

    /** {@return the first retry's cap, or null for the default} */
    public Duration getBase() {
      return base;
    }

    /**

     * Sets {@code base}.

     *

     * @param base the first retry's cap

     */
    public void setBase(Duration base) {
      this.base = base;
    }

    /** {@return the largest cap, or null for the default} */
    public Duration getCap() {
      return cap;
    }

    /**

     * Sets {@code cap}.

     *

     * @param cap the largest cap

     */
    public void setCap(Duration cap) {
      this.cap = cap;
    }
  }

  /** Idempotency keys. */
  public static class Idempotency {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Idempotency() {}

    /** The request header carrying the key. SDK default: Idempotency-Key. */
    private String headerName;

    /** How the key is written in the header. SDK default: TOKEN. */
    private IdempotencyKeyPolicy.Format format;

    /** Which requests carry a key. SDK default: FOR_NON_IDEMPOTENT_METHODS. */
    private IdempotencyKeyPolicy.Send send;

    /** {@return the header name, or null for the default} */
    public String getHeaderName() {
      return headerName;
    }

    /**

     * Sets {@code headerName}.

     *

     * @param headerName the header name

     */
    public void setHeaderName(String headerName) {
      this.headerName = headerName;
    }

    /** {@return the format, or null for the default} */
    public IdempotencyKeyPolicy.Format getFormat() {
      return format;
    }

    /**

     * Sets {@code format}.

     *

     * @param format the format

     */
    public void setFormat(IdempotencyKeyPolicy.Format format) {
      this.format = format;
    }

    /** {@return which requests carry a key, or null for the default} */
    public IdempotencyKeyPolicy.Send getSend() {
      return send;
    }

    /**

     * Sets {@code send}.

     *

     * @param send which requests carry a key

     */
    public void setSend(IdempotencyKeyPolicy.Send send) {
      this.send = send;
    }
  }

  /** The kind of retry budget. */
  public enum BudgetType {
    /** A token bucket (the SDK's default), tuned by the other budget properties. */
    TOKEN_BUCKET,
    /** No retries at all: one attempt per operation. */
    NONE,
    /** No budget: retries limited by max-attempts and the deadline only. */
    UNLIMITED
  }

  /** The retry budget. */
  public static class Budget {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Budget() {}

    /** The kind of budget. */
    private BudgetType type = BudgetType.TOKEN_BUCKET;

    /** Retries allowed per first attempt; positive. SDK default: 0.1. */
    private Double retryRatio;

    /** Retries always allowed per second, whatever the traffic. SDK default: 3. */
    private Integer minRetriesPerSecond;

    /** Capacity of the bucket, in retries; at least 1. SDK default: derived from min-retries-per-second. */
    private Integer maxTokens;

    /** {@return the kind of budget} */
    public BudgetType getType() {
      return type;
    }

    /**

     * Sets {@code type}.

     *

     * @param type the kind of budget

     */
    public void setType(BudgetType type) {
      this.type = type;
    }

    /** {@return the retry ratio, or null for the default} */
    public Double getRetryRatio() {
      return retryRatio;
    }

    /**

     * Sets {@code retryRatio}.

     *

     * @param retryRatio the retry ratio

     */
    public void setRetryRatio(Double retryRatio) {
      this.retryRatio = retryRatio;
    }

    /** {@return the retries always allowed per second, or null for the default} */
    public Integer getMinRetriesPerSecond() {
      return minRetriesPerSecond;
    }

    /**

     * Sets {@code minRetriesPerSecond}.

     *

     * @param minRetriesPerSecond the retries always allowed per second

     */
    public void setMinRetriesPerSecond(Integer minRetriesPerSecond) {
      this.minRetriesPerSecond = minRetriesPerSecond;
    }

    /** {@return the capacity, or null for the default} */
    public Integer getMaxTokens() {
      return maxTokens;
    }

    /**

     * Sets {@code maxTokens}.

     *

     * @param maxTokens the capacity

     */
    public void setMaxTokens(Integer maxTokens) {
      this.maxTokens = maxTokens;
    }
  }

  /**
   * Per-target circuit breakers (one per scheme://host:port). Unset values keep the SDK's defaults:
   * open at 80% failures of the last 50 attempts, 5s open, 3 probes.
   */
  public static class CircuitBreaker {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public CircuitBreaker() {}

    /** Whether the client has circuit breakers. */
    private boolean enabled = true;

    /**
     * The name of a resilience4j CircuitBreakerRegistry bean to take breakers from; when set, the
     * other breaker properties are ignored (the registry's configs apply).
     */
    private String registry;

    /** Failure rate in percent, in (0, 100], at or above which the breaker opens. */
    private Float failureRateThreshold;

    /** Attempts in the count-based sliding window; at least 1. */
    private Integer slidingWindowSize;

    /** Attempts recorded before the failure rate counts; at least 1. */
    private Integer minimumNumberOfCalls;

    /** How long the breaker stays open before probing; positive. */
    private Duration waitDurationInOpenState;

    /** Probes let through while half-open; at least 1. */
    private Integer permittedNumberOfCallsInHalfOpenState;

    /** {@return whether breakers are on} */
    public boolean isEnabled() {
      return enabled;
    }

    /**

     * Sets {@code enabled}.

     *

     * @param enabled whether breakers are on

     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return the registry bean name, or null} */
    public String getRegistry() {
      return registry;
    }

    /**

     * Sets {@code registry}.

     *

     * @param registry the registry bean name

     */
    public void setRegistry(String registry) {
      this.registry = registry;
    }

    /** {@return the failure rate threshold, or null for the default} */
    public Float getFailureRateThreshold() {
      return failureRateThreshold;
    }

    /**

     * Sets {@code failureRateThreshold}.

     *

     * @param failureRateThreshold the failure rate threshold

     */
    public void setFailureRateThreshold(Float failureRateThreshold) {
      this.failureRateThreshold = failureRateThreshold;
    }

    /** {@return the window size, or null for the default} */
    public Integer getSlidingWindowSize() {
      return slidingWindowSize;
    }

    /**

     * Sets {@code slidingWindowSize}.

     *

     * @param slidingWindowSize the window size

     */
    public void setSlidingWindowSize(Integer slidingWindowSize) {
      this.slidingWindowSize = slidingWindowSize;
    }

    /** {@return the minimum number of calls, or null for the default} */
    public Integer getMinimumNumberOfCalls() {
      return minimumNumberOfCalls;
    }

    /**

     * Sets {@code minimumNumberOfCalls}.

     *

     * @param minimumNumberOfCalls the minimum number of calls

     */
    public void setMinimumNumberOfCalls(Integer minimumNumberOfCalls) {
      this.minimumNumberOfCalls = minimumNumberOfCalls;
    }

    /** {@return the open duration, or null for the default} */
    public Duration getWaitDurationInOpenState() {
      return waitDurationInOpenState;
    }

    /**

     * Sets {@code waitDurationInOpenState}.

     *

     * @param waitDurationInOpenState the open duration

     */
    public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
      this.waitDurationInOpenState = waitDurationInOpenState;
    }

    /** {@return the probes while half-open, or null for the default} */
    public Integer getPermittedNumberOfCallsInHalfOpenState() {
      return permittedNumberOfCallsInHalfOpenState;
    }

    /**

     * Sets {@code permittedNumberOfCallsInHalfOpenState}.

     *

     * @param permittedNumberOfCallsInHalfOpenState the probes while half-open

     */
    public void setPermittedNumberOfCallsInHalfOpenState(Integer permittedNumberOfCallsInHalfOpenState) {
      this.permittedNumberOfCallsInHalfOpenState = permittedNumberOfCallsInHalfOpenState;
    }
  }

  /** A semaphore bulkhead on concurrent attempts. */
  public static class Bulkhead {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Bulkhead() {}

    /** Concurrent attempts allowed; at least 1. Unset: no bulkhead. */
    private Integer maxConcurrentCalls;

    /** How long an attempt waits for a permit (never past its deadline); 0 or more. Default: 0. */
    private Duration maxWait;

    /** {@return the concurrent attempts allowed, or null for no bulkhead} */
    public Integer getMaxConcurrentCalls() {
      return maxConcurrentCalls;
    }

    /**

     * Sets {@code maxConcurrentCalls}.

     *

     * @param maxConcurrentCalls the concurrent attempts allowed

     */
    public void setMaxConcurrentCalls(Integer maxConcurrentCalls) {
      this.maxConcurrentCalls = maxConcurrentCalls;
    }

    /** {@return the wait for a permit, or null for 0} */
    public Duration getMaxWait() {
      return maxWait;
    }

    /**

     * Sets {@code maxWait}.

     *

     * @param maxWait the wait for a permit

     */
    public void setMaxWait(Duration maxWait) {
      this.maxWait = maxWait;
    }
  }

  /** Hedging: a second copy of a slow idempotent call. */
  public static class Hedging {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Hedging() {}

    /** Fixed delay before a hedge is sent; positive. Unset: no hedging. */
    private Duration delay;

    /** Hedges per operation, besides the first attempt; at least 1. SDK default: 1. */
    private Integer maxHedges;

    /** Whether a POST carrying an idempotency key may be hedged. SDK default: false. */
    private Boolean keyedPosts;

    /** {@return the delay, or null for no hedging} */
    public Duration getDelay() {
      return delay;
    }

    /**

     * Sets {@code delay}.

     *

     * @param delay the delay

     */
    public void setDelay(Duration delay) {
      this.delay = delay;
    }

    /** {@return the hedges per operation, or null for the default} */
    public Integer getMaxHedges() {
      return maxHedges;
    }

    /**

     * Sets {@code maxHedges}.

     *

     * @param maxHedges the hedges per operation

     */
    public void setMaxHedges(Integer maxHedges) {
      this.maxHedges = maxHedges;
    }

    /** {@return whether keyed POSTs may be hedged, or null for the default} */
    public Boolean getKeyedPosts() {
      return keyedPosts;
    }

    /**

     * Sets {@code keyedPosts}.

     *

     * @param keyedPosts whether keyed POSTs may be hedged

     */
    public void setKeyedPosts(Boolean keyedPosts) {
      this.keyedPosts = keyedPosts;
    }
  }

  /**
   * The wrapped OkHttpClient: an existing bean by name, or one the starter builds (and shuts down
   * with the context) with these timeouts.
   */
  public static class OkHttp {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public OkHttp() {}

    /**
     * The name of an OkHttpClient bean to wrap; the timeouts below are then ignored and the bean's
     * owner keeps closing it.
     */
    private String bean;

    /** Connect timeout of the client the starter builds; 0 for none. OkHttp default: 10s. */
    private Duration connectTimeout;

    /** Read timeout of the client the starter builds; 0 for none. OkHttp default: 10s. */
    private Duration readTimeout;

    /** Write timeout of the client the starter builds; 0 for none. OkHttp default: 10s. */
    private Duration writeTimeout;

    /** Per-call timeout of the client the starter builds (each attempt is a call); 0 for none. */
    private Duration callTimeout;

    /** {@return the bean name, or null} */
    public String getBean() {
      return bean;
    }

    /**

     * Sets {@code bean}.

     *

     * @param bean the bean name

     */
    public void setBean(String bean) {
      this.bean = bean;
    }

    /** {@return the connect timeout, or null for OkHttp's default} */
    public Duration getConnectTimeout() {
      return connectTimeout;
    }

    /**

     * Sets {@code connectTimeout}.

     *

     * @param connectTimeout the connect timeout

     */
    public void setConnectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
    }

    /** {@return the read timeout, or null for OkHttp's default} */
    public Duration getReadTimeout() {
      return readTimeout;
    }

    /**

     * Sets {@code readTimeout}.

     *

     * @param readTimeout the read timeout

     */
    public void setReadTimeout(Duration readTimeout) {
      this.readTimeout = readTimeout;
    }

    /** {@return the write timeout, or null for OkHttp's default} */
    public Duration getWriteTimeout() {
      return writeTimeout;
    }

    /**

     * Sets {@code writeTimeout}.

     *

     * @param writeTimeout the write timeout

     */
    public void setWriteTimeout(Duration writeTimeout) {
      this.writeTimeout = writeTimeout;
    }

    /** {@return the call timeout, or null for OkHttp's default} */
    public Duration getCallTimeout() {
      return callTimeout;
    }

    /**

     * Sets {@code callTimeout}.

     *

     * @param callTimeout the call timeout

     */
    public void setCallTimeout(Duration callTimeout) {
      this.callTimeout = callTimeout;
    }
  }

  /** The signature scheme of incoming callbacks. */
  public enum Scheme {
    /** Standard Webhooks v1 (webhook-id, webhook-timestamp, webhook-signature; whsec_ secrets). */
    STANDARD_WEBHOOKS,
    /** Stripe (Stripe-Signature: t=...,v1=...); the event ID is taken from the body's "id". */
    STRIPE
  }

  /**
   * Callbacks: configured when at least one secret is set and the application has a single
   * DataSource and a PlatformTransactionManager.
   */
  public static class Callbacks {
    /** Creates the settings with their defaults (Spring binds the properties). */
    public Callbacks() {}

    /** The signature scheme. */
    private Scheme scheme = Scheme.STANDARD_WEBHOOKS;

    /** Signing secrets, current first; several while a secret rotates. Never logged. */
    private List<String> secrets = new ArrayList<>();

    /** How far a delivery's timestamp may be from now, both ways; positive. Default: 5m. */
    private Duration tolerance = Duration.ofMinutes(5);

    /** How long processed records are kept; longer than the tolerance. Default: 30d. */
    private Duration retention = Duration.ofDays(30);

    /** How long one delivery holds its event exclusively; longer than the handler takes. Default: 60s. */
    private Duration lease = Duration.ofSeconds(60);

    /** What event IDs are unique within. Default: the scheme's name. */
    private String scope;

    /** The processing records' table. Default: callback_processing. */
    private String table = "callback_processing";

    /** Whether the starter creates the table at startup (CREATE TABLE IF NOT EXISTS). */
    private boolean createSchema;

    /**
     * The path of the POST endpoint the starter maps to the application's CallbackHandler bean
     * (Spring MVC); unset: no endpoint (call TransactionalCallbackReceiver yourself).
     */
    private String path;

    /** {@return the scheme} */
    public Scheme getScheme() {
      return scheme;
    }

    /**

     * Sets {@code scheme}.

     *

     * @param scheme the scheme

     */
    public void setScheme(Scheme scheme) {
      this.scheme = scheme;
    }

    /** {@return the secrets} */
    public List<String> getSecrets() {
      return secrets;
    }

    /**

     * Sets {@code secrets}.

     *

     * @param secrets the secrets

     */
    public void setSecrets(List<String> secrets) {
      this.secrets = secrets;
    }

    /** {@return the tolerance} */
    public Duration getTolerance() {
      return tolerance;
    }

    /**

     * Sets {@code tolerance}.

     *

     * @param tolerance the tolerance

     */
    public void setTolerance(Duration tolerance) {
      this.tolerance = tolerance;
    }

    /** {@return the retention} */
    public Duration getRetention() {
      return retention;
    }

    /**

     * Sets {@code retention}.

     *

     * @param retention the retention

     */
    public void setRetention(Duration retention) {
      this.retention = retention;
    }

    /** {@return the lease} */
    public Duration getLease() {
      return lease;
    }

    /**

     * Sets {@code lease}.

     *

     * @param lease the lease

     */
    public void setLease(Duration lease) {
      this.lease = lease;
    }

    /** {@return the scope, or null for the scheme's name} */
    public String getScope() {
      return scope;
    }

    /**

     * Sets {@code scope}.

     *

     * @param scope the scope

     */
    public void setScope(String scope) {
      this.scope = scope;
    }

    /** {@return the table} */
    public String getTable() {
      return table;
    }

    /**

     * Sets {@code table}.

     *

     * @param table the table

     */
    public void setTable(String table) {
      this.table = table;
    }

    /** {@return whether the table is created at startup} */
    public boolean isCreateSchema() {
      return createSchema;
    }

    /**

     * Sets {@code createSchema}.

     *

     * @param createSchema whether the table is created at startup

     */
    public void setCreateSchema(boolean createSchema) {
      this.createSchema = createSchema;
    }

    /** {@return the endpoint path, or null} */
    public String getPath() {
      return path;
    }

    /**

     * Sets {@code path}.

     *

     * @param path the endpoint path

     */
    public void setPath(String path) {
      this.path = path;
    }
  }
}
