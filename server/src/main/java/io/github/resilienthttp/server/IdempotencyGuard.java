package io.github.resilienthttp.server;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntPredicate;

/**
 * The server's half of the Idempotency-Key contract, with no web framework: an adapter (the Servlet
 * filter, or your own) turns a request into an {@link IdempotentRequest} and either sends the guard's
 * answer or runs the handler and records its response.
 *
 * <p>For each request whose method is covered (default {@code POST} and {@code PATCH}, the draft's
 * non-idempotent methods) and that carries the key header:
 * <ol>
 *   <li>the key is validated ({@link IdempotencyKeyHeader}); a malformed key gets {@code 400};
 *   <li>the record is scoped by principal, method and route, so two tenants' equal keys, or one key on
 *       two operations, never meet;
 *   <li>the request's {@link Fingerprint} is computed;
 *   <li>the key is claimed atomically with a lease: the first request runs the handler; a concurrent
 *       duplicate gets {@code 409} with {@code Retry-After}; a retry after completion gets the recorded
 *       response with {@code Idempotent-Replayed: true}; a retry with another fingerprint gets
 *       {@code 422} (problem types in {@link IdempotencyProblems});
 *   <li>the handler's response (status, the recorded headers, the body up to the bound) is recorded,
 *       in the handler's transaction with {@link #handleInTransaction} so the business write and the
 *       record commit together.
 * </ol>
 *
 * <p><b>Crashes.</b> With {@link #handleInTransaction} on a {@link JdbcIdempotencyStore}: a crash
 * after the claim, or after the business write but before the commit, leaves the record in progress
 * with nothing committed; after the lease the next retry runs the handler once. A crash after the
 * commit, before the response reaches the client, leaves the record completed; the retry gets the
 * replay. Without a shared transaction ({@link #handle}), a crash between the business write and the
 * record's completion can run the handler twice: make the business write idempotent on its own (a
 * unique key, and {@link AfterRetention#onUniqueViolation}).
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#store store}</td><td>required</td><td>any</td></tr>
 * <tr><td>{@link Builder#principal principal}</td><td>the adapter's principal name, else
 *     {@code anonymous}</td><td>a function; its result may be any string</td></tr>
 * <tr><td>{@link Builder#route route}</td><td>the request path</td><td>a function; use the route
 *     template when paths carry IDs</td></tr>
 * <tr><td>{@link Builder#fingerprint fingerprint}</td><td>method, path, query, body</td><td></td></tr>
 * <tr><td>{@link Builder#methods methods}</td><td>POST, PATCH</td><td>non-empty</td></tr>
 * <tr><td>{@link Builder#keyRequired keyRequired}</td><td>false</td><td></td></tr>
 * <tr><td>{@link Builder#keyFormat keyFormat}</td><td>{@code STRING_OR_TOKEN}</td><td></td></tr>
 * <tr><td>{@link Builder#lease lease}</td><td>30 s</td><td>100 ms..1 h; longer than the slowest
 *     handler</td></tr>
 * <tr><td>{@link Builder#retryAfter retryAfter} on 409</td><td>1 s</td><td>1 s..lease</td></tr>
 * <tr><td>{@link Builder#retention retention}</td><td>24 h</td><td>1 s..3650 days; longer than the
 *     clients' retry window</td></tr>
 * <tr><td>{@link Builder#keepExpiredKeys keepExpiredKeys}</td><td>0</td><td>0..3650 days, beyond
 *     retention, for {@link AfterRetention#refuse()}</td></tr>
 * <tr><td>{@link Builder#afterRetention afterRetention}</td><td>{@link AfterRetention#processAgain()}</td><td></td></tr>
 * <tr><td>{@link Builder#recordHeaders recordHeaders}</td><td>Content-Type, Location, Content-Location,
 *     ETag, Link</td><td>names</td></tr>
 * <tr><td>{@link Builder#maxRecordedBody maxRecordedBody}</td><td>64 KiB</td><td>0..1 MiB; a larger
 *     body is replayed empty, with {@code Idempotent-Replayed-Body: omitted}</td></tr>
 * <tr><td>{@link Builder#recordStatus recordStatus}</td><td>below 500</td><td>others release the key</td></tr>
 * <tr><td>{@link Builder#replayHeader replayHeader}</td><td>{@code Idempotent-Replayed}</td><td>a name</td></tr>
 * </table>
 *
 * <p>Immutable and thread-safe.
 */
