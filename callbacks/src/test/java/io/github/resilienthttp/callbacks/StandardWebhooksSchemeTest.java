package io.github.resilienthttp.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StandardWebhooksSchemeTest {
  // The published test vector of the Standard Webhooks specification: standard-webhooks/standard-webhooks,
  // libraries/java/src/test/java/com/standardwebhooks/WebhookTest.java (verifyWebhookSignWorks); the
  // same vector is in the other reference libraries. Reproduced independently with
  // `printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}'
  //   | openssl dgst -sha256 -mac HMAC -macopt hexkey:<base64-decoded secret> -binary | base64`.
  static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  static final String ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  static final long TIMESTAMP = 1614265330;
  static final byte[] PAYLOAD = "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8);
  static final String SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
  static final String OTHER_SECRET = "whsec_c2VjcmV0LW9mLWEtcm90YXRlZC1lbmRwb2ludA==";

  static CallbackHeaders headers(String id, String ts, String sig) {
    return CallbackHeaders.ofSingle(Map.of("webhook-id", id, "webhook-timestamp", ts, "webhook-signature", sig));
  }

  @Test
  void signsThePublishedVector() {
    Map<String, String> h = StandardWebhooksScheme.of(SECRET).sign(ID, Instant.ofEpochSecond(TIMESTAMP), PAYLOAD);
    assertThat(h).containsExactly(
        Map.entry("webhook-id", ID),
        Map.entry("webhook-timestamp", "1614265330"),
        Map.entry("webhook-signature", SIGNATURE));
  }

  @Test
  void verifiesThePublishedVectorWithAndWithoutPrefixAndInAnyHeaderCase() throws Exception {
    CallbackHeaders upper = CallbackHeaders.of(Map.of(
        "Webhook-Id", List.of(ID), "WEBHOOK-TIMESTAMP", List.of("1614265330"),
        "webhook-Signature", List.of(SIGNATURE)));
    for (String secret : List.of(SECRET, SECRET.substring("whsec_".length()))) {
      VerifiedCallback v = StandardWebhooksScheme.of(secret).authenticate(upper, PAYLOAD);
      assertThat(v.eventId()).contains(ID);
      assertThat(v.timestamp()).isEqualTo(Instant.ofEpochSecond(TIMESTAMP));
      assertThat(v.body()).isEqualTo(PAYLOAD);
      assertThat(v.scheme()).isEqualTo("standard-webhooks");
    }
  }

  @Test
  void anyMatchingSignatureInTheListPasses_otherVersionsAreIgnored() throws Exception {
    String list = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v1a,abc v2," + SIGNATURE.substring(3)
        + " " + SIGNATURE;
    assertThat(StandardWebhooksScheme.of(SECRET).authenticate(headers(ID, "1614265330", list), PAYLOAD)
        .eventId()).contains(ID);
  }

  @Test
  void aSignatureOfAnotherVersionAloneDoesNotPass() {
    String v2Only = "v2," + SIGNATURE.substring(3);
    assertThatThrownBy(() -> StandardWebhooksScheme.of(SECRET)
        .authenticate(headers(ID, "1614265330", v2Only), PAYLOAD))
        .isInstanceOf(SignatureMismatchException.class)
        .hasMessageContaining("0 signature(s)");
  }

  @Test
  void rotation_aReceiverWithBothSecretsAcceptsEither_aReceiverWithTheOldOneRejectsTheNew() throws Exception {
    Instant at = Instant.ofEpochSecond(TIMESTAMP);
    Map<String, String> byNew = StandardWebhooksScheme.of(OTHER_SECRET).sign(ID, at, PAYLOAD);
    StandardWebhooksScheme both = StandardWebhooksScheme.of(OTHER_SECRET, SECRET);
    assertThat(both.authenticate(CallbackHeaders.ofSingle(byNew), PAYLOAD).eventId()).contains(ID);
    assertThat(both.authenticate(headers(ID, "1614265330", SIGNATURE), PAYLOAD).eventId()).contains(ID);
    assertThatThrownBy(() -> StandardWebhooksScheme.of(SECRET).authenticate(CallbackHeaders.ofSingle(byNew), PAYLOAD))
        .isInstanceOf(SignatureMismatchException.class);
    // A sender that rotates signs with both secrets: two entries in one header.
    Map<String, String> byBoth = both.sign(ID, at, PAYLOAD);
    assertThat(byBoth.get("webhook-signature").split(" ")).hasSize(2).contains(SIGNATURE);
  }

  @Test
  void alteredBodyIdOrTimestampFail_andMessagesNeverContainTheSecretOrASignature() {
    StandardWebhooksScheme scheme = StandardWebhooksScheme.of(SECRET);
    byte[] altered = "{\"test\": 2432232315}".getBytes(StandardCharsets.UTF_8);
    for (Object[] c : new Object[][] {
        {headers(ID, "1614265330", SIGNATURE), altered},
        {headers("msg_other", "1614265330", SIGNATURE), PAYLOAD},
        {headers(ID, "1614265331", SIGNATURE), PAYLOAD},
        {headers(ID, "1614265330", "v1,not-base64!"), PAYLOAD}}) {
      assertThatThrownBy(() -> scheme.authenticate((CallbackHeaders) c[0], (byte[]) c[1]))
          .isInstanceOf(SignatureMismatchException.class)
          .satisfies(e -> assertThat(e.getMessage())
              .doesNotContain(SECRET.substring(6)).doesNotContain(SIGNATURE.substring(3))
              .doesNotContain("2432232314"));
    }
  }

  @Test
  void missingOrMalformedHeadersAreMalformed_namingTheHeader() {
    StandardWebhooksScheme scheme = StandardWebhooksScheme.of(SECRET);
    assertMalformed(scheme, CallbackHeaders.ofSingle(Map.of("webhook-timestamp", "1", "webhook-signature", SIGNATURE)), "webhook-id");
    assertMalformed(scheme, CallbackHeaders.ofSingle(Map.of("webhook-id", ID, "webhook-signature", SIGNATURE)), "webhook-timestamp");
    assertMalformed(scheme, CallbackHeaders.ofSingle(Map.of("webhook-id", ID, "webhook-timestamp", "1")), "webhook-signature");
    assertMalformed(scheme, headers(ID, "yesterday", SIGNATURE), "webhook-timestamp");
    assertMalformed(scheme, headers(ID, "1614265330", "invalid_signature"), "webhook-signature");
    assertMalformed(scheme, headers("", "1614265330", SIGNATURE), "webhook-id");
    assertMalformed(scheme, CallbackHeaders.of(Map.of("webhook-id", List.of(ID, "msg_2"),
        "webhook-timestamp", List.of("1614265330"), "webhook-signature", List.of(SIGNATURE))), "webhook-id");
  }

  private static void assertMalformed(StandardWebhooksScheme scheme, CallbackHeaders h, String header) {
    assertThatThrownBy(() -> scheme.authenticate(h, PAYLOAD))
        .isInstanceOf(MalformedCallbackException.class)
        .hasMessageStartingWith("standard-webhooks: " + header)
        .satisfies(e -> assertThat(((MalformedCallbackException) e).header()).isEqualTo(header))
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(SIGNATURE.substring(3)));
  }

  @Test
  void badSecretsAreRejectedAtConstruction_withoutShowingThem() {
    assertThatThrownBy(StandardWebhooksScheme::of).hasMessage("secrets: at least one is required");
    assertThatThrownBy(() -> StandardWebhooksScheme.of(SECRET, "whsec_!!!"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("secrets[1]: not base64 after the whsec_ prefix (value not shown)");
    assertThatThrownBy(() -> StandardWebhooksScheme.of("whsec_c2hvcnQ="))
        .hasMessage("secrets[0]: decodes to 5 bytes, fewer than 16 (value not shown)");
    assertThat(StandardWebhooksScheme.of(SECRET, OTHER_SECRET)).hasToString("StandardWebhooksScheme{secrets=2}");
  }
}
