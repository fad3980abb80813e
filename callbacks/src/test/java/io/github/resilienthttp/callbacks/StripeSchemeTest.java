package io.github.resilienthttp.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StripeSchemeTest {
  // Stripe publishes the algorithm (HMAC-SHA256 of "t.payload" keyed with the endpoint secret, hex),
  // not a secret/payload/signature triple, so this vector was computed independently of this code:
  //   printf '%s' '1492774577.{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded"}' \
  //     | openssl dgst -sha256 -hmac 'whsec_test_2XnXbNcbvnqSnMd8Yk0b5tEf'
  static final String SECRET = "whsec_test_2XnXbNcbvnqSnMd8Yk0b5tEf";
  static final byte[] PAYLOAD = ("{\"id\":\"evt_1NG8Du2eZvKYlo2CUI79vXWy\",\"object\":\"event\","
      + "\"type\":\"payment_intent.succeeded\"}").getBytes(StandardCharsets.UTF_8);
  static final String V1 = "df0786621521748ee0e6eadb664f0285e66155e4fff9b09b6eab2a566ec4e60b";
  static final String HEADER = "t=1492774577,v1=" + V1;

  static CallbackHeaders stripe(String value) {
    return CallbackHeaders.ofSingle(Map.of("stripe-signature", value));
  }

  @Test
  void signsAndVerifiesTheOpensslVector() throws Exception {
    StripeScheme scheme = StripeScheme.of(SECRET);
    assertThat(scheme.sign("ignored", Instant.ofEpochSecond(1492774577), PAYLOAD))
        .containsExactly(Map.entry("Stripe-Signature", HEADER));
    VerifiedCallback v = scheme.authenticate(
        CallbackHeaders.ofSingle(Map.of("Stripe-Signature", HEADER)), PAYLOAD);
    assertThat(v.timestamp()).isEqualTo(Instant.ofEpochSecond(1492774577));
    assertThat(v.eventId()).isEmpty();
    assertThat(v.scheme()).isEqualTo("stripe");
  }

  @Test
  void severalV1WhileRolling_v0AndUnknownKeysIgnored_upperCaseHexAccepted() throws Exception {
    String other = "5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd";
    StripeScheme scheme = StripeScheme.of(SECRET);
    scheme.authenticate(stripe("t=1492774577,v1=" + other + ",v1=" + V1 + ",v0=" + other), PAYLOAD);
    scheme.authenticate(stripe("t=1492774577, v1=" + V1.toUpperCase() + ",scheme=x"), PAYLOAD);
    assertThatThrownBy(() -> scheme.authenticate(stripe("t=1492774577,v0=" + V1), PAYLOAD))
        .isInstanceOf(SignatureMismatchException.class);
  }

  @Test
  void aReceiverWithTheRolledSecretAndTheOldOneAcceptsBoth() throws Exception {
    String newSecret = "whsec_new_9ZkQpL2mN7vB4xC1";
    Map<String, String> byNew = StripeScheme.of(newSecret).sign("e", Instant.ofEpochSecond(1492774577), PAYLOAD);
    StripeScheme both = StripeScheme.of(newSecret, SECRET);
    both.authenticate(CallbackHeaders.ofSingle(byNew), PAYLOAD);
    both.authenticate(stripe(HEADER), PAYLOAD);
    assertThatThrownBy(() -> StripeScheme.of(SECRET).authenticate(CallbackHeaders.ofSingle(byNew), PAYLOAD))
        .isInstanceOf(SignatureMismatchException.class)
        .hasMessage("stripe: no signature matches (1 signature(s) of a supported version compared under 1 secret(s))");
  }

  @Test
  void alteredBodyOrTimestampFail_withoutLeakingSecretOrSignature() {
    StripeScheme scheme = StripeScheme.of(SECRET);
    byte[] altered = new String(PAYLOAD, StandardCharsets.UTF_8).replace("succeeded", "failed")
        .getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> scheme.authenticate(stripe(HEADER), altered))
        .isInstanceOf(SignatureMismatchException.class)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(V1).doesNotContain(SECRET));
    assertThatThrownBy(() -> scheme.authenticate(stripe("t=1492774578,v1=" + V1), PAYLOAD))
        .isInstanceOf(SignatureMismatchException.class);
  }

  @Test
  void malformedHeaders() {
    StripeScheme scheme = StripeScheme.of(SECRET);
    for (String[] c : new String[][] {
        {"v1=" + V1, "has no t (timestamp)"},
        {"t=abc,v1=" + V1, "has a t that is not an integer"},
        {"t=1,t=2,v1=" + V1, "has more than one t"},
        {"garbage", "has an item without key=value"}}) {
      assertThatThrownBy(() -> scheme.authenticate(stripe(c[0]), PAYLOAD))
          .isInstanceOf(MalformedCallbackException.class)
          .hasMessage("stripe: Stripe-Signature " + c[1]);
    }
    assertThatThrownBy(() -> scheme.authenticate(CallbackHeaders.empty(), PAYLOAD))
        .hasMessage("stripe: Stripe-Signature is missing");
    assertThat(scheme).hasToString("StripeScheme{secrets=1}");
  }
}
