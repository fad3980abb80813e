package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Resume tokens cannot be forged: whoever can write a token (an outbox row, a queue message) can no
 * longer point {@code resume} or {@code cancelOnServer} at another server, which would receive the
 * credentials the wrapped client's interceptors add. Unsigned, altered and foreign tokens are refused
 * with the typed reason and nothing is sent; keys rotate; earlier versions' tokens migrate.
 */
class ResumeTokenTrustTest {
  private static final byte[] KEY_1 = "1".repeat(32).getBytes(StandardCharsets.US_ASCII);
  private static final byte[] KEY_2 = "2".repeat(32).getBytes(StandardCharsets.US_ASCII);

  private final MockWebServer home = new MockWebServer();
  private final MockWebServer attacker = new MockWebServer();
  private OkHttpClient okHttp;

  @BeforeEach
  void setUp() throws Exception {
    home.start();
    attacker.start();
    okHttp = new OkHttpClient.Builder().addInterceptor(chain -> chain.proceed(
        chain.request().newBuilder().header("Authorization", "Bearer app-secret").build())).build();
  }

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    home.close();
    attacker.close();
  }

  private ResilientHttpClient.Builder client() {
    return ResilientHttpClient.wrap(okHttp);
  }

  private static AsyncOperationPolicy policy() {
    return AsyncOperationPolicy.builder().minPollInterval(Duration.ofMillis(1)).jitter(0)
        .deadline(Duration.ofSeconds(10)).build();
  }

  private static ResumeToken tokenOn(MockWebServer server, Instant keyCreatedAt) {
    return ResumeToken.forSubmit("POST", server.url("/jobs"), "key-1", true, keyCreatedAt)
        .accepted(server.url("/status"), null).withCancelUrl(server.url("/cancel"));
  }

  /** A token as this client hands it out: signed with {@code key} (via the migration opt-in). */
  private ResumeToken signed(byte[] key, ResumeToken t) {
    return client().resumeTokenKey(key).acceptUnsignedResumeTokens(List.of(t.url())).build()
        .verifyResumeToken(t);
  }

  private static void assertRefused(Throwable thrown, String reason) {
    assertThat(thrown).isInstanceOfSatisfying(InvalidResumeTokenException.class,
        e -> assertThat(e.reason()).isEqualTo(reason));
  }

  /** resume, resumeAsync and cancelOnServer all refuse {@code t}, and nothing reaches anyone. */
  private void assertAllRefuse(ResilientHttpClient c, ResumeToken t, String reason) {
    assertRefused(catchThrowable(() -> c.resume(t, policy())), reason);
    Throwable async = catchThrowable(() -> c.resumeAsync(t, policy()).get(10, TimeUnit.SECONDS));
    assertRefused(async instanceof ExecutionException ? async.getCause() : async, reason);
    assertRefused(catchThrowable(() -> c.cancelOnServer(t)), reason);
    assertThat(home.getRequestCount()).isZero();
    assertThat(attacker.getRequestCount()).isZero();
  }

  @Test
  void aHandWrittenTokenPointingElsewhereIsRefusedUnsignedAndSendsNothing() {
    ResumeToken forged = tokenOn(attacker, Instant.now());
    assertAllRefuse(client().resumeTokenKey(KEY_1).build(), ResumeToken.parse(forged.toText()),
        InvalidResumeTokenException.UNSIGNED);
    assertAllRefuse(client().build(), forged, InvalidResumeTokenException.UNSIGNED);
  }

  @Test
  void aSignedTokenWithItsFieldsAlteredIsRefused() {
    String text = signed(KEY_1, tokenOn(home, Instant.now())).toText();
    assertThat(text).startsWith("rhr2.");
    // The attacker re-encodes the fields with its own URLs and keeps the signature.
    String payload = text.substring(5, text.lastIndexOf('.'));
    String fields = new String(Base64.getUrlDecoder().decode(payload), StandardCharsets.UTF_8)
        .replace(home.url("/").toString(), attacker.url("/").toString());
    String altered = "rhr2." + Base64.getUrlEncoder().withoutPadding()
        .encodeToString(fields.getBytes(StandardCharsets.UTF_8)) + text.substring(
            text.lastIndexOf('.'));
    ResumeToken parsed = ResumeToken.parse(altered);
    assertThat(parsed.statusUrl()).contains(attacker.url("/status"));
    assertAllRefuse(client().resumeTokenKey(KEY_1).build(), parsed,
        InvalidResumeTokenException.BAD_SIGNATURE);
  }

  @Test
  void aTokenOfAnotherKeyIsRefusedAndKeysRotate() throws Exception {
    home.enqueue(new MockResponse.Builder().body("{\"status\":\"succeeded\"}").build());
    ResumeToken old = ResumeToken.parse(signed(KEY_1, tokenOn(home, Instant.now())).toText());
    assertAllRefuse(client().resumeTokenKey(KEY_2).build(), old,
        InvalidResumeTokenException.BAD_SIGNATURE);

    ResilientHttpClient rotating = client().resumeTokenKey(KEY_2, KEY_1).build();
    try (Response r = rotating.resume(old, policy())) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(home.takeRequest().getHeaders().get("Authorization")).isEqualTo("Bearer app-secret");
    String resigned = rotating.verifyResumeToken(old).toText();
    assertThat(client().resumeTokenKey(KEY_2).build().verifyResumeToken(ResumeToken.parse(resigned)))
        .isEqualTo(old);
  }

  @Test
  void aClientWithoutAKeyAcceptsOnlyItsOwnTokens() throws Exception {
    ResilientHttpClient first = client().acceptUnsignedResumeTokens(List.of(home.url("/"))).build();
    ResumeToken own = first.verifyResumeToken(tokenOn(home, Instant.now()));
    assertThat(first.newBuilder().build().verifyResumeToken(ResumeToken.parse(own.toText())))
        .isEqualTo(own); // a derived client shares the key
    assertAllRefuse(client().build(), ResumeToken.parse(own.toText()),
        InvalidResumeTokenException.BAD_SIGNATURE); // a restarted process without a key
  }

  @Test
  void aKeyMadeInTheFutureIsRefused() {
    // Made by a process whose clock is two hours ahead.
    ResumeToken future = client().resumeTokenKey(KEY_1)
        .timeSource(new io.github.resilienthttp.testkit.FakeTimeSource(
            Instant.now().plus(Duration.ofHours(2))))
        .acceptUnsignedResumeTokens(List.of(home.url("/"))).build()
        .verifyResumeToken(tokenOn(home, Instant.now().plus(Duration.ofHours(1))));
    assertAllRefuse(client().resumeTokenKey(KEY_1).build(), future,
        InvalidResumeTokenException.KEY_TIME_IN_FUTURE);
    // Within a minute of clock skew between processes, it is not.
    ResumeToken skewed = signed(KEY_1, tokenOn(home, Instant.now().plusSeconds(30)));
    assertThat(client().resumeTokenKey(KEY_1).build().verifyResumeToken(skewed)).isEqualTo(skewed);
  }

  @Test
  void anEarlierVersionsTokenIsRefusedUnlessItsOriginIsOptedInThenItMigrates() throws Exception {
    // rhr1 text is what earlier versions wrote: the same fields, unsigned.
    String stored = tokenOn(home, Instant.now()).toText();
    assertThat(stored).startsWith("rhr1.");
    ResumeToken legacy = ResumeToken.parse(stored);
    assertThat(legacy.isSigned()).isFalse();
    assertAllRefuse(client().resumeTokenKey(KEY_1).build(), legacy,
        InvalidResumeTokenException.UNSIGNED);
    assertAllRefuse(client().resumeTokenKey(KEY_1)
        .acceptUnsignedResumeTokens(List.of(attacker.url("/"))).build(), legacy,
        InvalidResumeTokenException.UNSIGNED);

    ResilientHttpClient migrating = client().resumeTokenKey(KEY_1)
        .acceptUnsignedResumeTokens(List.of(home.url("/"))).build();
    String migrated = migrating.verifyResumeToken(legacy).toText();
    assertThat(migrated).startsWith("rhr2.");
    home.enqueue(new MockResponse.Builder().body("{\"status\":\"succeeded\"}").build());
    try (Response r = client().resumeTokenKey(KEY_1).build()
        .resume(ResumeToken.parse(migrated), policy())) {
      assertThat(r.code()).isEqualTo(200);
    }
  }

  @Test
  void aSerializedTokenKeepsItsSignatureAndIsCheckedLikeText() throws Exception {
    ResumeToken t = signed(KEY_1, tokenOn(home, Instant.now()));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(t);
    }
    ResumeToken back;
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      back = (ResumeToken) in.readObject();
    }
    assertThat(back).isEqualTo(t);
    assertThat(back.isSigned()).isTrue();
    assertThat(client().resumeTokenKey(KEY_1).build().verifyResumeToken(back)).isEqualTo(t);
    assertAllRefuse(client().resumeTokenKey(KEY_2).build(), back,
        InvalidResumeTokenException.BAD_SIGNATURE);
  }

  @Test
  void theResubmitOfAForgedTokenIsRefusedToo() {
    // A forged "key was sent" flag would otherwise license re-sending a POST whose key never went.
    ResumeToken forged = ResumeToken.forSubmit("POST", home.url("/jobs"), "key-1", true,
        Instant.now());
    Request request = new Request.Builder().url(home.url("/jobs"))
        .post(okhttp3.RequestBody.create(new byte[0])).build();
    ResilientHttpClient c = client().resumeTokenKey(KEY_1).build();
    assertRefused(catchThrowable(() -> c.resume(forged, request, policy())),
        InvalidResumeTokenException.UNSIGNED);
    Throwable async = catchThrowable(() -> c.resumeAsync(forged, request, policy())
        .get(10, TimeUnit.SECONDS));
    assertRefused(async instanceof ExecutionException ? async.getCause() : async,
        InvalidResumeTokenException.UNSIGNED);
    assertThat(home.getRequestCount()).isZero();
  }

  @Test
  void aParkedTokenTheClientRefusesStaysParkedAndSendsNothing() {
    Outbox outbox = Outbox.inMemory();
    Instant now = Instant.now();
    outbox.park(new OutboxEntry(tokenOn(attacker, now), "outcome-unknown", now, 0, now));
    OutboxResumer.Report report = OutboxResumer.builder(client().resumeTokenKey(KEY_1).build(),
        outbox).build().drainOnce();
    assertThat(report.rescheduled()).isEqualTo(1);
    assertThat(outbox.size()).isEqualTo(1); // kept: a key configured later may still resume it
    assertThat(outbox.due(now.plus(Duration.ofDays(1)), 10)).singleElement()
        .satisfies(e -> assertThat(e.tries()).isZero());
    assertThat(attacker.getRequestCount()).isZero();
  }

  @Test
  void printedTokensSayWhetherTheyAreSigned() {
    assertThat(tokenOn(home, Instant.EPOCH).toString()).contains("unsigned");
    assertThat(signed(KEY_1, tokenOn(home, Instant.EPOCH)).toString()).doesNotContain("unsigned");
  }
}
