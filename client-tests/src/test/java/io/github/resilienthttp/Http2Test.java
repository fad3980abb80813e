package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 (prior knowledge, on loopback): streams the server refused (RFC 9113 §8.7) or did not
 * take because of a GOAWAY (§6.8) were not processed, so they are "not sent" and retried for any
 * method, a keyless POST included; a reset after the server read the request stays "outcome
 * unknown".
 */
class Http2Test {
  /** RFC 9113 §7 error codes. */
  private static final int REFUSED_STREAM = 0x7;
  private static final int INTERNAL_ERROR = 0x2;
  private static final MediaType JSON = MediaType.get("application/json");

  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.setProtocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
    server.start();
    okHttp = new OkHttpClient.Builder().protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE))
        .readTimeout(Duration.ofSeconds(5)).build();
  }

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  /**
   * Real time with a 100 ms backoff, not the fake clock's instant retries: MockWebServer takes an
   * HTTP/2 stream's socket effect from the queue's head before it dequeues that answer, so an
   * instant retry on a second stream could meet a queued refusal again on a loaded machine (seen
   * in CI-like runs).
   */
  private ResilientHttpClient.Builder client() {
    return ResilientHttpClient.wrap(okHttp).random(new SplittableRandom(1))
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(100))).build());
  }

  private Request post() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  /**
   * {@code RST_STREAM(REFUSED_STREAM)} once the server has read the whole request and taken this
   * answer off the queue (RFC 9113 §8.7: not processed, however much arrived). Refused at the
   * request's start instead, while its DATA frame is still arriving, OkHttp's server side drops the
   * stream before it writes the reset; a DATA frame in that gap draws a {@code PROTOCOL_ERROR} that
   * may be written first, a different fault that the client rightly calls outcome unknown. RFC 9113
   * §5.1 says such late frames are to be ignored (OkHttp issue 6171).
   */
  private static MockResponse refused() {
    return new MockResponse.Builder().onResponseStart(new SocketEffect.CloseStream(REFUSED_STREAM))
        .build();
  }

  private static MockResponse created() {
    return new MockResponse.Builder().code(201).body("created").build();
  }

  @Test
  void refusedStreamIsRetriedForAKeylessPost() throws Exception {
    server.enqueue(refused());
    server.enqueue(created());
    Operation op = client().build().operation(post()).sendIdempotencyKey(false);
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(r.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
    }
    assertThat(op.attempts()).isEqualTo(2);
  }

  @Test
  void refusedStreamIsRetriedForAKeylessPostOnAPlainCall() throws Exception {
    server.enqueue(refused());
    server.enqueue(created());
    ResilientHttpClient client = client().idempotencyKeys(IdempotencyKeyPolicy.builder()
        .send(IdempotencyKeyPolicy.Send.NEVER).build()).build();
    try (Response r = client.okHttpClient().newCall(post()).execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    RecordedRequest refusedOne = server.takeRequest(5, TimeUnit.SECONDS);
    RecordedRequest answered = server.takeRequest(5, TimeUnit.SECONDS);
    assertThat(refusedOne.getBody().utf8()).isEqualTo(answered.getBody().utf8())
        .isEqualTo("{\"amount\":100}");
    assertThat(refusedOne.getHeaders().get("Idempotency-Key")).isNull();
    assertThat(answered.getHeaders().get("Idempotency-Key")).isNull();
  }

  @Test
  void refusedStreamIsRetriedAsync() throws Exception {
    server.enqueue(refused());
    server.enqueue(created());
    Operation op = client().build().operation(post()).sendIdempotencyKey(false);
    try (Response r = op.executeAsync().get(10, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(201);
    }
  }

  @Test
  void everyStreamRefusedMeansNothingWasDone() {
    for (int i = 0; i < 3; i++) {
      server.enqueue(refused());
    }
    Operation op = client().build().operation(post()).sendIdempotencyKey(false);
    assertThatThrownBy(op::execute)
        .isInstanceOf(RetriesExhaustedException.class)
        .isNotInstanceOf(OutcomeUnknownException.class)
        .satisfies(e -> assertThat(((ResilientHttpException) e).reason())
            .isEqualTo("attempts-exhausted"));
    assertThat(op.attempts()).isEqualTo(3);
  }

  @Test
  void resetAfterTheRequestWasReadStaysOutcomeUnknown() {
    server.enqueue(new MockResponse.Builder()
        .onResponseStart(new SocketEffect.CloseStream(INTERNAL_ERROR)).build());
    server.enqueue(created());
    Operation op = client().build().operation(post()).sendIdempotencyKey(false);
    assertThatThrownBy(op::execute).isInstanceOf(OutcomeUnknownException.class);
    assertThat(op.attempts()).isEqualTo(1);
  }

  @Test
  void resetAfterTheRequestWasReadIsRetriedWithTheKey() throws Exception {
    server.enqueue(new MockResponse.Builder()
        .onResponseStart(new SocketEffect.CloseStream(INTERNAL_ERROR)).build());
    server.enqueue(created());
    Operation op = client().build().operation(post());
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    String first = server.takeRequest(5, TimeUnit.SECONDS).getHeaders().get("Idempotency-Key");
    String second = server.takeRequest(5, TimeUnit.SECONDS).getHeaders().get("Idempotency-Key");
    assertThat(first).isNotNull().isEqualTo(second).isEqualTo(op.idempotencyKey());
  }

  @Test
  void refusedOneShotBodyIsReportedAsNotExecuted() {
    server.enqueue(refused());
    server.enqueue(created());
    RequestBody oneShot = new RequestBody() {
      @Override
      public MediaType contentType() {
        return JSON;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        sink.writeUtf8("{\"amount\":100}");
      }

      @Override
      public boolean isOneShot() {
        return true;
      }
    };
    Request request = new Request.Builder().url(server.url("/upload")).post(oneShot).build();
    Operation op = client().build().operation(request).sendIdempotencyKey(false);
    // The body was written before the refusal came: it cannot be written again, and the server
    // did not process it, so nothing was done.
    assertThatThrownBy(op::execute)
        .isInstanceOf(RetriesExhaustedException.class)
        .isNotInstanceOf(OutcomeUnknownException.class)
        .satisfies(e -> assertThat(((ResilientHttpException) e).reason())
            .isEqualTo("one-shot-body"));
  }

  /**
   * A graceful restart under load: the server sends GOAWAY after every 4th answer, while other
   * keyless POSTs are in flight on the connection. Streams above the GOAWAY's last-stream-id and
   * requests that find the connection shutting down are retried (refused, not processed); no
   * refusal ever ends in {@code OutcomeUnknownException}, and no POST is processed twice.
   * (MockWebServer answers a request body sent on a stream it ignored after its GOAWAY with
   * {@code RST_STREAM(PROTOCOL_ERROR)}: that reset does not say "not processed", so such a keyless
   * POST is, correctly, outcome unknown. Real servers refuse those streams; the deterministic
   * GOAWAY cases are below, on a raw-frame server.)
   */
  @Test
  void gracefulRestartUnderLoadNeverCallsARefusalUnknownNorRunsAPostTwice() throws Exception {
    AtomicInteger streams = new AtomicInteger();
    ConcurrentHashMap<String, AtomicInteger> processed = new ConcurrentHashMap<>();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        processed.computeIfAbsent(request.getBody().utf8(), b -> new AtomicInteger())
            .incrementAndGet();
        return new MockResponse.Builder().code(201).body("ok").build();
      }

      /** MockWebServer takes an answer's socket effects from peek(), at the stream's start. */
      @Override
      public MockResponse peek() {
        MockResponse.Builder b = new MockResponse.Builder().code(201).body("ok");
        if (streams.incrementAndGet() % 4 == 0) {
          b.onResponseEnd(SocketEffect.ShutdownConnection.INSTANCE);
        }
        return b.build();
      }
    });
    ConcurrentHashMap<String, AtomicInteger> reasons = new ConcurrentHashMap<>();
    List<Throwable> refusalsCalledUnknown = new java.util.concurrent.CopyOnWriteArrayList<>();
    ResilientHttpClient client = client()
        .retryPolicy(RetryPolicy.builder().maxAttempts(5)
            .backoff(Backoff.fixed(Duration.ofMillis(1))).build())
        .retryBudget(RetryBudget.unlimited())
        .addListener(new OperationListener() {
          @Override
          public void attemptEnded(OperationInfo operation, int attempt, int statusCode,
              IOException failure, Decision decision, Duration duration) {
            reasons.computeIfAbsent(decision.reason(), k -> new AtomicInteger()).incrementAndGet();
            boolean refusal = failure != null
                && (String.valueOf(failure.getMessage()).endsWith("REFUSED_STREAM")
                || failure.getClass().getSimpleName().equals("ConnectionShutdownException"));
            if (refusal && decision.kind() != Decision.Kind.RETRY) {
              refusalsCalledUnknown.add(failure);
            }
          }
        }).build();
    int threads = 4;
    int perThread = 15;
    AtomicInteger created = new AtomicInteger();
    AtomicInteger unknown = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        results.add(pool.submit(() -> {
          for (int i = 0; i < perThread; i++) {
            Request request = new Request.Builder().url(server.url("/payments"))
                .post(RequestBody.create("{\"order\":\"" + thread + "-" + i + "\"}", JSON))
                .build();
            try (Response r = client.operation(request).sendIdempotencyKey(false).execute()) {
              assertThat(r.code()).isEqualTo(201);
              created.incrementAndGet();
            } catch (OutcomeUnknownException e) {
              unknown.incrementAndGet();
            }
          }
          return null;
        }));
      }
      for (Future<?> f : results) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    System.out.println("Http2Test graceful restart: " + created + " created, " + unknown
        + " outcome unknown, " + streams + " streams; decisions " + reasons);
    assertThat(refusalsCalledUnknown).isEmpty();
    assertThat(created.get() + unknown.get()).isEqualTo(threads * perThread);
    assertThat(processed.values()).allMatch(n -> n.get() == 1);
    assertThat(processed.size()).isGreaterThanOrEqualTo(created.get());
  }

  /**
   * A GOAWAY whose last-stream-id is below the request's stream (RFC 9113 §6.8: "not processed"),
   * on a raw HTTP/2 server: OkHttp refuses the stream and the SDK retries a keyless POST on a new
   * connection, whose answer it returns (never {@code OutcomeUnknownException}: nothing was processed).
   */
  @Test
  void goAwayBelowTheStreamIsRetriedForAKeylessPost() throws Exception {
    try (GoAwayServer raw = new GoAwayServer(1)) {
      Request request = new Request.Builder().url("http://127.0.0.1:" + raw.port() + "/payments")
          .post(RequestBody.create("{\"amount\":100}", JSON)).build();
      List<String> reasons = new java.util.concurrent.CopyOnWriteArrayList<>();
      Operation op = client().addListener(new OperationListener() {
        @Override
        public void attemptEnded(OperationInfo operation, int attempt, int statusCode,
            IOException failure, Decision decision, Duration duration) {
          reasons.add(decision.reason());
        }
      }).build().operation(request).sendIdempotencyKey(false);
      try (Response r = op.execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
      assertThat(reasons).containsExactly("http2-refused-stream", "status-200");
      assertThat(op.attempts()).isEqualTo(2);
      assertThat(raw.connections()).isEqualTo(2);
      assertThat(raw.answered()).isEqualTo(1);
    }
  }

  @Test
  void goAwayOnEveryConnectionMeansNothingWasDone() throws Exception {
    try (GoAwayServer raw = new GoAwayServer(Integer.MAX_VALUE)) {
      Request request = new Request.Builder().url("http://127.0.0.1:" + raw.port() + "/payments")
          .post(RequestBody.create("{\"amount\":100}", JSON)).build();
      Operation op = client().build().operation(request).sendIdempotencyKey(false);
      assertThatThrownBy(op::execute)
          .isInstanceOf(RetriesExhaustedException.class)
          .isNotInstanceOf(OutcomeUnknownException.class);
      assertThat(op.attempts()).isEqualTo(3);
      assertThat(raw.answered()).isZero();
    }
  }

  /**
   * A minimal HTTP/2 prior-knowledge server, speaking raw frames (RFC 9113 §4): on its first
   * {@code goAwayConnections} connections it answers the first request's HEADERS with
   * {@code GOAWAY(last-stream-id 0, NO_ERROR)}, so that stream was provably not processed; on later
   * connections it answers {@code 200} with no body. One connection at a time, loopback only,
   * every read bounded by a socket timeout.
   */
  static final class GoAwayServer implements AutoCloseable {
    private final java.net.ServerSocket socket;
    private final Thread thread;
    private final int goAwayConnections;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger answered = new AtomicInteger();

    GoAwayServer(int goAwayConnections) throws IOException {
      this.goAwayConnections = goAwayConnections;
      socket = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
      thread = new Thread(this::serve, "goaway-server");
      thread.setDaemon(true);
      thread.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    int connections() {
      return connections.get();
    }

    int answered() {
      return answered.get();
    }

    private void serve() {
      while (!socket.isClosed()) {
        try (java.net.Socket s = socket.accept()) {
          s.setSoTimeout(5_000);
          serveConnection(s, connections.incrementAndGet() <= goAwayConnections);
        } catch (IOException closedOrBroken) {
          // next connection, or the end
        }
      }
    }

    private void serveConnection(java.net.Socket s, boolean goAway) throws IOException {
      java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
      java.io.OutputStream out = s.getOutputStream();
      in.readFully(new byte[24]); // the client's connection preface
      frame(out, 0x4, 0, 0, new byte[0]); // our SETTINGS
      for (int frames = 0; frames < 100; frames++) {
        int length = in.readUnsignedByte() << 16 | in.readUnsignedByte() << 8 | in.readUnsignedByte();
        int type = in.readUnsignedByte();
        int flags = in.readUnsignedByte();
        int stream = in.readInt() & 0x7fffffff;
        in.readFully(new byte[length]);
        if (type == 0x4 && (flags & 0x1) == 0) {
          frame(out, 0x4, 0x1, 0, new byte[0]); // SETTINGS ACK
        } else if (type == 0x1) { // HEADERS: a request
          if (goAway) {
            frame(out, 0x7, 0, 0, new byte[8]); // GOAWAY last-stream-id 0, NO_ERROR
            out.flush();
            sleepQuietly();
            return;
          }
          // Counted before it is sent: once the client has read it, the test reads the count.
          answered.incrementAndGet();
          // :status 200 (HPACK static table index 8), END_HEADERS | END_STREAM.
          frame(out, 0x1, 0x4 | 0x1, stream, new byte[] {(byte) 0x88});
        }
      }
    }

    private static void frame(java.io.OutputStream out, int type, int flags, int stream,
        byte[] payload) throws IOException {
      int n = payload.length;
      out.write(new byte[] {(byte) (n >>> 16), (byte) (n >>> 8), (byte) n, (byte) type,
          (byte) flags, (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8),
          (byte) stream});
      out.write(payload);
      out.flush();
    }

    /** Lets the client read the GOAWAY before the socket closes (a close could win the race). */
    private static void sleepQuietly() {
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public void close() throws Exception {
      socket.close();
      thread.join(5_000);
    }
  }
}