public final class IdempotencyGuard {
  /** The header the first request's recorded response is replayed with, value {@code true}. */
  public static final String REPLAYED = "Idempotent-Replayed";
  static final String BODY_OMITTED = "Idempotent-Replayed-Body";

  /** A handler that does not share a transaction with the record. */
  @FunctionalInterface
  public interface Handler {
    /**
     * Handles the request.
     *
     * @param request the request
     * @return the response
     */
    IdempotentResponse handle(IdempotentRequest request);
  }

  /** A handler whose business writes go through the given connection, in the record's transaction. */
  @FunctionalInterface
  public interface TransactionalHandler {
    /**
     * Handles the request; do not commit, roll back or close the connection.
     *
     * @param connection the transaction's connection (auto-commit off)
     * @param request the request
     * @return the response
     * @throws SQLException when a business statement fails (the transaction is rolled back)
     */
    IdempotentResponse handle(Connection connection, IdempotentRequest request) throws SQLException;
  }

  private final IdempotencyStore store;
  private final Function<IdempotentRequest, String> principal;
  private final Function<IdempotentRequest, String> route;
  private final Fingerprint fingerprint;
  private final Set<String> methods;
  private final boolean keyRequired;
  private final String headerName;
  private final IdempotencyKeyHeader.Format keyFormat;
  private final Duration lease;
  private final Duration retryAfter;
  private final Duration retention;
  private final Duration keepExpiredKeys;
  private final AfterRetention afterRetention;
  private final List<String> recordHeaders;
  private final int maxRecordedBody;
  private final IntPredicate recordStatus;
  private final String replayHeader;
  private final IdempotencyListener listener;
  private final InstantSource clock;

  private IdempotencyGuard(Builder b) {
    this.store = b.store;
    this.principal = b.principal;
    this.route = b.route;
    this.fingerprint = b.fingerprint;
    this.methods = Set.copyOf(b.methods);
    this.keyRequired = b.keyRequired;
    this.headerName = b.headerName;
    this.keyFormat = b.keyFormat;
    this.lease = b.lease;
    this.retryAfter = b.retryAfter;
    this.retention = b.retention;
    this.keepExpiredKeys = b.keepExpiredKeys;
    this.afterRetention = b.afterRetention;
    this.recordHeaders = List.copyOf(b.recordHeaders);
    this.maxRecordedBody = b.maxRecordedBody;
    this.recordStatus = b.recordStatus;
    this.replayHeader = b.replayHeader;
    this.listener = b.listener;
    this.clock = b.clock;
  }

  /** {@return a builder with the defaults above} */
  public static Builder builder() {
    return new Builder();
  }

  /** {@return the store} */
  public IdempotencyStore store() {
    return store;
  }

