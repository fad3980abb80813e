package io.github.resilienthttp.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.resilienthttp.AttemptOutcome;
import java.io.IOException;
import java.math.BigInteger;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** RFC 9457 problem details: lenient parsing, and peeking from inside a classifier. */
class ProblemDetailsTest {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String KEY_IN_USE = "{\"type\":\"https://api.example.com/problems/"
      + "idempotency-key-in-use\",\"title\":\"Key in use\",\"status\":409,\"retryable\":true}";

  private final MockWebServer server = new MockWebServer();
  private final OkHttpClient okHttp = new OkHttpClient();

  @BeforeEach
  void start() throws IOException {
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
    okHttp.connectionPool().evictAll();
  }

  @Test
  void parsesEveryStandardMemberAndKeepsExtensionsInOrderAsPlainJava() {
    ProblemDetails p = ProblemDetails.parse("{"
        + "\"type\":\"https://example.com/probs/out-of-credit\","
        + "\"title\":\"You do not have enough credit.\","
        + "\"status\":403,"
        + "\"detail\":\"Your current balance is 30, but that costs 50.\","
        + "\"instance\":\"/account/12345/msgs/abc\","
        + "\"balance\":30,"
        + "\"accounts\":[\"/account/12345\",\"/account/67890\"],"
        + "\"limits\":{\"daily\":100,\"precise\":1.5,\"huge\":123456789012345678901234567890},"
        + "\"flag\":false,"
        + "\"nothing\":null}", MAPPER).orElseThrow();

    assertThat(p.type()).isEqualTo("https://example.com/probs/out-of-credit");
    assertThat(p.title()).contains("You do not have enough credit.");
    assertThat(p.status()).contains(403);
    assertThat(p.detail()).contains("Your current balance is 30, but that costs 50.");
    assertThat(p.instance()).contains("/account/12345/msgs/abc");
    Map<String, Object> limits = new LinkedHashMap<>();
    limits.put("daily", 100);
    limits.put("precise", 1.5);
    limits.put("huge", new BigInteger("123456789012345678901234567890"));
    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("balance", 30);
    expected.put("accounts", List.of("/account/12345", "/account/67890"));
    expected.put("limits", limits);
    expected.put("flag", false);
    expected.put("nothing", null);
    assertThat(p.extensions()).containsExactlyEntriesOf(expected);
    assertThat(p.toString()).isEqualTo("ProblemDetails{type=https://example.com/probs/out-of-credit,"
        + " title=You do not have enough credit., status=403,"
        + " extensions=[balance, accounts, limits, flag, nothing]}");
  }

