package io.github.resilienthttp.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.callbacks.CallbackResponse.Outcome;
import io.github.resilienthttp.callbacks.internal.Hmac;
import io.github.resilienthttp.callbacks.testkit.ManualClock;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The receiver's trust boundary: a signature is accepted for 2 × tolerance, so the retention must
 * cover that (a replay after the record was purged would run the handler again); any malformed or
 * out-of-range timestamp is a typed failure; error bodies reveal nothing of the receiver; the body
 * is bounded before verification; Standard Webhooks {@code v1a} (Ed25519) signatures verify with
 * the JDK.
 */
class CallbackTrustTest {
  static final String SECRET = CallbackReceiverTest.SECRET;
  final ManualClock clock = new ManualClock(Instant.parse("2026-12-01T10:00:00Z"));
  final StandardWebhooksScheme scheme = StandardWebhooksScheme.of(SECRET);
  final CallbackVerifier verifier = CallbackVerifier.builder().scheme(scheme).clock(clock).build();
  final AtomicInteger runs = new AtomicInteger();
  final CallbackHandler handler = callback -> "run " + runs.incrementAndGet();

  private CallbackReceiver receiver(Duration retention) {
    return CallbackReceiver.builder().verifier(verifier)
        .store(InMemoryProcessingStore.builder().clock(clock).retention(retention).build()).build();
  }