  /**
   * Decides what to do with a request: the claim is made here.
   *
   * @param request the request
   * @return proceed (with a ticket to complete), answer, or bypass
   * @throws IdempotencyStoreException when the store fails (answer 500 or 503; nothing was claimed)
   */
  public Admission admit(IdempotentRequest request) {
    Objects.requireNonNull(request, "request");
    if (!methods.contains(request.method())) return new Admission.Bypass();
    List<String> values = request.headers().get(headerName);
    if (values == null || values.isEmpty()) {
      if (!keyRequired) return new Admission.Bypass();
      notify(l -> l.rejected("missing " + headerName));
      return new Admission.Answer(IdempotencyProblems.missing(), Admission.Kind.INVALID);
    }
    String raw = values.size() == 1 ? values.get(0) : String.join(",", values);
    String why = IdempotencyKeyHeader.problem(raw, keyFormat);
    if (why != null) {
      notify(l -> l.rejected(why));
      return new Admission.Answer(IdempotencyProblems.invalid(why), Admission.Kind.INVALID);
    }
    String key = IdempotencyKeyHeader.parse(raw, keyFormat).orElseThrow();
    String scope = scope(request);
    Instant now = clock.instant();
    Instant expiredBefore = now.minus(retention);
    KeyClaim claim = store.claim(scope, key, fingerprint.of(request), lease,
        afterRetention.refuses() ? Instant.MIN : expiredBefore);
    if (claim instanceof KeyClaim.Acquired a) {
      notify(l -> l.claimed(key, a.attempt()));
      if (a.expiredLeaseTakenOver()) notify(l -> l.claimExpired(key, a.attempt()));
      return new Admission.Proceed(new IdempotencyTicket(this, a, request));
    }
    if (claim instanceof KeyClaim.Completed c) {
      if (afterRetention.refuses() && !c.completedAt().isAfter(expiredBefore)) {
        notify(l -> l.expiredKeyRefused(key));
        return new Admission.Answer(IdempotencyProblems.expired(), Admission.Kind.EXPIRED);
      }
      notify(l -> l.replayed(key, c.response().status()));
      return new Admission.Answer(c.response().withHeader(replayHeader, "true"), Admission.Kind.REPLAY);
    }
    if (claim instanceof KeyClaim.InProgress) {
      notify(l -> l.inProgress(key));
      return new Admission.Answer(IdempotencyProblems.inUse(retryAfter), Admission.Kind.IN_PROGRESS);
    }
    notify(l -> l.mismatch(key));
    return new Admission.Answer(IdempotencyProblems.mismatch(), Admission.Kind.MISMATCH);
  }

  /**
   * Admits the request and, when it proceeds, runs the handler and records its response on the
   * store's own connection. A handler that throws releases the key (nothing is recorded) unless the
   * exception is a unique violation that {@link AfterRetention#onUniqueViolation} answers.
   *
   * @param request the request
   * @param handler the handler
   * @return the response to send
   * @throws IdempotencyStoreException when the store fails
   * @throws RuntimeException what the handler threw
   */
  public IdempotentResponse handle(IdempotentRequest request, Handler handler) {
    Admission admission = admit(request);
    if (admission instanceof Admission.Answer a) return a.response();
    if (admission instanceof Admission.Bypass) return handler.handle(request);
    IdempotencyTicket ticket = ((Admission.Proceed) admission).ticket();
    IdempotentResponse response;
    try {
      response = handler.handle(request);
    } catch (RuntimeException e) {
      Optional<IdempotentResponse> answer = uniqueViolationAnswer(ticket, e);
      if (answer.isPresent()) return ticket.complete(answer.get());
      ticket.abandon();
      throw e;
    }
    return ticket.complete(response);
  }

  /**
   * Admits the request and, when it proceeds, runs the handler in a transaction on the JDBC store's data
   * source, records the response in the same transaction and commits: the business write and the
   * record take effect together or not at all. A status not recorded ({@link Builder#recordStatus}),
   * or a handler that throws, rolls back and releases the key.
   *
   * @param request the request
   * @param handler the handler; its writes must go through the given connection
   * @return the response to send
   * @throws SQLException when the handler or the commit fails (after a failed commit the record is
   *     released only if it was not committed; a retry then replays or runs once)
   * @throws IllegalStateException when the store is not a {@link JdbcIdempotencyStore}
   * @throws IdempotencyStoreException when the store fails
   */
  public IdempotentResponse handleInTransaction(IdempotentRequest request, TransactionalHandler handler)
      throws SQLException {
    JdbcIdempotencyStore jdbc = jdbcStore();
    Admission admission = admit(request);
    if (admission instanceof Admission.Answer a) return a.response();
    IdempotencyTicket ticket = admission instanceof Admission.Proceed p ? p.ticket() : null;
    try (Connection c = jdbc.dataSource().getConnection()) {
      c.setAutoCommit(false);
      IdempotentResponse response;
      try {
        response = handler.handle(c, request);
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        Optional<IdempotentResponse> answer = ticket == null ? Optional.empty() : uniqueViolationAnswer(ticket, e);
        if (answer.isPresent()) return ticket.complete(answer.get());
        if (ticket != null) ticket.abandon();
        throw e;
      }
      if (ticket == null) {
        c.commit();
        return response;
      }
      if (!recordStatus.test(response.status())) {
        c.rollback();
        ticket.abandon();
        return response;
      }
      try {
        completeInTransaction(ticket, c, response);
      } catch (LeaseLostException lost) {
        c.rollback();
        return IdempotencyProblems.inUse(retryAfter);
      }
      try {
        c.commit();
      } catch (SQLException e) {
        ticket.abandon(); // does nothing if the commit did happen: the record is then completed
        throw e;
      }
      return response;
    }
  }

