package io.github.resilienthttp.callbacks.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * A hostile webhook sender for tests: delivers signed events to a receiver URL over real HTTP the
 * way senders do, at least once (each attempt signed afresh at the clock's time; non-2xx answers and
 * I/O failures retried with full-jitter exponential backoff, never earlier than {@code Retry-After}),
 * and adds what the internet adds.
 *
 * <table>
 * <caption>Faults (each a probability per event, 0 by default)</caption>
 * <tr><th>fault</th><th>what is sent</th><th>{@link Kind}</th><th>retried</th></tr>
 * <tr><td>{@link Builder#duplicates(double)}</td><td>a second genuine delivery of the event, at a
 *     random later position</td><td>{@code DUPLICATE}</td><td>yes</td></tr>
 * <tr><td>{@link Builder#rotatedSecret(CallbackSigner, double)}</td><td>the genuine delivery signed
 *     with another (rotated) secret instead</td><td>{@code ROTATED_SECRET}</td><td>yes</td></tr>
 * <tr><td>{@link Builder#staleReplays(double, Duration)}</td><td>an extra copy with a valid signature
 *     over a timestamp {@code age} in the past: a replay</td><td>{@code STALE_REPLAY}</td>
 *     <td>no</td></tr>
 * <tr><td>{@link Builder#forgeries(double)}</td><td>an extra copy whose body was altered after signing
 *     (one byte appended)</td><td>{@code FORGED}</td><td>no</td></tr>
 * <tr><td>{@link Builder#delays(double, Duration)}</td><td>a wait of up to {@code max} before the
 *     delivery</td><td>—</td><td>—</td></tr>
 * <tr><td>{@link Builder#reorder(int)}</td><td>deliveries shuffled within a window of that many
 *     positions</td><td>—</td><td>—</td></tr>
 * </table>
 *
 * <p>Deterministic: the plan (which deliveries, in which order, with which fault) depends only on the
 * events and {@link Builder#seed(long) seed}, and waits go through the {@link Sleeper} (use
 * {@link ManualClock#sleeper()} to make them instant). With {@link Builder#concurrency(int)} above 1
 * the plan is the same but deliveries overlap in time.
 *
 * <p>Immutable and thread-safe; {@link #send(List)} may be called again.
 */
public final class CallbackSender {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final int IO_FAILURE = -1;

  /** Why a delivery was sent. */
  public enum Kind {
    /** The event's genuine delivery. */
    ORIGINAL,
    /** A genuine second delivery of the same event. */
    DUPLICATE,
    /** The genuine delivery, signed with the rotated secret. */
    ROTATED_SECRET,
    /** A replay of a validly signed old delivery. */
    STALE_REPLAY,
    /** A delivery whose body does not match its signature. */
    FORGED;

    /** {@return true for deliveries a receiver should accept and the sender retries} */
    public boolean genuine() {
      return this == ORIGINAL || this == DUPLICATE || this == ROTATED_SECRET;
    }
  }

  /**
   * One event to deliver.
   *
   * @param id the event ID (signed as {@code webhook-id} by Standard Webhooks)
   * @param body the raw body
   */
  public record Event(String id, byte[] body) {
    /**
     * Validates and copies.
     *
     * @param id the event ID
     * @param body the raw body
     */
    public Event {
      Objects.requireNonNull(id, "id");
      body = Objects.requireNonNull(body, "body").clone();
    }

    /**
     * An event with a UTF-8 body.
     *
     * @param id the event ID
     * @param body the body text, e.g. JSON
     * @return the event
     */
    public static Event of(String id, String body) {
      return new Event(id, body.getBytes(StandardCharsets.UTF_8));
    }

    /** {@return a copy of the raw body} */
    @Override
    public byte[] body() {
      return body.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Event e && e.id.equals(id) && Arrays.equals(e.body, body);
    }

    @Override
    public int hashCode() {
      return id.hashCode() * 31 + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
      return "Event{id=" + id + ", bodyBytes=" + body.length + "}";
    }
  }

  /**
   * What happened to one delivery.
   *
   * @param position its place in the plan, from 0
   * @param eventId the event ID
   * @param kind why it was sent
   * @param statuses the receiver's status for each attempt, {@code -1} for an I/O failure
   * @param lastBody the body of the last answer (up to 8 KiB), empty after an I/O failure
   */
  public record Delivery(int position, String eventId, Kind kind, List<Integer> statuses,
      String lastBody) {
    /**
     * Copies.
     *
     * @param position the position
     * @param eventId the event ID
     * @param kind the kind
     * @param statuses the statuses
     * @param lastBody the last body
     */
    public Delivery {
      statuses = List.copyOf(statuses);
    }

    /** {@return the last attempt's status, {@code -1} for an I/O failure} */
    public int finalStatus() {
      return statuses.get(statuses.size() - 1);
    }

    /** {@return true when the last attempt got a 2xx} */
    public boolean acknowledged() {
      return finalStatus() / 100 == 2;
    }

    /** {@return how many attempts were made} */
    public int attempts() {
      return statuses.size();
    }
  }

  private record Planned(int position, Event event, Kind kind, Duration delay, long seed) {}

  private final HttpUrl url;
  private final CallbackSigner signer;
  private final CallbackSigner rotatedSigner;
  private final OkHttpClient client;
  private final InstantSource clock;
  private final Sleeper sleeper;
  private final long seed;
  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final int concurrency;
  private final double duplicates;
  private final double rotated;
  private final double stale;
  private final Duration staleAge;
  private final double forgeries;
  private final double delays;
  private final Duration maxDelay;
  private final int reorderWindow;

  private CallbackSender(Builder b) {
    this.url = b.url;
    this.signer = b.signer;
    this.rotatedSigner = b.rotatedSigner;
    this.client = b.client != null ? b.client
        : new OkHttpClient.Builder().retryOnConnectionFailure(false).build();
    this.clock = b.clock;
    this.sleeper = b.sleeper;
    this.seed = b.seed;
    this.maxAttempts = b.maxAttempts;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.concurrency = b.concurrency;
    this.duplicates = b.duplicates;
    this.rotated = b.rotated;
    this.stale = b.stale;
    this.staleAge = b.staleAge;
    this.forgeries = b.forgeries;
    this.delays = b.delays;
    this.maxDelay = b.maxDelay;
    this.reorderWindow = b.reorderWindow;
  }

  /** {@return a builder} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Delivers every event at least once (until acknowledged or attempts run out) plus the injected
   * faults, and reports what the receiver answered.
   *
   * @param events the events, in the order a well-behaved sender would send them
   * @return the report
   * @throws InterruptedException when interrupted while waiting
   */
  public SenderReport send(List<Event> events) throws InterruptedException {
    List<Planned> plan = plan(events);
    List<Delivery> results = new ArrayList<>(plan.size());
    if (concurrency == 1) {
      for (Planned p : plan) results.add(deliver(p));
      return new SenderReport(events.size(), results);
    }
    ExecutorService pool = Executors.newFixedThreadPool(concurrency, r -> {
      Thread t = new Thread(r, "callback-sender");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<Delivery>> futures = new ArrayList<>();
      for (Planned p : plan) futures.add(pool.submit(() -> deliver(p)));
      for (Future<Delivery> f : futures) {
        try {
          results.add(f.get());
        } catch (java.util.concurrent.ExecutionException e) {
          throw new IllegalStateException("delivery failed unexpectedly", e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
    }
    return new SenderReport(events.size(), results);
  }

  private List<Planned> plan(List<Event> events) {
    SplittableRandom random = new SplittableRandom(seed);
    List<Planned> plan = new ArrayList<>();
    List<double[]> order = new ArrayList<>(); // [sort key, index into plan]
    AtomicInteger n = new AtomicInteger();
    for (int i = 0; i < events.size(); i++) {
      Event e = events.get(i);
      Kind first = random.nextDouble() < rotated ? Kind.ROTATED_SECRET : Kind.ORIGINAL;
      add(plan, order, e, first, i, random, n);
      if (random.nextDouble() < duplicates) {
        add(plan, order, e, Kind.DUPLICATE, i + 1 + random.nextInt(1 + Math.max(1, reorderWindow)), random, n);
      }
      if (random.nextDouble() < stale) add(plan, order, e, Kind.STALE_REPLAY, i + random.nextDouble(), random, n);
      if (random.nextDouble() < forgeries) add(plan, order, e, Kind.FORGED, i + random.nextDouble(), random, n);
    }
    order.sort(Comparator.comparingDouble(a -> a[0]));
    List<Planned> ordered = new ArrayList<>(plan.size());
    for (double[] o : order) {
      Planned p = plan.get((int) o[1]);
      ordered.add(new Planned(ordered.size(), p.event, p.kind, p.delay, p.seed));
    }
    return ordered;
  }

  private void add(List<Planned> plan, List<double[]> order, Event e, Kind kind, double at,
      SplittableRandom random, AtomicInteger n) {
    double key = at + (reorderWindow > 0 ? random.nextDouble() * reorderWindow : 0) + n.get() * 1e-9;
    Duration delay = random.nextDouble() < delays
        ? Duration.ofMillis((long) (random.nextDouble() * maxDelay.toMillis())) : Duration.ZERO;
    plan.add(new Planned(n.get(), e, kind, delay, random.nextLong()));
    order.add(new double[] {key, n.getAndIncrement()});
  }

  private Delivery deliver(Planned p) throws InterruptedException {
    SplittableRandom random = new SplittableRandom(p.seed);
    if (!p.delay.isZero()) sleeper.sleep(p.delay);
    Event e = p.event;
    byte[] body = e.body();
    List<Integer> statuses = new ArrayList<>();
    String lastBody = "";
    int attempts = p.kind.genuine() ? maxAttempts : 1;
    for (int attempt = 1; attempt <= attempts; attempt++) {
      Instant now = clock.instant();
      Map<String, String> headers;
      byte[] sent = body;
      switch (p.kind) {
        case ROTATED_SECRET -> headers = rotatedSigner.sign(e.id(), now, body);
        case STALE_REPLAY -> headers = signer.sign(e.id(), now.minus(staleAge), body);
        case FORGED -> {
          headers = signer.sign(e.id(), now, body);
          sent = Arrays.copyOf(body, body.length + 1);
          sent[body.length] = ' ';
        }
        default -> headers = signer.sign(e.id(), now, body);
      }
      Request.Builder rb = new Request.Builder().url(url).post(RequestBody.create(sent, JSON));
      headers.forEach(rb::header);
      Duration retryAfter = Duration.ZERO;
      int status;
      try (Response r = client.newCall(rb.build()).execute()) {
        status = r.code();
        lastBody = r.peekBody(8192).string();
        String ra = r.header("Retry-After");
        if (ra != null && ra.matches("\\d{1,6}")) retryAfter = Duration.ofSeconds(Long.parseLong(ra));
      } catch (IOException io) {
        status = IO_FAILURE;
        lastBody = "";
      }
      statuses.add(status);
      if (status / 100 == 2 || attempt == attempts) break;
      long cap = Math.min(maxBackoff.toMillis(), initialBackoff.toMillis() << Math.min(30, attempt - 1));
      Duration wait = Duration.ofMillis((long) (random.nextDouble() * cap));
      sleeper.sleep(wait.compareTo(retryAfter) < 0 ? retryAfter : wait);
    }
    return new Delivery(p.position, e.id(), p.kind, statuses, lastBody);
  }

  @Override
  public String toString() {
    return "CallbackSender{url=" + url + ", seed=" + seed + ", maxAttempts=" + maxAttempts + "}";
  }

  /** Builds a {@link CallbackSender}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private HttpUrl url;
    private CallbackSigner signer;
    private CallbackSigner rotatedSigner;
    private OkHttpClient client;
    private InstantSource clock = Clock.systemUTC();
    private Sleeper sleeper = Sleeper.system();
    private long seed = 1;
    private int maxAttempts = 5;
    private Duration initialBackoff = Duration.ofMillis(500);
    private Duration maxBackoff = Duration.ofSeconds(30);
    private int concurrency = 1;
    private double duplicates;
    private double rotated;
    private double stale;
    private Duration staleAge = Duration.ofHours(1);
    private double forgeries;
    private double delays;
    private Duration maxDelay = Duration.ZERO;
    private int reorderWindow;

    private Builder() {}

    /**
     * Required: the receiver's endpoint.
     *
     * @param url an http or https URL
     * @return this builder
     */
    public Builder url(String url) {
      this.url = HttpUrl.get(Objects.requireNonNull(url, "url"));
      return this;
    }

    /**
     * Required: signs genuine deliveries, e.g. {@code StandardWebhooksScheme.of(secret)::sign}.
     *
     * @param signer the signer
     * @return this builder
     */
    public Builder signer(CallbackSigner signer) {
      this.signer = Objects.requireNonNull(signer, "signer");
      return this;
    }

    /**
     * Default: a client without OkHttp's silent retries, so the receiver sees exactly the attempts
     * the report lists.
     *
     * @param client the OkHttp client
     * @return this builder
     */
    public Builder okHttpClient(OkHttpClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * What deliveries are signed at. Default {@link Clock#systemUTC()}.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * How waits happen. Default {@link Sleeper#system()}.
     *
     * @param sleeper the sleeper
     * @return this builder
     */
    public Builder sleeper(Sleeper sleeper) {
      this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
      return this;
    }

    /**
     * Seeds the plan and the backoff jitter. Default 1.
     *
     * @param seed the seed
     * @return this builder
     */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /**
     * Attempts per genuine delivery, the first included: 1 to 100. Default 5.
     *
     * @param maxAttempts the attempts
     * @return this builder
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Backoff before retry {@code n}: uniform in [0, min(max, initial × 2^(n-1))). Default 500 ms, 30 s.
     *
     * @param initial the first cap, positive
     * @param max the largest cap, at least {@code initial}
     * @return this builder
     */
    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = Objects.requireNonNull(initial, "initial");
      this.maxBackoff = Objects.requireNonNull(max, "max");
      return this;
    }

    /**
     * Deliveries in flight at once: 1 to 64. Default 1.
     *
     * @param concurrency the threads
     * @return this builder
     */
    public Builder concurrency(int concurrency) {
      this.concurrency = concurrency;
      return this;
    }

    /**
     * Probability that an event is delivered a second time.
     *
     * @param probability 0 to 1
     * @return this builder
     */
    public Builder duplicates(double probability) {
      this.duplicates = probability;
      return this;
    }

    /**
     * Probability that an event's genuine delivery is signed with {@code rotatedSigner} instead.
     *
     * @param rotatedSigner signs with the new secret
     * @param probability 0 to 1
     * @return this builder
     */
    public Builder rotatedSecret(CallbackSigner rotatedSigner, double probability) {
      this.rotatedSigner = Objects.requireNonNull(rotatedSigner, "rotatedSigner");
      this.rotated = probability;
      return this;
    }

    /**
     * Probability of an extra, validly signed replay with a timestamp {@code age} old.
     *
     * @param probability 0 to 1
     * @param age how old the replayed timestamp is, positive
     * @return this builder
     */
    public Builder staleReplays(double probability, Duration age) {
      this.stale = probability;
      this.staleAge = Objects.requireNonNull(age, "age");
      return this;
    }

    /**
     * Probability of an extra delivery whose body no longer matches its signature.
     *
     * @param probability 0 to 1
     * @return this builder
     */
    public Builder forgeries(double probability) {
      this.forgeries = probability;
      return this;
    }

    /**
     * Probability that a delivery waits up to {@code max} before it is sent.
     *
     * @param probability 0 to 1
     * @param max the longest wait
     * @return this builder
     */
    public Builder delays(double probability, Duration max) {
      this.delays = probability;
      this.maxDelay = Objects.requireNonNull(max, "max");
      return this;
    }

    /**
     * Shuffles deliveries within a window of {@code window} positions: 0 (in order) to 10,000.
     *
     * @param window the window
     * @return this builder
     */
    public Builder reorder(int window) {
      this.reorderWindow = window;
      return this;
    }

    /**
     * Builds the sender.
     *
     * @return the sender
     * @throws IllegalStateException when url or signer is missing
     * @throws IllegalArgumentException naming the field and value when a setting is out of range
     */
    public CallbackSender build() {
      if (url == null) throw new IllegalStateException("url: required");
      if (signer == null) throw new IllegalStateException("signer: required");
      if (maxAttempts < 1 || maxAttempts > 100) {
        throw new IllegalArgumentException("maxAttempts: " + maxAttempts + " is outside 1..100");
      }
      if (concurrency < 1 || concurrency > 64) {
        throw new IllegalArgumentException("concurrency: " + concurrency + " is outside 1..64");
      }
      if (initialBackoff.isNegative() || initialBackoff.isZero() || maxBackoff.compareTo(initialBackoff) < 0) {
        throw new IllegalArgumentException("backoff: initial " + initialBackoff + " must be positive"
            + " and max " + maxBackoff + " at least initial");
      }
      if (staleAge.isNegative() || staleAge.isZero()) {
        throw new IllegalArgumentException("staleReplays age: " + staleAge + " is not positive");
      }
      if (maxDelay.isNegative()) throw new IllegalArgumentException("delays max: " + maxDelay + " is negative");
      if (reorderWindow < 0 || reorderWindow > 10_000) {
        throw new IllegalArgumentException("reorder: " + reorderWindow + " is outside 0..10000");
      }
      probability("duplicates", duplicates);
      probability("rotatedSecret", rotated);
      probability("staleReplays", stale);
      probability("forgeries", forgeries);
      probability("delays", delays);
      return new CallbackSender(this);
    }

    private static void probability(String field, double p) {
      if (!(p >= 0 && p <= 1)) throw new IllegalArgumentException(field + ": " + p + " is outside 0..1");
    }
  }
}
