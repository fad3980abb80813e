package io.github.resilienthttp.callbacks;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Receives one webhook delivery: verify, claim the event's processing record, run the handler,
 * complete, and answer with the status a sender expects. Framework-neutral: give it the raw body bytes
 * and the header map, copy the {@link CallbackResponse} back.
 *
 * <table>
 * <caption>Outcomes</caption>
 * <tr><th>delivery</th><th>answer</th><th>record</th></tr>
 * <tr><td>new, handler returns</td><td>200 {@code processed}</td><td>done, with the result</td></tr>
 * <tr><td>done before</td><td>200 {@code duplicate}; handler not run</td><td>unchanged</td></tr>
 * <tr><td>another consumer holds the lease</td><td>409, {@code Retry-After}: seconds until the lease
 *     expires (at least 1)</td><td>unchanged</td></tr>
 * <tr><td>handler throws</td><td>500 (no details in the body)</td><td>released: the next delivery
 *     runs it</td></tr>
 * <tr><td>forged / altered / unknown secret</td><td>401</td><td>none</td></tr>
 * <tr><td>authentic but outside tolerance</td><td>400</td><td>none</td></tr>
 * <tr><td>missing or malformed headers (a timestamp out of range too), unusable event ID</td>
 *     <td>400</td><td>none</td></tr>
 * <tr><td>body longer than {@link Builder#maxBodyBytes(int) maxBodyBytes}</td><td>413, before
 *     verification</td><td>none</td></tr>
 * <tr><td>store failure</td><td>503, {@code Retry-After: 5}</td><td>unknown; the sender retries</td></tr>
 * </table>
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#verifier(CallbackVerifier) verifier}</td><td>required</td><td>any</td></tr>
 * <tr><td>{@link Builder#store(ProcessingStore) store}</td><td>required</td><td>retention at least
 *     2 × the verifier's tolerance + the clock skew</td></tr>
 * <tr><td>{@link Builder#clockSkew(Duration) clockSkew}</td><td>1 min</td><td>0..1 h</td></tr>
 * <tr><td>{@link Builder#maxBodyBytes(int) maxBodyBytes}</td><td>1 MiB</td><td>1 B..64 MiB</td></tr>
 * <tr><td>{@link Builder#scope(String) scope}</td><td>the scheme's name</td><td>1..200 chars</td></tr>
 * <tr><td>{@link Builder#lease(Duration) lease}</td><td>60 s</td><td>1 s..24 h</td></tr>
 * <tr><td>{@link Builder#eventId(Function) eventId}</td><td>the signed event ID
 *     ({@code webhook-id})</td><td>any; required for Stripe</td></tr>
 * </table>
 *
 * <p>A delivery of an event whose record was dropped after the store's retention is processed as
 * new. A signature is accepted while the receiver's clock is within the tolerance of its timestamp,
 * either way: a window of 2 × tolerance, whose first delivery may come at its very start. So the
 * retention must cover that whole window plus the skew between the clocks of the receivers and the
 * store, and {@link Builder#build()} refuses a shorter one: then a replay of the original signature
 * always meets its record (a duplicate) or the tolerance (400). A sender that signs each retry afresh
 * is only stopped by the retention, so keep it longer than the sender's retry window too.
 *
 * <p>Error bodies say what is wrong with the delivery ({@code {"error":…,"message":…}}), never the
 * receiver's clock, its secrets or how many there are; the {@link CallbackResponse#failure()} has the
 * details for the receiver's own logs.
 *
 * <p>Immutable and thread-safe; one receiver serves every request of an endpoint.
 */
public final class CallbackReceiver {
  private static final Map<String, String> JSON = Map.of("Content-Type", "application/json");

  private final CallbackVerifier verifier;
  private final Deduplicator deduplicator;
  private final String scope;
  private final Function<VerifiedCallback, String> eventId;
  private final int maxBodyBytes;

  private CallbackReceiver(Builder b, Deduplicator deduplicator) {
    this.maxBodyBytes = b.maxBodyBytes;
    this.verifier = b.verifier;
    this.deduplicator = deduplicator;
    this.scope = b.scope != null ? b.scope : b.verifier.scheme().name();
    this.eventId = b.eventId;
  }

  /** {@return a builder} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Receives a delivery; the handler's effect and the record are two steps (see {@link Deduplicator}).
   *
   * @param headers the request headers, any case
   * @param body the raw request body bytes
   * @param handler the application's work
   * @return the answer for the sender; never throws for a bad delivery or a failing handler
   */
  public CallbackResponse receive(Map<String, ? extends List<String>> headers, byte[] body,
      CallbackHandler handler) {
    Objects.requireNonNull(handler, "handler");
    return receive(CallbackHeaders.of(headers), body,
        (callback, id) -> deduplicator.process(scope, id, claim -> handler.handle(callback)));
  }

  /**
   * Receives a delivery; the handler's writes and the completion commit in one transaction on the
   * {@link JdbcProcessingStore}'s database, so the effect happens exactly once.
   *
   * @param headers the request headers, any case
   * @param body the raw request body bytes
   * @param handler the application's work, on the transaction
   * @return the answer for the sender
   * @throws IllegalStateException when the store is not a {@link JdbcProcessingStore}
   */
  public CallbackResponse receiveInTransaction(Map<String, ? extends List<String>> headers, byte[] body,
      TransactionalCallbackHandler handler) {
    Objects.requireNonNull(handler, "handler");
    if (!(deduplicator.store() instanceof JdbcProcessingStore)) {
      throw new IllegalStateException("receiveInTransaction needs a JdbcProcessingStore, not "
          + deduplicator.store());
    }
    return receive(CallbackHeaders.of(headers), body, (callback, id) -> deduplicator.processInTransaction(
        scope, id, (tx, claim) -> handler.handle(callback, tx)));
  }

  /**
   * Receives a delivery from its body stream, reading at most {@link Builder#maxBodyBytes(int)} + 1
   * bytes: a longer body is refused ({@code 413}) without reading the rest. Does not close
   * {@code body}.
   *
   * @param headers the request headers, any case
   * @param body the request body stream
   * @param handler the application's work
   * @return the answer for the sender
   * @throws java.io.IOException when reading the body fails
   */
  public CallbackResponse receive(Map<String, ? extends List<String>> headers,
      java.io.InputStream body, CallbackHandler handler) throws java.io.IOException {
    byte[] bytes = Objects.requireNonNull(body, "body").readNBytes(maxBodyBytes + 1);
    return bytes.length > maxBodyBytes ? tooLarge() : receive(headers, bytes, handler);
  }

  /**
   * {@link #receiveInTransaction(Map, byte[], TransactionalCallbackHandler)} from the body stream,
   * bounded as {@link #receive(Map, java.io.InputStream, CallbackHandler)}.
   *
   * @param headers the request headers, any case
   * @param body the request body stream
   * @param handler the application's work, on the transaction
   * @return the answer for the sender
   * @throws java.io.IOException when reading the body fails
   */
  public CallbackResponse receiveInTransaction(Map<String, ? extends List<String>> headers,
      java.io.InputStream body, TransactionalCallbackHandler handler) throws java.io.IOException {
    byte[] bytes = Objects.requireNonNull(body, "body").readNBytes(maxBodyBytes + 1);
    return bytes.length > maxBodyBytes ? tooLarge() : receiveInTransaction(headers, bytes, handler);
  }

  private CallbackResponse tooLarge() {
    return new CallbackResponse(CallbackResponse.Outcome.BODY_TOO_LARGE, null, JSON,
        "{\"error\":\"body_too_large\",\"message\":\"the body is longer than " + maxBodyBytes
            + " bytes\"}", null);
  }

  private interface Step {
    ProcessingOutcome run(VerifiedCallback callback, String id);
  }

  private CallbackResponse receive(CallbackHeaders headers, byte[] body, Step step) {
    Objects.requireNonNull(body, "body");
    if (body.length > maxBodyBytes) {
      return tooLarge(); // before any verification work
    }
    VerifiedCallback callback;
    String id;
    try {
      callback = verifier.verify(headers, body);
      id = eventId.apply(callback);
      if (id == null || id.isEmpty() || id.length() > RecordKey.MAX_LENGTH) {
        throw new MalformedCallbackException(verifier.scheme().name(), "event ID",
            id == null || id.isEmpty() ? "is missing" : "is longer than " + RecordKey.MAX_LENGTH);
      }
    } catch (MalformedCallbackException e) {
      return error(CallbackResponse.Outcome.MALFORMED, null, "malformed", e);
    } catch (SignatureMismatchException e) {
      return error(CallbackResponse.Outcome.SIGNATURE_MISMATCH, null, "signature_mismatch", e);
    } catch (TimestampOutOfToleranceException e) {
      return error(CallbackResponse.Outcome.TIMESTAMP_OUT_OF_TOLERANCE, null, "timestamp_out_of_tolerance", e);
    } catch (CallbackVerificationException e) {
      return error(CallbackResponse.Outcome.MALFORMED, null, "malformed", e);
    } catch (RuntimeException e) {
      // the eventId function failed on a body it could not parse
      return error(CallbackResponse.Outcome.MALFORMED, null, "malformed", e);
    }
    ProcessingOutcome outcome;
    try {
      outcome = step.run(callback, id);
    } catch (ProcessingStoreException e) {
      return new CallbackResponse(CallbackResponse.Outcome.STORE_UNAVAILABLE, id,
          withRetryAfter(5), "{\"status\":\"store_unavailable\"}", e);
    }
    if (outcome instanceof ProcessingOutcome.Processed) {
      return new CallbackResponse(CallbackResponse.Outcome.PROCESSED, id, JSON,
          "{\"status\":\"processed\"}", null);
    }
    if (outcome instanceof ProcessingOutcome.Duplicate) {
      return new CallbackResponse(CallbackResponse.Outcome.DUPLICATE, id, JSON,
          "{\"status\":\"duplicate\"}", null);
    }
    if (outcome instanceof ProcessingOutcome.Busy busy) {
      return inProgress(id, busy.leaseExpiresAt(), null);
    }
    ProcessingOutcome.Failed failed = (ProcessingOutcome.Failed) outcome;
    if (failed.leaseLost()) {
      return inProgress(id, null, failed.cause());
    }
    return new CallbackResponse(CallbackResponse.Outcome.HANDLER_FAILED, id, JSON,
        "{\"status\":\"handler_failed\"}", failed.cause());
  }

  private CallbackResponse inProgress(String id, Instant leaseExpiresAt, Throwable cause) {
    long seconds = 1;
    if (leaseExpiresAt != null) {
      long millis = Duration.between(verifier.clock().instant(), leaseExpiresAt).toMillis();
      seconds = Math.max(1, (millis + 999) / 1000);
    }
    return new CallbackResponse(CallbackResponse.Outcome.IN_PROGRESS, id, withRetryAfter(seconds),
        "{\"status\":\"in_progress\"}", cause);
  }

  private static Map<String, String> withRetryAfter(long seconds) {
    Map<String, String> h = new LinkedHashMap<>(JSON);
    h.put("Retry-After", Long.toString(seconds));
    return h;
  }

  private static CallbackResponse error(CallbackResponse.Outcome outcome, String id, String code,
      Exception e) {
    return new CallbackResponse(outcome, id, JSON,
        "{\"error\":\"" + code + "\",\"message\":\"" + jsonEscape(publicMessage(e)) + "\"}", e);
  }

  /**
   * What the sender may read about its delivery: which header is wrong and how (the sender's own
   * data), whether the timestamp is too old or too new; never the receiver's clock or secrets.
   */
  private static String publicMessage(Exception e) {
    if (e instanceof MalformedCallbackException) {
      return e.getMessage(); // "<scheme>: <header> <problem>", all about the delivery
    } else if (e instanceof SignatureMismatchException) {
      return "no signature matches";
    } else if (e instanceof TimestampOutOfToleranceException t) {
      return t.isFuture() ? "the signed timestamp is too far in the future"
          : "the signed timestamp is too old";
    } else if (e instanceof CallbackVerificationException) {
      return "the delivery could not be verified";
    }
    return "no usable event ID";
  }

  private static String jsonEscape(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (char ch : s.toCharArray()) {
      if (ch == '"' || ch == '\\') sb.append('\\').append(ch);
      else if (ch < 0x20) sb.append(String.format("\\u%04x", (int) ch));
      else sb.append(ch);
    }
    return sb.toString();
  }

  /** {@return the scope records are kept under} */
  public String scope() {
    return scope;
  }

  @Override
  public String toString() {
    return "CallbackReceiver{scope=" + scope + ", verifier=" + verifier + ", " + deduplicator + "}";
  }

  /** Builds a {@link CallbackReceiver}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private CallbackVerifier verifier;
    private ProcessingStore store;
    private String scope;
    private Duration lease = Duration.ofSeconds(60);
    private Function<VerifiedCallback, String> eventId = callback -> callback.eventId().orElse(null);
    private Duration clockSkew = Duration.ofMinutes(1);
    private int maxBodyBytes = 1024 * 1024;

    private Builder() {}

    /**
     * Required.
     *
     * @param verifier checks signatures and timestamps
     * @return this builder
     */
    public Builder verifier(CallbackVerifier verifier) {
      this.verifier = Objects.requireNonNull(verifier, "verifier");
      return this;
    }

    /**
     * Required.
     *
     * @param store where processing records live
     * @return this builder
     */
    public Builder store(ProcessingStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /**
     * What event IDs are unique within: one per sender account or endpoint, e.g.
     * {@code stripe:acct_123}. Default: the scheme's name.
     *
     * @param scope the scope
     * @return this builder
     */
    public Builder scope(String scope) {
      this.scope = Objects.requireNonNull(scope, "scope");
      return this;
    }

    /**
     * How long a claim is exclusive: 1 s to 24 h. Default 60 s; longer than the handler takes.
     *
     * @param lease the lease
     * @return this builder
     */
    public Builder lease(Duration lease) {
      this.lease = Objects.requireNonNull(lease, "lease");
      return this;
    }

    /**
     * Where the event ID comes from. Default: the scheme's signed ID, e.g. {@code webhook-id}. For
     * Stripe, read {@code id} from the JSON body with your JSON library. A function that throws or
     * returns null or empty makes the delivery {@code 400 malformed}.
     *
     * @param eventId the function
     * @return this builder
     */
    public Builder eventId(Function<VerifiedCallback, String> eventId) {
      this.eventId = Objects.requireNonNull(eventId, "eventId");
      return this;
    }

    /**
     * How far apart the clocks of the receivers and of the store may be: added to the acceptance
     * window the store's retention must cover. 0 to 1 h. Default 1 min.
     *
     * @param clockSkew the largest skew between the clocks
     * @return this builder
     */
    public Builder clockSkew(Duration clockSkew) {
      this.clockSkew = Objects.requireNonNull(clockSkew, "clockSkew");
      return this;
    }

    /**
     * The longest body accepted, checked before verification (which reads the whole body): a longer
     * one is answered {@code 413} and nothing is recorded. 1 byte to 64 MiB. Default 1 MiB. With the
     * {@code InputStream} variants, at most this many bytes + 1 are read.
     *
     * @param maxBodyBytes the limit in bytes
     * @return this builder
     */
    public Builder maxBodyBytes(int maxBodyBytes) {
      this.maxBodyBytes = maxBodyBytes;
      return this;
    }

    /**
     * Builds the receiver.
     *
     * @return the receiver
     * @throws IllegalStateException when the verifier or store is missing
     * @throws IllegalArgumentException naming the fields and values when the store's retention is
     *     shorter than 2 × the verifier's tolerance + the clock skew (a replay could then outlive its
     *     record), or the scope, lease, clock skew or body limit is out of range
     */
    public CallbackReceiver build() {
      if (verifier == null) throw new IllegalStateException("verifier: required");
      if (store == null) throw new IllegalStateException("store: required");
      if (clockSkew.isNegative() || clockSkew.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("clockSkew: " + clockSkew + " is outside 0..1 h");
      }
      if (maxBodyBytes < 1 || maxBodyBytes > 64 * 1024 * 1024) {
        throw new IllegalArgumentException("maxBodyBytes: " + maxBodyBytes
            + " is outside 1..67108864 (64 MiB)");
      }
      Duration window = verifier.tolerance().multipliedBy(2).plus(clockSkew);
      if (store.retention().compareTo(window) < 0) {
        throw new IllegalArgumentException("store retention " + store.retention()
            + " must cover the window a signature is accepted: 2 x verifier tolerance "
            + verifier.tolerance() + " + clockSkew " + clockSkew + " = " + window);
      }
      String s = scope != null ? scope : verifier.scheme().name();
      if (s.isEmpty() || s.length() > RecordKey.MAX_LENGTH) {
        throw new IllegalArgumentException("scope: length " + s.length() + " is outside 1..200");
      }
      Deduplicator dedup = Deduplicator.builder().store(store).lease(lease).build();
      return new CallbackReceiver(this, dedup);
    }
  }
}