  /**
   * Deletes records completed longer ago than retention plus {@code keepExpiredKeys}. Run it
   * periodically; the guard starts no threads.
   *
   * @return how many records were deleted
   * @throws IdempotencyStoreException when the store fails
   */
  public int purge() {
    return store.purgeCompletedBefore(clock.instant().minus(retention).minus(keepExpiredKeys));
  }

  IdempotentResponse complete(IdempotencyTicket ticket, Connection unused, IdempotentResponse response) {
    if (!recordStatus.test(response.status())) {
      ticket.abandon();
      return response;
    }
    try {
      store.complete(ticket.claim(), recordable(response));
    } catch (LeaseLostException lost) {
      notify(l -> l.leaseLost(ticket.claim().key()));
    }
    return response;
  }

  void completeInTransaction(IdempotencyTicket ticket, Connection connection, IdempotentResponse response) {
    try {
      jdbcStore().complete(connection, ticket.claim(), recordable(response));
    } catch (LeaseLostException lost) {
      notify(l -> l.leaseLost(ticket.claim().key()));
      throw lost;
    }
  }

  void abandon(IdempotencyTicket ticket) {
    store.release(ticket.claim());
  }

  private JdbcIdempotencyStore jdbcStore() {
    if (store instanceof JdbcIdempotencyStore j) return j;
    throw new IllegalStateException("store: a transaction needs a JdbcIdempotencyStore, not " + store);
  }

  private Optional<IdempotentResponse> uniqueViolationAnswer(IdempotencyTicket ticket, Exception e) {
    var hook = afterRetention.uniqueViolationAnswer();
    if (hook == null || !JdbcIdempotencyStore.isUniqueViolation(e)) return Optional.empty();
    return Objects.requireNonNullElse(hook.apply(ticket.claim().key(), ticket.request()), Optional.empty());
  }