  private static Map<String, List<String>> headers(Map<String, String> h) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    h.forEach((k, v) -> out.put(k, List.of(v)));
    return out;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aRetentionShorterThanTheAcceptanceWindowIsRefusedAtBuild() {
    // Accepted before: longer than the 5 min tolerance, but a signature lives 10 min.
    assertThatThrownBy(() -> receiver(Duration.ofMinutes(6)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("2 x verifier tolerance PT5M + clockSkew PT1M = PT11M");
    assertThatThrownBy(() -> CallbackReceiver.builder().verifier(verifier)
        .store(InMemoryProcessingStore.builder().retention(Duration.ofMinutes(10)).build())
        .clockSkew(Duration.ZERO).maxBodyBytes(0).build())
        .hasMessageContaining("maxBodyBytes: 0");
    assertThat(CallbackReceiver.builder().verifier(verifier).clockSkew(Duration.ZERO)
        .store(InMemoryProcessingStore.builder().retention(Duration.ofMinutes(10)).build())
        .build()).isNotNull();
  }

  @Test
  void aReplayAtTheFarEndOfTheWindowMeetsItsRecord() {
    CallbackReceiver receiver = receiver(Duration.ofMinutes(11)); // the least build() allows
    byte[] body = bytes("{}");
    // Signed 5 min ahead of the receiver's clock (within tolerance): accepted now...
    Map<String, List<String>> early = headers(scheme.sign("evt_w", clock.instant()
        .plus(Duration.ofMinutes(5)), body));
    assertThat(receiver.receive(early, body, handler).outcome()).isEqualTo(Outcome.PROCESSED);
    // ...and still accepted 10 min later, when the same signature is replayed.
    clock.advance(Duration.ofMinutes(10));
    assertThat(receiver.receive(early, body, handler).outcome()).isEqualTo(Outcome.DUPLICATE);
    assertThat(runs).hasValue(1);
  }

  /** Standard Webhooks headers with a correct v1 signature over {@code timestamp} as given. */
  private static Map<String, List<String>> signedRaw(String id, String timestamp, byte[] body) {
    byte[] key = Base64.getDecoder().decode(SECRET.substring("whsec_".length()));
    byte[] mac = Hmac.sha256(key, bytes(id + "." + timestamp + "."), body);
    return headers(Map.of("webhook-id", id, "webhook-timestamp", timestamp,
        "webhook-signature", "v1," + Base64.getEncoder().encodeToString(mac)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"9223372036854775807", "-9223372036854775808", "-1", "253402300800",
      "31556889864403200"})
  void aCorrectlySignedTimestampOutOfRangeIsATypedFailure(String timestamp) {
    byte[] body = bytes("{}");
    Map<String, List<String>> h = signedRaw("evt_big", timestamp, body);
    assertThatThrownBy(() -> verifier.verify(CallbackHeaders.of(h), body))
        .isInstanceOf(MalformedCallbackException.class).hasMessageContaining("out of range");
    CallbackResponse r = receiver(Duration.ofHours(1)).receive(h, body, handler);
    assertThat(r.outcome()).isEqualTo(Outcome.MALFORMED);
    assertThat(r.status()).isEqualTo(400);
    assertThat(runs).hasValue(0);
  }

  @Test
  void aStripeTimestampOutOfRangeIsATypedFailureToo() {
    String secret = "whsec_stripe_test_secret";
    StripeScheme stripe = StripeScheme.of(secret);
    byte[] body = bytes("{}");
    String t = "9223372036854775807";
    String v1 = Hmac.hex(Hmac.sha256(bytes(secret), bytes(t + "."), body));
    CallbackHeaders h = CallbackHeaders.of(Map.of("Stripe-Signature", List.of("t=" + t + ",v1=" + v1)));
    assertThatThrownBy(() -> CallbackVerifier.builder().scheme(stripe).clock(clock).build()
        .verify(h, body)).isInstanceOf(MalformedCallbackException.class);
  }

  @Test
  void errorBodiesSayWhatIsWrongWithoutTheReceiversClockOrSecrets() {
    CallbackReceiver receiver = CallbackReceiver.builder().verifier(CallbackVerifier.builder()
            .scheme(StandardWebhooksScheme.of(SECRET, "whsec_" + Base64.getEncoder().encodeToString(
                bytes("another secret of 32 bytes......")))).clock(clock).build())
        .store(InMemoryProcessingStore.builder().clock(clock).build()).build();
    byte[] body = bytes("{}");
    Map<String, List<String>> good = headers(scheme.sign("evt_e", clock.instant(), body));
    CallbackResponse forged = receiver.receive(good, bytes("{ }"), handler);
    assertThat(forged.body())
        .isEqualTo("{\"error\":\"signature_mismatch\",\"message\":\"no signature matches\"}");
    Map<String, List<String>> future = headers(scheme.sign("evt_f", clock.instant()
        .plus(Duration.ofHours(1)), body));
    CallbackResponse early = receiver.receive(future, body, handler);
    assertThat(early.body()).isEqualTo("{\"error\":\"timestamp_out_of_tolerance\",\"message\":"
        + "\"the signed timestamp is too far in the future\"}");
    assertThat(forged.body() + early.body()).doesNotContain("2026").doesNotContain("secret");
  }

  @Test
  void aBodyOverTheLimitIsRefusedBeforeVerificationAndAStreamIsNotReadPastIt() throws Exception {
    CallbackReceiver small = CallbackReceiver.builder().verifier(verifier).maxBodyBytes(16)
        .store(InMemoryProcessingStore.builder().clock(clock).build()).build();
    byte[] body = bytes("{\"id\":\"0123456789\"}"); // 19 bytes, correctly signed
    Map<String, List<String>> h = headers(scheme.sign("evt_l", clock.instant(), body));
    CallbackResponse r = small.receive(h, body, handler);
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.outcome()).isEqualTo(Outcome.BODY_TOO_LARGE);
    assertThat(r.body()).contains("longer than 16 bytes");

    AtomicLong read = new AtomicLong();
    InputStream endless = new InputStream() {
      @Override
      public int read() {
        read.incrementAndGet();
        return 'x';
      }
    };
    assertThat(small.receive(h, endless, handler).status()).isEqualTo(413);
    assertThat(read.get()).isEqualTo(17);
    assertThat(small.receive(h, new ByteArrayInputStream(bytes("{}")), handler).status())
        .isEqualTo(401); // within the limit: verified (and this body is not the signed one)
    assertThat(runs).hasValue(0);

    CallbackReceiver byDefault = receiver(Duration.ofHours(1));
    byte[] big = new byte[1024 * 1024 + 1];
    assertThat(byDefault.receive(headers(scheme.sign("evt_b", clock.instant(), big)), big, handler)
        .status()).isEqualTo(413);
    byte[] max = Arrays.copyOf(big, 1024 * 1024);
    assertThat(byDefault.receive(headers(scheme.sign("evt_m", clock.instant(), max)), max, handler)
        .status()).isEqualTo(200);
  }

  // ---- v1a (Ed25519)

  /** Made with OpenSSL 3.0 ({@code openssl genpkey -algorithm ed25519}, {@code pkeyutl -sign -rawin}). */
  static final String OPENSSL_PUBLIC_KEY = "whpk_NoiDoz/Pl7Lu8Fo4EJ/4Dts7hBNgxQcvlAtWstbxSX4=";
  static final String OPENSSL_SIGNATURE =
      "nMx0//Wj8AWP8O1IQ3m2W4M+Nu8ZOYFNfh3txmttXhEjpl1HE8HNHEBqLJFwdMeEXwrsiNdncQigXi0WMFMCBw==";

  @Test
  void aV1aSignatureMadeWithOpenSslVerifies() throws Exception {
    byte[] body = bytes("{\"test\": 2432232314}");
    Map<String, List<String>> h = headers(Map.of("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp", "1614265330", "webhook-signature", "v1a," + OPENSSL_SIGNATURE));
    StandardWebhooksScheme v1a = StandardWebhooksScheme.ofPublicKeys(OPENSSL_PUBLIC_KEY);
    VerifiedCallback ok = v1a.authenticate(CallbackHeaders.of(h), body);
    assertThat(ok.eventId()).contains("msg_p5jXN8AQM9LWM0D4loKWxJek");
    assertThat(ok.timestamp()).isEqualTo(Instant.ofEpochSecond(1614265330));
    assertThatThrownBy(() -> v1a.authenticate(CallbackHeaders.of(h), bytes("{\"test\": 1}")))
        .isInstanceOf(SignatureMismatchException.class);
    // The HMAC scheme alone ignores v1a entries: nothing it can check.
    assertThatThrownBy(() -> scheme.authenticate(CallbackHeaders.of(h), body))
        .isInstanceOf(SignatureMismatchException.class);
  }

  @Test
  void aV1aSignatureMadeWithTheJdkVerifiesUnderItsKeyOnlyAndBesideV1() throws Exception {
    KeyPairGenerator gen = KeyPairGenerator.getInstance("Ed25519");
    KeyPair pair = gen.generateKeyPair();
    KeyPair other = gen.generateKeyPair();
    byte[] body = bytes("{\"id\":\"evt_a\"}");
    String ts = Long.toString(clock.instant().getEpochSecond());
    Signature signer = Signature.getInstance("Ed25519");
    signer.initSign(pair.getPrivate());
    signer.update(bytes("evt_a." + ts + "."));
    signer.update(body);
    String sig = Base64.getEncoder().encodeToString(signer.sign());
    Map<String, List<String>> h = headers(Map.of("webhook-id", "evt_a", "webhook-timestamp", ts,
        "webhook-signature", "v1,bm90IGEgbWFj v1a," + sig));

    StandardWebhooksScheme both = StandardWebhooksScheme.of(SECRET).withPublicKeys(whpk(other),
        whpk(pair));
    CallbackReceiver receiver = CallbackReceiver.builder()
        .verifier(CallbackVerifier.builder().scheme(both).clock(clock).build())
        .store(InMemoryProcessingStore.builder().clock(clock).build()).build();
    assertThat(receiver.receive(h, body, handler).outcome()).isEqualTo(Outcome.PROCESSED);
    assertThatThrownBy(() -> StandardWebhooksScheme.ofPublicKeys(whpk(other))
        .authenticate(CallbackHeaders.of(h), body)).isInstanceOf(SignatureMismatchException.class);
    // A v1 signature still verifies under the secret of the same scheme.
    Map<String, List<String>> v1 = headers(scheme.sign("evt_b", clock.instant(), body));
    assertThat(receiver.receive(v1, body, handler).outcome()).isEqualTo(Outcome.PROCESSED);
    assertThatThrownBy(() -> StandardWebhooksScheme.ofPublicKeys("whpk_AAAA"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("publicKeys[0]");
  }

  private static String whpk(KeyPair pair) {
    byte[] spki = pair.getPublic().getEncoded(); // X.509 SubjectPublicKeyInfo: the key is the end
    return "whpk_" + Base64.getEncoder().encodeToString(
        Arrays.copyOfRange(spki, spki.length - 32, spki.length));
  }
}