  @Test
  void extensionsAreUnmodifiableAllTheWayDown() {
    ProblemDetails p = ProblemDetails.parse("{\"errors\":[{\"field\":\"amount\"}]}", MAPPER)
        .orElseThrow();
    @SuppressWarnings("unchecked")
    List<Object> errors = (List<Object>) p.extensions().get("errors");
    @SuppressWarnings("unchecked")
    Map<String, Object> first = (Map<String, Object>) errors.get(0);

    assertThatThrownBy(() -> p.extensions().put("x", 1))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> errors.add(1)).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> first.clear()).isInstanceOf(UnsupportedOperationException.class);
    assertThat(first).isEqualTo(Map.of("field", "amount"));
  }

  @Test
  void absentTypeIsAboutBlank() {
    ProblemDetails p = ProblemDetails.parse("{\"title\":\"Not Found\",\"status\":404}", MAPPER)
        .orElseThrow();

    assertThat(p.type()).isEqualTo("about:blank");
    assertThat(p.title()).contains("Not Found");
    assertThat(p.status()).contains(404);
    assertThat(p.detail()).isEmpty();
    assertThat(p.instance()).isEmpty();
    assertThat(p.extensions()).isEmpty();
  }

  @Test
  void wrongTypedStandardMembersAreIgnoredAsIfAbsent() {
    ProblemDetails p = ProblemDetails.parse("{"
        + "\"type\":42,"
        + "\"title\":[\"not\",\"a\",\"string\"],"
        + "\"status\":\"404\","
        + "\"detail\":{\"text\":\"nested\"},"
        + "\"instance\":true,"
        + "\"code\":\"E42\"}", MAPPER).orElseThrow();

    assertThat(p.type()).isEqualTo("about:blank");
    assertThat(p.title()).isEmpty();
    assertThat(p.status()).isEmpty();
    assertThat(p.detail()).isEmpty();
    assertThat(p.instance()).isEmpty();
    assertThat(p.extensions()).isEqualTo(Map.of("code", "E42"));
  }

  @Test
  void statusMustBeAnIntegerThatFitsAnInt() {
    assertThat(ProblemDetails.parse("{\"status\":404.5}", MAPPER).orElseThrow().status()).isEmpty();
    assertThat(ProblemDetails.parse("{\"status\":99999999999}", MAPPER).orElseThrow().status())
        .isEmpty();
    assertThat(ProblemDetails.parse("{\"status\":503}", MAPPER).orElseThrow().status()).contains(503);
  }

  @Test
  void anythingButAJsonObjectIsNoProblem() {
    assertThat(ProblemDetails.parse("[1,2]", MAPPER)).isEmpty();
    assertThat(ProblemDetails.parse("\"about:blank\"", MAPPER)).isEmpty();
    assertThat(ProblemDetails.parse("null", MAPPER)).isEmpty();
    assertThat(ProblemDetails.parse("", MAPPER)).isEmpty();
    assertThat(ProblemDetails.parse("{\"type\":", MAPPER)).isEmpty();
    assertThat(ProblemDetails.parse("<html>502 Bad Gateway</html>", MAPPER)).isEmpty();
  }

  @Test
  void byteAndStringParsingAgreeAndEqualityCoversEveryMember() {
    byte[] bytes = KEY_IN_USE.getBytes(StandardCharsets.UTF_8);

    assertThat(ProblemDetails.parse(bytes, MAPPER))
        .isEqualTo(ProblemDetails.parse(KEY_IN_USE, MAPPER));
    assertThat(ProblemDetails.parse(bytes, MAPPER).orElseThrow().hashCode())
        .isEqualTo(ProblemDetails.parse(KEY_IN_USE, MAPPER).orElseThrow().hashCode());
    assertThat(ProblemDetails.parse(KEY_IN_USE.replace("true", "false"), MAPPER))
        .isNotEqualTo(ProblemDetails.parse(KEY_IN_USE, MAPPER));
  }

  @Test
  void fromPeeksAtTheBodyWithoutConsumingIt() throws Exception {
    server.enqueue(new MockResponse.Builder().code(409)
        .setHeader("Content-Type", "application/problem+json")
        .setHeader("Retry-After", "2")
        .body(KEY_IN_USE).build());

    try (Response response = call()) {
      AttemptOutcome outcome = AttemptOutcome.ofResponse(response, 1, true);

      ProblemDetails p = ProblemDetails.from(outcome).orElseThrow();
      ProblemDetails again = ProblemDetails.from(outcome).orElseThrow();

      assertThat(p.type()).isEqualTo("https://api.example.com/problems/idempotency-key-in-use");
      assertThat(p.title()).contains("Key in use");
      assertThat(p.status()).contains(409);
      assertThat(p.extensions()).isEqualTo(Map.of("retryable", true));
      assertThat(again).isEqualTo(p);
      assertThat(response.body().string()).isEqualTo(KEY_IN_USE);
    }
  }

  @Test
  void contentTypeParametersAndCaseAreAccepted() {
    assertThat(ProblemDetails.isProblemJson(MediaType.get("application/problem+json"))).isTrue();
    assertThat(ProblemDetails.isProblemJson(MediaType.get("Application/Problem+JSON; charset=utf-8")))
        .isTrue();
    assertThat(ProblemDetails.isProblemJson(MediaType.get("application/json"))).isFalse();
    assertThat(ProblemDetails.isProblemJson(MediaType.get("application/problem+xml"))).isFalse();
    assertThat(ProblemDetails.isProblemJson(null)).isFalse();
  }

  @Test
  void fromIgnoresOtherContentTypesAndLeavesTheBodyAlone() throws Exception {
    server.enqueue(new MockResponse.Builder().code(409)
        .setHeader("Content-Type", "application/json").body(KEY_IN_USE).build());

    try (Response response = call()) {
      assertThat(ProblemDetails.from(AttemptOutcome.ofResponse(response, 1, true))).isEmpty();
      assertThat(response.body().string()).isEqualTo(KEY_IN_USE);
    }
  }

  @Test
  void fromGivesUpOnABodyOverTheCapAndLeavesItReadable() throws Exception {
    String padded = "{\"type\":\"https://api.example.com/problems/big\",\"pad\":\""
        + "x".repeat(ProblemDetails.MAX_PROBLEM_BYTES) + "\"}";
    server.enqueue(new MockResponse.Builder().code(400)
        .setHeader("Content-Type", "application/problem+json")
        .chunkedBody(padded, 4096).build());

    try (Response response = call()) {
      assertThat(ProblemDetails.from(AttemptOutcome.ofResponse(response, 1, true))).isEmpty();
      assertThat(response.body().string()).isEqualTo(padded);
    }
  }

  @Test
  void fromAcceptsParametersOnTheContentType() throws Exception {
    server.enqueue(new MockResponse.Builder().code(409)
        .setHeader("Content-Type", "application/problem+json; charset=utf-8")
        .body(KEY_IN_USE).build());

    try (Response response = call()) {
      assertThat(ProblemDetails.from(AttemptOutcome.ofResponse(response, 1, true))
          .map(ProblemDetails::type))
          .contains("https://api.example.com/problems/idempotency-key-in-use");
    }
  }

  @Test
  void fromAnExceptionOutcomeIsEmpty() {
    Request request = new Request.Builder().url("http://localhost/").build();
    AttemptOutcome outcome = AttemptOutcome.ofException(
        request, new SocketTimeoutException("timeout"), 1, true, false);

    assertThat(ProblemDetails.from(outcome)).isEmpty();
  }

  @Test
  void fromMalformedProblemBodyIsEmptyAndTheBodyIsUntouched() throws Exception {
    server.enqueue(new MockResponse.Builder().code(500)
        .setHeader("Content-Type", "application/problem+json")
        .body("{\"type\": oops").build());

    try (Response response = call()) {
      assertThat(ProblemDetails.from(AttemptOutcome.ofResponse(response, 1, false))).isEmpty();
      assertThat(response.body().string()).isEqualTo("{\"type\": oops");
    }
  }

  private Response call() throws IOException {
    return okHttp.newCall(new Request.Builder().url(server.url("/")).build()).execute();
  }
}