  /** The response as recorded: the chosen headers, the body within the bound. */
  IdempotentResponse recordable(IdempotentResponse response) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    response.headers().forEach((name, values) -> {
      for (String chosen : recordHeaders) {
        if (chosen.equalsIgnoreCase(name)) headers.put(name, values);
      }
    });
    byte[] body = response.body();
    if (body.length > maxRecordedBody) {
      headers.put(BODY_OMITTED, List.of("omitted"));
      body = new byte[0];
    }
    return new IdempotentResponse(response.status(), headers, body);
  }

  private String scope(IdempotentRequest request) {
    String p = Objects.requireNonNullElse(principal.apply(request), "anonymous");
    String r = Objects.requireNonNullElse(route.apply(request), request.path());
    String scope = p + " " + request.method() + " " + r;
    if (scope.length() <= 500) return scope;
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(scope.getBytes(StandardCharsets.UTF_8));
      return "sha256:" + HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JDK", e);
    }
  }

  private void notify(Consumer<IdempotencyListener> event) {
    try {
      event.accept(listener);
    } catch (RuntimeException ignored) {
      // A listener's failure must not change the answer (IdempotencyListener's contract).
    }
  }

  @Override
  public String toString() {
    return "IdempotencyGuard{store=" + store + ", methods=" + methods + ", lease=" + lease
        + ", retention=" + retention + ", afterRetention=" + afterRetention + "}";
  }

  /** Builds an {@link IdempotencyGuard}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private IdempotencyStore store;
    private Function<IdempotentRequest, String> principal = IdempotentRequest::principal;
    private Function<IdempotentRequest, String> route = IdempotentRequest::path;
    private Fingerprint fingerprint = Fingerprint.defaults();
    private Set<String> methods = Set.of("POST", "PATCH");
    private boolean keyRequired;
    private String headerName = "Idempotency-Key";
    private IdempotencyKeyHeader.Format keyFormat = IdempotencyKeyHeader.Format.STRING_OR_TOKEN;
    private Duration lease = Duration.ofSeconds(30);
    private Duration retryAfter = Duration.ofSeconds(1);
    private Duration retention = Duration.ofHours(24);
    private Duration keepExpiredKeys = Duration.ZERO;
    private AfterRetention afterRetention = AfterRetention.processAgain();
    private List<String> recordHeaders = List.of("Content-Type", "Location", "Content-Location", "ETag", "Link");
    private int maxRecordedBody = 64 * 1024;
    private IntPredicate recordStatus = status -> status < 500;
    private String replayHeader = REPLAYED;
    private IdempotencyListener listener = IdempotencyListener.NONE;
    private InstantSource clock = Clock.systemUTC();

    private Builder() {}

    /**
     * Required: where records live.
     *
     * @param store the store
     * @return this builder
     */
    public Builder store(IdempotencyStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /**
     * Who the key belongs to: the tenant, account or user. Default: the adapter's authenticated
     * principal name, else {@code anonymous}. Keys are scoped by it, so two callers' equal keys never
     * meet. Called on every keyed request; must not throw.
     *
     * @param principal the request to the principal
     * @return this builder
     */
    public Builder principal(Function<IdempotentRequest, String> principal) {
      this.principal = Objects.requireNonNull(principal, "principal");
      return this;
    }

    /**
     * The operation's route, with the method part of the scope. Default the path; give the route
     * template ({@code /accounts/{id}/payments}) or a name when paths carry IDs and one key must not
     * cross them... or when it must.
     *
     * @param route the request to the route
     * @return this builder
     */
    public Builder route(Function<IdempotentRequest, String> route) {
      this.route = Objects.requireNonNull(route, "route");
      return this;
    }

    /**
     * The parts of the request a retry must repeat. Default method, path, query, body.
     *
     * @param fingerprint the fingerprint
     * @return this builder
     */
    public Builder fingerprint(Fingerprint fingerprint) {
      this.fingerprint = Objects.requireNonNull(fingerprint, "fingerprint");
      return this;
    }

    /**
     * The methods the guard covers. Default {@code POST} and {@code PATCH}.
     *
     * @param methods method names, any case
     * @return this builder
     */
    public Builder methods(String... methods) {
      Set<String> set = new LinkedHashSet<>();
      for (String m : methods) set.add(Objects.requireNonNull(m, "method").toUpperCase(Locale.ROOT));
      this.methods = set;
      return this;
    }

    /**
     * Whether a covered request without the key is refused with {@code 400} (the draft, for operations
     * documented as requiring it). Default false: such a request runs unguarded.
     *
     * @param required whether the key is required
     * @return this builder
     */
    public Builder keyRequired(boolean required) {
      this.keyRequired = required;
      return this;
    }

    /**
     * The request header. Default {@code Idempotency-Key}.
     *
     * @param name the header name
     * @return this builder
     */
    public Builder headerName(String name) {
      this.headerName = Objects.requireNonNull(name, "headerName");
      return this;
    }

    /**
     * Which spellings of the key are accepted. Default {@code STRING_OR_TOKEN}.
     *
     * @param format the format
     * @return this builder
     */
    public Builder keyFormat(IdempotencyKeyHeader.Format format) {
      this.keyFormat = Objects.requireNonNull(format, "keyFormat");
      return this;
    }

    /**
     * How long a claim is exclusive: after it, a retry takes the key over (crash recovery). 100 ms to
     * 1 h; default 30 s. Longer than the slowest handler, or two requests run at once.
     *
     * @param lease the lease
     * @return this builder
     */
    public Builder lease(Duration lease) {
      this.lease = Objects.requireNonNull(lease, "lease");
      return this;
    }

    /**
     * The {@code Retry-After} of a {@code 409}, in whole seconds (rounded up). 1 s to the lease;
     * default 1 s.
     *
     * @param retryAfter the delay
     * @return this builder
     */
    public Builder retryAfter(Duration retryAfter) {
      this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
      return this;
    }

    /**
     * How long a completed key is replayed. 1 s to 3650 days; default 24 h (Stripe's). Keep it longer
     * than the clients' retry window, outbox resumes included.
     *
     * @param retention the retention
     * @return this builder
     */
    public Builder retention(Duration retention) {
      this.retention = Objects.requireNonNull(retention, "retention");
      return this;
    }

    /**
     * How long after retention {@link #purge()} keeps a key, so that {@link AfterRetention#refuse()}
     * can still recognise it. 0 to 3650 days; default 0.
     *
     * @param keep the extra time
     * @return this builder
     */
    public Builder keepExpiredKeys(Duration keep) {
      this.keepExpiredKeys = Objects.requireNonNull(keep, "keepExpiredKeys");
      return this;
    }

    /**
     * What a key past retention gets. Default {@link AfterRetention#processAgain()}.
     *
     * @param afterRetention the policy
     * @return this builder
     */
    public Builder afterRetention(AfterRetention afterRetention) {
      this.afterRetention = Objects.requireNonNull(afterRetention, "afterRetention");
      return this;
    }

    /**
     * The response headers recorded and replayed (others, e.g. {@code Set-Cookie} or {@code Date}, are
     * not). Default Content-Type, Location, Content-Location, ETag, Link.
     *
     * @param names header names, any case
     * @return this builder
     */
    public Builder recordHeaders(String... names) {
      for (String n : names) Objects.requireNonNull(n, "header name");
      this.recordHeaders = List.of(names);
      return this;
    }

    /**
     * The largest body recorded, in bytes: 0 to 1 MiB; default 64 KiB.
     *
     * @param bytes the bound
     * @return this builder
     */
    public Builder maxRecordedBody(int bytes) {
      this.maxRecordedBody = bytes;
      return this;
    }

    /**
     * Which statuses are recorded; others release the key (a retry runs the handler again), so they
     * must mean "no effect". Default: below 500.
     *
     * @param recordStatus the predicate
     * @return this builder
     */
    public Builder recordStatus(IntPredicate recordStatus) {
      this.recordStatus = Objects.requireNonNull(recordStatus, "recordStatus");
      return this;
    }

    /**
     * The header that marks a replay, value {@code true}. Default {@code Idempotent-Replayed}.
     *
     * @param name the header name
     * @return this builder
     */
    public Builder replayHeader(String name) {
      this.replayHeader = Objects.requireNonNull(name, "replayHeader");
      return this;
    }

    /**
     * Told about claims, replays, 409s, mismatches and expired leases. Default none.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder listener(IdempotencyListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Retention is measured on this clock (leases on the store's). Default {@link Clock#systemUTC()}.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the guard.
     *
     * @return the guard
     * @throws IllegalStateException when no store was set
     * @throws IllegalArgumentException naming the field and value when a setting is out of range
     */
    public IdempotencyGuard build() {
      if (store == null) throw new IllegalStateException("store: required");
      range("lease", lease, Duration.ofMillis(100), Duration.ofHours(1));
      range("retryAfter", retryAfter, Duration.ofSeconds(1), Duration.ofHours(1));
      if (retryAfter.compareTo(lease) > 0 && lease.compareTo(Duration.ofSeconds(1)) >= 0) {
        throw new IllegalArgumentException("retryAfter: " + retryAfter + " is longer than the lease " + lease);
      }
      range("retention", retention, Duration.ofSeconds(1), Duration.ofDays(3650));
      range("keepExpiredKeys", keepExpiredKeys, Duration.ZERO, Duration.ofDays(3650));
      if (maxRecordedBody < 0 || maxRecordedBody > JdbcIdempotencyStore.MAX_BODY_BYTES) {
        throw new IllegalArgumentException("maxRecordedBody: " + maxRecordedBody + " is outside 0.."
            + JdbcIdempotencyStore.MAX_BODY_BYTES);
      }
      if (methods.isEmpty()) throw new IllegalArgumentException("methods: empty");
      if (headerName.isBlank()) throw new IllegalArgumentException("headerName: blank");
      if (replayHeader.isBlank()) throw new IllegalArgumentException("replayHeader: blank");
      return new IdempotencyGuard(this);
    }

    private static void range(String field, Duration d, Duration min, Duration max) {
      if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
        throw new IllegalArgumentException(field + ": " + d + " is outside " + min + ".." + max);
      }
    }
  }
}
