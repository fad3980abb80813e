package io.github.resilienthttp.testkit;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;

/**
 * A payments API for outcome queries: {@code POST /payments} with a body carrying
 * {@code "reference":"…"} makes a charge; {@code GET /payments?reference=…} looks it up ({@code 200}
 * with the charge, or {@code 404}). By default it ignores idempotency keys, as a downstream without
 * key support does: every POST that is processed is a new charge ({@link #honourKeys(boolean)} turns
 * replay by key on). Submits follow a script of {@link Submit} behaviours (then {@code OK}); lookups
 * may be answered with scripted statuses first ({@link #lookupFaults(Integer...)}) or always
 * ({@link #lookupAlways(int)}). MockWebServer 3, loopback. Thread-safe.
 */
public final class LookupPaymentsServer implements Closeable {
  /** What a submit does. */
  public enum Submit {
    /** Charges and answers {@code 201}. */
    OK,
    /** Charges, then drops the connection before the response: the client cannot know. */
    CHARGE_THEN_DROP,
    /** Drops the connection without charging (the request reached the server, nothing happened). */
    DROP_WITHOUT_CHARGE
  }

  private static final Pattern REFERENCE = Pattern.compile("\"reference\"\\s{0,4}:\\s{0,4}\"([^\"]{1,128})\"");

  private final MockWebServer server = new MockWebServer();
  private final Deque<Submit> script = new ArrayDeque<>();
  private final Deque<Integer> lookupFaults = new ArrayDeque<>();
  private volatile int lookupAlways;
  private volatile boolean honourKeys;
  private final Map<String, List<String>> chargesByReference = new ConcurrentHashMap<>();
  private final Map<String, String> chargeByKey = new ConcurrentHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();
  private final AtomicInteger submits = new AtomicInteger();
  private final AtomicInteger lookups = new AtomicInteger();

  /** A server on the loopback interface, started. */
  public LookupPaymentsServer() {
    server.setServerSocketFactory(new NoDelayServerSocketFactory());
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return handle(request);
      }
    });
    try {
      server.start(InetAddress.getLoopbackAddress(), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Appends submit behaviours to the script.
   *
   * @param behaviours what the next submits do
   * @return this server
   */
  public synchronized LookupPaymentsServer script(Submit... behaviours) {
    script.addAll(List.of(behaviours));
    return this;
  }

  /**
   * The next lookups answer these statuses (with {@code Retry-After: 1}) before the real answer.
   *
   * @param codes statuses
   * @return this server
   */
  public synchronized LookupPaymentsServer lookupFaults(Integer... codes) {
    lookupFaults.addAll(List.of(codes));
    return this;
  }

  /**
   * Every lookup answers {@code code} (0: the real answer), e.g. {@code 500}: the query cannot tell.
   *
   * @param code the status, or 0
   * @return this server
   */
  public LookupPaymentsServer lookupAlways(int code) {
    this.lookupAlways = code;
    return this;
  }

  /**
   * Whether the same {@code Idempotency-Key} replays the first charge instead of making a new one.
   * Default {@code false}: keys are ignored.
   *
   * @param honour whether to honour keys
   * @return this server
   */
  public LookupPaymentsServer honourKeys(boolean honour) {
    this.honourKeys = honour;
    return this;
  }

  /**
   * {@return the URL of {@code path}}
   *
   * @param path an absolute path, e.g. {@code /payments}
   */
  public HttpUrl url(String path) {
    return server.url(path);
  }

  /**
   * {@return the lookup URL of {@code reference}}
   *
   * @param reference the payment's reference, as sent in its body
   */
  public HttpUrl lookupUrl(String reference) {
    return server.url("/payments").newBuilder().addQueryParameter("reference", reference).build();
  }

  /**
   * {@return charges made for {@code reference}}
   *
   * @param reference the payment's reference, as sent in its body
   */
  public int charges(String reference) {
    return chargesByReference.getOrDefault(reference, List.of()).size();
  }

  /** {@return submits received} */
  public int submits() {
    return submits.get();
  }

  /** {@return lookups received} */
  public int lookups() {
    return lookups.get();
  }

  private MockResponse handle(RecordedRequest request) {
    HttpUrl url = request.getUrl();
    if (!url.encodedPath().equals("/payments")) {
      return json(404, "{\"error\":\"no such resource\"}");
    }
    if (request.getMethod().equals("GET")) {
      return lookup(url.queryParameter("reference"));
    }
    if (!request.getMethod().equals("POST")) {
      return json(405, "{}");
    }
    submits.incrementAndGet();
    Submit behaviour;
    synchronized (this) {
      behaviour = script.isEmpty() ? Submit.OK : script.poll();
    }
    Matcher m = REFERENCE.matcher(request.getBody() == null ? "" : request.getBody().utf8());
    String reference = m.find() ? m.group(1) : "none";
    if (behaviour == Submit.DROP_WITHOUT_CHARGE) {
      return drop();
    }
    String key = request.getHeaders().get("Idempotency-Key");
    String id;
    if (honourKeys && key != null) {
      id = chargeByKey.computeIfAbsent(key, k -> charge(reference));
    } else {
      id = charge(reference);
    }
    if (behaviour == Submit.CHARGE_THEN_DROP) {
      return drop();
    }
    return json(201, body(id, reference));
  }

  private String charge(String reference) {
    String id = "p" + ids.incrementAndGet();
    chargesByReference.computeIfAbsent(reference, r -> new CopyOnWriteArrayList<>()).add(id);
    return id;
  }

  private MockResponse lookup(String reference) {
    lookups.incrementAndGet();
    Integer fault;
    synchronized (this) {
      fault = lookupFaults.poll();
    }
    if (fault != null) {
      return new MockResponse.Builder().code(fault).addHeader("Retry-After", "1").body("{}").build();
    }
    if (lookupAlways != 0) {
      return json(lookupAlways, "{\"error\":\"lookup unavailable\"}");
    }
    List<String> found = reference == null ? List.of() : chargesByReference.getOrDefault(reference, List.of());
    return found.isEmpty() ? json(404, "{\"error\":\"not found\"}")
        : json(200, body(found.get(0), reference));
  }

  private static String body(String id, String reference) {
    return "{\"id\":\"" + id + "\",\"reference\":\"" + reference + "\",\"status\":\"charged\"}";
  }

  private static MockResponse drop() {
    return new MockResponse.Builder().onResponseStart(new SocketEffect.CloseSocket()).build();
  }

  private static MockResponse json(int code, String body) {
    return new MockResponse.Builder().code(code).addHeader("Content-Type", "application/json")
        .body(body).build();
  }

  @Override
  public void close() {
    server.close();
  }
}
