package io.github.resilienthttp.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Exercises {@link IdempotentTestServer} with a plain OkHttpClient (not the SDK). */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class IdempotentTestServerTest {

  private static final MediaType JSON = MediaType.get("application/json");
  private static final String PAY = "{\"amount\":100,\"order\":\"o-1\"}";

  private static OkHttpClient client;
  private static ExecutorService executor;

  private final List<IdempotentTestServer> servers = new ArrayList<>();

  @BeforeAll
  static void createClient() {
    client =
        new OkHttpClient.Builder()
            .retryOnConnectionFailure(false)
            .connectTimeout(Duration.ofSeconds(5))
            .readTimeout(Duration.ofSeconds(5))
            .writeTimeout(Duration.ofSeconds(5))
            .build();
    executor = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void closeClient() {
    executor.shutdownNow();
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
  }

  @AfterEach
  void closeServers() {
    servers.forEach(IdempotentTestServer::close);
  }

  private IdempotentTestServer start(IdempotentTestServer.Builder builder) throws IOException {
    IdempotentTestServer server = builder.build();
    servers.add(server);
    return server.start();
  }

  private IdempotentTestServer startDefault() throws IOException {
    return start(IdempotentTestServer.builder());
  }

  /** A fully read response. */
  record Reply(int code, Headers headers, String body) {}

  private static Reply post(IdempotentTestServer server, String key, String body)
      throws IOException {
    return post(client, server, key, body);
  }

  private static Reply post(OkHttpClient c, IdempotentTestServer server, String key, String body)
      throws IOException {
    Request.Builder request =
        new Request.Builder().url(server.url("/payments")).post(RequestBody.create(body, JSON));
    if (key != null) {
      request.header("Idempotency-Key", key);
    }
    return execute(c, request.build());
  }

  private static Reply execute(OkHttpClient c, Request request) throws IOException {
    try (Response response = c.newCall(request).execute()) {
      return new Reply(response.code(), response.headers(), response.body().string());
    }
  }

  private static String problem(String type, String title, int status) {
    return "{\"type\":\"https://resilienthttp.github.io/problems/" + type + "\",\"title\":\""
        + title + "\",\"status\":" + status + "}";
  }

  @Test
  void firstRequestWithKeyCreatesExactlyOneEffect() throws Exception {
    IdempotentTestServer server = startDefault();

    Reply reply = post(server, "key-1", PAY);

    assertThat(reply.code()).isEqualTo(201);
    assertThat(reply.headers().get("Content-Type")).isEqualTo("application/json");
    assertThat(reply.headers().get("Idempotent-Replayed")).isNull();
    assertThat(reply.body()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.effects()).containsExactly(new Effect(1, "key-1", "POST", "/payments", PAY));
    assertThat(server.effectCountForKey("key-1")).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(1);
    assertThat(server.keysSeen()).containsExactly("key-1");
    assertThat(server.stats().replays()).isZero();
    assertThat(server.stats().faulted()).isZero();
    ReceivedRequest received = server.requests().get(0);
    assertThat(received.sequence()).isEqualTo(1);
    assertThat(received.method()).isEqualTo("POST");
    assertThat(received.path()).isEqualTo("/payments");
    assertThat(received.body()).isEqualTo(PAY);
    assertThat(received.key()).isEqualTo("key-1");
    assertThat(received.headers().get("Idempotency-Key")).isEqualTo("key-1");
    assertThat(received.fault()).isEqualTo(Fault.ok());
    assertThat(received.outcome()).isEqualTo(Outcome.CREATED);
    assertThat(received.status()).isEqualTo(201);
  }

  @Test
  void replayReturnsRecordedResponseWithoutNewEffect() throws Exception {
    IdempotentTestServer server = startDefault();
    Reply first = post(server, "\"abc\"", PAY); // structured-field string: an opaque key too

    Reply replay = post(server, "\"abc\"", PAY);

    assertThat(replay.code()).isEqualTo(201);
    assertThat(replay.body()).isEqualTo(first.body()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
    assertThat(replay.headers().get("Idempotent-Replayed")).isEqualTo("true");
    assertThat(replay.headers().get("Content-Type")).isEqualTo("application/json");
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.effectCountForKey("\"abc\"")).isEqualTo(1);
    assertThat(server.effectCountForKey("abc")).isZero();
    assertThat(server.stats().replays()).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(2);
    assertThat(server.keysSeen()).containsExactly("\"abc\"", "\"abc\"");
    assertThat(server.requests())
        .extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.CREATED, Outcome.REPLAYED);
  }

  @Test
  void sameKeyWithDifferentRequestIsRejectedWith422() throws Exception {
    IdempotentTestServer server = startDefault();
    post(server, "key-1", PAY);

    Reply mismatch = post(server, "key-1", "{\"amount\":999,\"order\":\"o-1\"}");

    assertThat(mismatch.code()).isEqualTo(422);
    assertThat(mismatch.headers().get("Content-Type")).isEqualTo("application/problem+json");
    assertThat(mismatch.body())
        .isEqualTo(
            problem(
                "idempotency-key-mismatch", "Idempotency key reused with a different request", 422));
    assertThat(server.stats().mismatches()).isEqualTo(1);
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().replays()).isZero();
  }

  @Test
  void postWithoutKeyIsRejectedWhenKeysAreRequired() throws Exception {
    IdempotentTestServer server =
        start(IdempotentTestServer.builder().requireKeyForNonIdempotent(true));

    Reply reply = post(server, null, PAY);

    assertThat(reply.code()).isEqualTo(400);
    assertThat(reply.headers().get("Content-Type")).isEqualTo("application/problem+json");
    assertThat(reply.body())
        .isEqualTo(problem("idempotency-key-missing", "Idempotency key missing", 400));
    assertThat(server.stats().missingKeys()).isEqualTo(1);
    assertThat(server.stats().effects()).isZero();
    assertThat(server.keysSeen()).containsExactly((String) null);
    assertThat(server.requests().get(0).outcome()).isEqualTo(Outcome.KEY_MISSING);
  }

  @Test
  void postsWithoutKeyCreateOneEffectEachAndAreCountedAsDuplicates() throws Exception {
    IdempotentTestServer server = startDefault();

    Reply first = post(server, null, PAY);
    Reply second = post(server, null, PAY);
    Reply other = post(server, null, "{\"amount\":5,\"order\":\"o-2\"}");

    assertThat(first.body()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
    assertThat(second.body()).isEqualTo("{\"id\":\"pay_2\",\"effect\":2}");
    assertThat(other.body()).isEqualTo("{\"id\":\"pay_3\",\"effect\":3}");
    assertThat(server.stats().effects()).isEqualTo(3);
    assertThat(server.effectCountForKey(null)).isEqualTo(3);
    assertThat(server.stats().missingKeys()).isEqualTo(3);
    assertThat(server.duplicateEffects()).isEqualTo(1);
    assertThat(server.duplicateEffects(Effect::path)).isEqualTo(2);
    assertThat(server.stats().replays()).isZero();
  }

  @Test
  void getHasNoEffectAndIgnoresKey() throws Exception {
    IdempotentTestServer server = startDefault();
    Request get =
        new Request.Builder()
            .url(server.url("/payments/pay_1?expand=all"))
            .header("Idempotency-Key", "k")
            .build();

    Reply first = execute(client, get);
    Reply second = execute(client, get);

    assertThat(first.code()).isEqualTo(200);
    assertThat(first.body()).isEqualTo("{\"ok\":true}");
    assertThat(second.headers().get("Idempotent-Replayed")).isNull();
    assertThat(server.stats().effects()).isZero();
    assertThat(server.stats().replays()).isZero();
    assertThat(server.requests())
        .extracting(ReceivedRequest::path)
        .containsExactly("/payments/pay_1?expand=all", "/payments/pay_1?expand=all");
    assertThat(server.requests())
        .extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.SERVED, Outcome.SERVED);

    Reply head = execute(client, get.newBuilder().head().build());
    Reply afterHead = execute(client, get); // same pooled connection still in sync
    assertThat(head.code()).isEqualTo(200);
    assertThat(head.body()).isEmpty();
    assertThat(afterHead.body()).isEqualTo("{\"ok\":true}");
    assertThat(server.stats().effects()).isZero();
    assertThat(server.stats().requests()).isEqualTo(4);
  }

  /**
   * Characterizes OkHttp 5 itself: with retryOnConnectionFailure(true) (the OkHttp default) a POST
   * whose response is lost on a reused pooled connection is silently sent again; without a key
   * that is a duplicate effect, with a key it is a replay.
   */
  @Test
  void okHttpSilentlyResendsAPostWhoseResponseWasLostOnAPooledConnection() throws Exception {
    IdempotentTestServer server = startDefault();
    OkHttpClient defaults = client.newBuilder().retryOnConnectionFailure(true).build();
    post(defaults, server, null, "{\"warm\":true}"); // opens the connection that gets pooled
    server.script(Fault.processThenDrop());

    Reply keyless = post(defaults, server, null, PAY);

    assertThat(keyless.code()).isEqualTo(201);
    assertThat(keyless.body()).isEqualTo("{\"id\":\"pay_3\",\"effect\":3}");
    assertThat(server.stats().requests()).isEqualTo(3);
    assertThat(server.duplicateEffects()).isEqualTo(1);

    server.script(Fault.processThenDrop());
    Reply keyed = post(defaults, server, "key-1", PAY);

    assertThat(keyed.code()).isEqualTo(201);
    assertThat(keyed.headers().get("Idempotent-Replayed")).isEqualTo("true");
    assertThat(server.effectCountForKey("key-1")).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(5);
  }

  @Test
  void concurrentRequestWithSameKeyGets409WhileFirstIsProcessing() throws Exception {
    IdempotentTestServer server =
        start(IdempotentTestServer.builder().processingTime(Duration.ofMillis(600)));
    CyclicBarrier barrier = new CyclicBarrier(2);
    List<Future<Reply>> futures = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      futures.add(
          executor.submit(
              () -> {
                barrier.await();
                return post(server, "same-key", PAY);
              }));
    }
    List<Reply> replies = new ArrayList<>();
    for (Future<Reply> f : futures) {
      replies.add(f.get(10, TimeUnit.SECONDS));
    }

    assertThat(replies).extracting(Reply::code).containsExactlyInAnyOrder(201, 409);
    Reply conflict = replies.stream().filter(r -> r.code() == 409).findFirst().orElseThrow();
    assertThat(conflict.headers().get("Content-Type")).isEqualTo("application/problem+json");
    assertThat(conflict.body())
        .isEqualTo(problem("idempotency-key-in-use", "Idempotency key in use", 409));
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().inProgress()).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(2);
    assertThat(server.stats().maxConcurrent()).isEqualTo(2);

    server.processingTime(Duration.ZERO);
    Reply replay = post(server, "same-key", PAY);
    assertThat(replay.code()).isEqualTo(201);
    assertThat(replay.headers().get("Idempotent-Replayed")).isEqualTo("true");
    assertThat(server.stats().effects()).isEqualTo(1);
  }

  @Test
  void processThenDropLosesResponseButRecordsItForReplay() throws Exception {
    IdempotentTestServer server = startDefault();
    server.script(Fault.processThenDrop());

    assertThatThrownBy(() -> post(server, "key-1", PAY))
        .isInstanceOf(IOException.class)
        .hasMessageStartingWith("unexpected end of stream");
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().faulted()).isEqualTo(1);
    assertThat(server.pendingScript()).isEmpty();

    Reply replay = post(server, "key-1", PAY);

    assertThat(replay.code()).isEqualTo(201);
    assertThat(replay.body()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
    assertThat(replay.headers().get("Idempotent-Replayed")).isEqualTo("true");
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().replays()).isEqualTo(1);
    assertThat(server.stats().requests()).isEqualTo(2);
    assertThat(server.requests())
        .extracting(ReceivedRequest::fault, ReceivedRequest::outcome, ReceivedRequest::status)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(Fault.processThenDrop(), Outcome.CREATED, -1),
            org.assertj.core.groups.Tuple.tuple(Fault.ok(), Outcome.REPLAYED, 201));
  }

  @Test
  void dropBeforeProcessingFailsTheCallWithoutEffect() throws Exception {
    IdempotentTestServer server = startDefault();
    server.script(Fault.dropBeforeProcessing());

    assertThatThrownBy(() -> post(server, "key-1", PAY))
        .isInstanceOf(IOException.class)
        .hasMessageStartingWith("unexpected end of stream");
    assertThat(server.stats().effects()).isZero();
    assertThat(server.stats().requests()).isEqualTo(1);

    Reply retry = post(server, "key-1", PAY);

    assertThat(retry.code()).isEqualTo(201);
    assertThat(retry.headers().get("Idempotent-Replayed")).isNull();
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().replays()).isZero();
  }

  @Test
  void injectedStatusCarriesRetryAfterAndHasNoEffect() throws Exception {
    IdempotentTestServer server = startDefault();
    server.script(Fault.status(503, "2"), Fault.status(500));

    Reply unavailable = post(server, "key-1", PAY);
    Reply error = post(server, "key-1", PAY);
    Reply ok = post(server, "key-1", PAY);

    assertThat(unavailable.code()).isEqualTo(503);
    assertThat(unavailable.headers().get("Retry-After")).isEqualTo("2");
    assertThat(unavailable.body()).isEqualTo("injected fault: status 503\n");
    assertThat(error.code()).isEqualTo(500);
    assertThat(error.headers().get("Retry-After")).isNull();
    assertThat(ok.code()).isEqualTo(201);
    assertThat(ok.headers().get("Idempotent-Replayed")).isNull();
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().faulted()).isEqualTo(2);
    assertThat(server.stats().requests()).isEqualTo(3);
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "Wed, 21 Oct 2026 07:28:00 GMT", "garbage", "99999999999", "-1"})
  void retryAfterIsSentVerbatim(String value) throws Exception {
    IdempotentTestServer server = startDefault();
    server.script(Fault.status(429, value));

    Reply reply = post(server, "k", PAY);

    assertThat(reply.code()).isEqualTo(429);
    assertThat(reply.headers().values("Retry-After")).containsExactly(value);
    assertThat(server.stats().effects()).isZero();
  }

  @Test
  void throttledBodyIsSlowToRead() throws Exception {
    IdempotentTestServer server =
        start(IdempotentTestServer.builder().handler(BusinessHandler.defaultHandler(1000)));
    server.script(Fault.throttleBody(256, Duration.ofMillis(100)));
    String expected = "{\"id\":\"pay_1\",\"effect\":1,\"padding\":\"" + "x".repeat(1000) + "\"}";

    long start = System.nanoTime();
    Reply throttled = post(server, "key-1", PAY);
    long throttledMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(throttled.code()).isEqualTo(201);
    assertThat(throttled.body()).isEqualTo(expected).hasSize(1038);
    assertThat(throttledMillis).isGreaterThanOrEqualTo(300);
    assertThat(server.stats().effects()).isEqualTo(1);

    Reply replay = post(server, "key-1", PAY); // not throttled: the fault was for one attempt
    assertThat(replay.body()).isEqualTo(expected);
  }

  @Test
  void delayedHeadersCanMakeTheClientTimeOutAfterTheEffect() throws Exception {
    IdempotentTestServer server = startDefault();
    server.script(Fault.delayHeaders(Duration.ofMillis(800)), Fault.delayHeaders(Duration.ofMillis(300)));
    OkHttpClient impatient = client.newBuilder().readTimeout(Duration.ofMillis(300)).build();

    assertThatThrownBy(() -> post(impatient, server, "key-1", PAY))
        .isInstanceOf(SocketTimeoutException.class);
    assertThat(server.stats().effects()).isEqualTo(1);

    long start = System.nanoTime();
    Reply slowReplay = post(server, "key-1", PAY);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(slowReplay.code()).isEqualTo(201);
    assertThat(slowReplay.headers().get("Idempotent-Replayed")).isEqualTo("true");
    assertThat(millis).isGreaterThanOrEqualTo(300);
    assertThat(server.stats().effects()).isEqualTo(1);
    assertThat(server.stats().faulted()).isEqualTo(2);
  }

  @Test
  void noResponseMakesTheClientTimeOutWithoutEffect() throws Exception {
    IdempotentTestServer server = startDefault();
    server.script(Fault.noResponse());
    OkHttpClient impatient = client.newBuilder().readTimeout(Duration.ofMillis(300)).build();

    assertThatThrownBy(() -> post(impatient, server, "key-1", PAY))
        .isInstanceOf(SocketTimeoutException.class);
    assertThat(server.stats().effects()).isZero();
    assertThat(server.requests().get(0).outcome()).isEqualTo(Outcome.FAULT_NO_RESPONSE);

    Reply retry = post(server, "key-1", PAY);
    assertThat(retry.code()).isEqualTo(201);
    assertThat(server.stats().effects()).isEqualTo(1);
  }

  @Test
  void okFaultConsumesAScriptSlotOnly() throws Exception {
    IdempotentTestServer server = startDefault();
    server.script(Fault.ok(), Fault.status(503));

    assertThat(post(server, "a", PAY).code()).isEqualTo(201);
    assertThat(post(server, "b", PAY).code()).isEqualTo(503);
    assertThat(post(server, "c", PAY).code()).isEqualTo(201);
    assertThat(server.stats().faulted()).isEqualTo(1);

    server.script(Fault.status(503), Fault.status(502));
    server.clearScript();
    assertThat(server.pendingScript()).isEmpty();
    assertThat(post(server, "d", PAY).code()).isEqualTo(201);
  }

  @Test
  void seededRandomFaultsAreReproducible() throws Exception {
    IdempotentTestServer server = startDefault();
    FaultMix mix =
        FaultMix.builder()
            .lostResponse(0.15)
            .status503(0.15)
            .status429(0.15)
            .status500(0.1)
            .dropBeforeProcessing(0.1)
            .build();
    int n = 40;

    server.randomFaults(42L, mix);
    List<String> firstRun = runSequentially(server, n);
    List<Fault> firstFaults = faultsOf(server);
    int firstEffects = server.stats().effects();

    server.reset();
    server.randomFaults(42L, mix);
    List<String> secondRun = runSequentially(server, n);

    assertThat(secondRun).isEqualTo(firstRun);
    assertThat(faultsOf(server)).isEqualTo(firstFaults);
    assertThat(server.stats().effects()).isEqualTo(firstEffects);

    // The faults are exactly the draws of new Random(seed) in arrival order.
    List<Fault> expectedFaults = mix.preview(42L, n);
    assertThat(firstFaults).isEqualTo(expectedFaults);
    long faulted = expectedFaults.stream().filter(Fault::isFault).count();
    assertThat(server.stats().faulted()).isEqualTo((int) faulted);
    long processedOk = expectedFaults.stream().filter(f -> !f.isFault()).count();
    long lost = expectedFaults.stream().filter(f -> f.equals(Fault.processThenDrop())).count();
    assertThat(server.stats().effects()).isEqualTo((int) (processedOk + lost));
    assertThat(firstRun).contains("503", "429", "500", "201", "IOException");
    assertThat(expectedFaults)
        .filteredOn(f -> f.statusCode() == 429)
        .extracting(Fault::retryAfter)
        .allMatch(v -> v.equals("0") || v.equals("1"));

    // A different seed gives a different sequence.
    server.reset();
    server.randomFaults(7L, mix);
    assertThat(runSequentially(server, n)).isNotEqualTo(firstRun);
  }

  @Test
  void scriptedFaultsTakePrecedenceOverRandomOnes() throws Exception {
    IdempotentTestServer server = startDefault();
    server.randomFaults(1L, FaultMix.builder().status503(1.0).build());
    server.script(Fault.ok(), Fault.status(418));

    assertThat(post(server, "a", PAY).code()).isEqualTo(201);
    assertThat(post(server, "b", PAY).code()).isEqualTo(418);
    assertThat(post(server, "c", PAY).code()).isEqualTo(503);

    server.stopRandomFaults();
    assertThat(post(server, "d", PAY).code()).isEqualTo(201);
    assertThat(server.stats().effects()).isEqualTo(2);
  }

  private static List<String> runSequentially(IdempotentTestServer server, int n) {
    List<String> outcomes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      try {
        Reply reply = post(server, "key-" + i, "{\"order\":" + i + "}");
        outcomes.add(String.valueOf(reply.code()));
      } catch (IOException e) {
        outcomes.add("IOException");
      }
    }
    return outcomes;
  }

  private static List<Fault> faultsOf(IdempotentTestServer server) {
    return server.requests().stream().map(ReceivedRequest::fault).toList();
  }

  @Test
  void tracksPeakConcurrency() throws Exception {
    IdempotentTestServer server =
        start(IdempotentTestServer.builder().processingTime(Duration.ofMillis(500)));
    int parallel = 4;
    CyclicBarrier barrier = new CyclicBarrier(parallel);
    List<Future<Reply>> futures = new ArrayList<>();
    for (int i = 0; i < parallel; i++) {
      String key = "key-" + i;
      futures.add(
          executor.submit(
              () -> {
                barrier.await();
                return post(server, key, PAY);
              }));
    }
    for (Future<Reply> f : futures) {
      assertThat(f.get(10, TimeUnit.SECONDS).code()).isEqualTo(201);
    }

    assertThat(server.stats().maxConcurrent()).isEqualTo(parallel);
    assertThat(server.stats().inFlight()).isZero();
    assertThat(server.stats().requests()).isEqualTo(parallel);
    assertThat(server.stats().effects()).isEqualTo(parallel);
    assertThat(server.effects()).extracting(Effect::number).containsExactly(1, 2, 3, 4);
    assertThat(server.duplicateEffects(Effect::key)).isZero();
    assertThat(server.duplicateEffects()).isEqualTo(parallel - 1);

    server.processingTime(Duration.ZERO);
    post(server, "key-x", PAY);
    assertThat(server.stats().maxConcurrent()).isEqualTo(parallel);
  }

  @Test
  void resetClearsStateCountersAndScript() throws Exception {
    IdempotentTestServer server = startDefault();
    post(server, "key-1", PAY);
    post(server, "key-1", PAY);
    server.script(Fault.status(503));
    post(server, null, PAY);
    server.script(Fault.status(503));

    server.reset();

    assertThat(server.stats().requests()).isZero();
    assertThat(server.stats().effects()).isZero();
    assertThat(server.effects()).isEmpty();
    assertThat(server.stats().replays()).isZero();
    assertThat(server.stats().faulted()).isZero();
    assertThat(server.stats().missingKeys()).isZero();
    assertThat(server.keysSeen()).isEmpty();
    assertThat(server.requests()).isEmpty();
    assertThat(server.pendingScript()).isEmpty();
    assertThat(server.stats().maxConcurrent()).isZero();

    Reply again = post(server, "key-1", PAY);
    assertThat(again.code()).isEqualTo(201);
    assertThat(again.headers().get("Idempotent-Replayed")).isNull();
    assertThat(again.body()).isEqualTo("{\"id\":\"pay_1\",\"effect\":1}");
  }

  @Test
  void customHeadersAndHandler() throws Exception {
    IdempotentTestServer server =
        start(
            IdempotentTestServer.builder()
                .keyHeader("X-Request-Key")
                .replayHeader("X-Replayed")
                .handler(
                    (request, effect) ->
                        ServerResponse.of(202, "text/plain", "accepted #" + effect)
                            .withHeader("Location", "/jobs/" + effect)));
    Request request =
        new Request.Builder()
            .url(server.url("/jobs"))
            .header("X-Request-Key", "k")
            .post(RequestBody.create("job", JSON))
            .build();

    Reply first = execute(client, request);
    Reply replay = execute(client, request);

    assertThat(first.code()).isEqualTo(202);
    assertThat(first.body()).isEqualTo("accepted #1");
    assertThat(first.headers().get("Location")).isEqualTo("/jobs/1");
    assertThat(replay.body()).isEqualTo("accepted #1");
    assertThat(replay.headers().get("X-Replayed")).isEqualTo("true");
    assertThat(server.keysSeen()).containsExactly("k", "k");
    assertThat(server.stats().effects()).isEqualTo(1);
  }

  @Test
  void handlerFailureAnswers500AndForgetsTheKey() throws Exception {
    int[] calls = {0};
    IdempotentTestServer server =
        start(
            IdempotentTestServer.builder()
                .handler(
                    (request, effect) -> {
                      synchronized (calls) {
                        if (calls[0]++ == 0) {
                          throw new IllegalStateException("boom");
                        }
                      }
                      return ServerResponse.json(201, "{\"effect\":" + effect + "}");
                    }));

    Reply failed = post(server, "key-1", PAY);
    Reply retried = post(server, "key-1", PAY);

    assertThat(failed.code()).isEqualTo(500);
    assertThat(failed.body()).isEqualTo(problem("handler-failed", "Handler failed", 500));
    assertThat(retried.code()).isEqualTo(201);
    assertThat(retried.body()).isEqualTo("{\"effect\":2}");
    assertThat(server.stats().effects()).isEqualTo(2);
    assertThat(server.requests())
        .extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.HANDLER_FAILED, Outcome.CREATED);
  }

  @Test
  void closeReleasesStalledAndProcessingRequestsQuickly() throws Exception {
    IdempotentTestServer server =
        start(IdempotentTestServer.builder().processingTime(Duration.ofSeconds(30)));
    server.script(Fault.noResponse());
    OkHttpClient patient = client.newBuilder().readTimeout(Duration.ofSeconds(30)).build();
    Future<Reply> stalled = executor.submit(() -> post(patient, server, "a", PAY));
    await().atMost(Duration.ofSeconds(5)).until(() -> server.stats().requests() == 1);
    Future<Reply> processing = executor.submit(() -> post(patient, server, "b", PAY));
    await().atMost(Duration.ofSeconds(5)).until(() -> server.stats().inFlight() == 1);

    long start = System.nanoTime();
    server.close();
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(millis).isLessThan(3000);
    for (Future<Reply> f : Arrays.asList(stalled, processing)) {
      assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(IOException.class);
    }
    assertThat(server.stats().effects()).isZero();
    assertThat(server.requests())
        .extracting(ReceivedRequest::outcome)
        .containsExactly(Outcome.FAULT_NO_RESPONSE, Outcome.ABORTED);
  }

  @Test
  void faultFactoriesValidateArguments() {
    assertThatThrownBy(() -> Fault.status(99)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Fault.status(600)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Fault.delayHeaders(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Fault.throttleBody(0, Duration.ofMillis(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FaultMix.builder().status503(0.6).status500(0.6).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(Fault.status(503, "2")).isEqualTo(Fault.status(503, "2"));
    assertThat(Fault.status(503, "2").toString()).isEqualTo("Fault.status(503, \"2\")");
    assertThat(Fault.ok().isFault()).isFalse();
    assertThat(Fault.processThenDrop().processesRequest()).isTrue();
    assertThat(Fault.dropBeforeProcessing().processesRequest()).isFalse();
  }
}
