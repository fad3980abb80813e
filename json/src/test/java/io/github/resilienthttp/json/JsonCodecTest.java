package io.github.resilienthttp.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import java.io.IOException;
import java.util.List;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link JsonCodec#body} and {@link JsonCodec#read} against a real loopback server. */
class JsonCodecTest {
  record Payment(String id, long amount, String currency) {}

  /** A classic bean, to show that POJOs work as well as records. */
  static final class Item {
    private String sku;
    private int quantity;

    public String getSku() {
      return sku;
    }

    public void setSku(String sku) {
      this.sku = sku;
    }

    public int getQuantity() {
      return quantity;
    }

    public void setQuantity(int quantity) {
      this.quantity = quantity;
    }
  }

  static final class NoProperties {}

  private final MockWebServer server = new MockWebServer();
  private final OkHttpClient okHttp = new OkHttpClient();
  private final JsonCodec json = JsonCodec.create();

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
  void recordRoundTripsThroughBodyAndRead() throws Exception {
    String wire = "{\"id\":\"p-1\",\"amount\":1250,\"currency\":\"EUR\"}";
    server.enqueue(jsonResponse(200, wire));

    Request request = new Request.Builder().url(server.url("/payments"))
        .post(json.body(new Payment("p-1", 1250, "EUR"))).build();
    Payment read = json.read(okHttp.newCall(request).execute(), Payment.class);

    RecordedRequest seen = server.takeRequest();
    assertThat(seen.getBody().utf8()).isEqualTo(wire);
    assertThat(seen.getHeaders().get("Content-Type")).isEqualTo("application/json; charset=utf-8");
    assertThat(read).isEqualTo(new Payment("p-1", 1250, "EUR"));
  }

  @Test
  void bodyIsSerializedOnceAndCanBeWrittenAgainForARetry() throws Exception {
    RequestBody body = json.body(new Payment("p-2", 1, "USD"));

    Buffer first = new Buffer();
    body.writeTo(first);
    Buffer second = new Buffer();
    body.writeTo(second);

    assertThat(body.contentType()).isEqualTo(MediaType.get("application/json; charset=utf-8"));
    assertThat(body.isOneShot()).isFalse();
    assertThat(body.contentLength()).isEqualTo(40);
    assertThat(first.readUtf8()).isEqualTo("{\"id\":\"p-2\",\"amount\":1,\"currency\":\"USD\"}")
        .isEqualTo(second.readUtf8());
  }

  @Test
  void typeReferenceReadsAGenericListOfPojosAndUnknownFieldsAreIgnored() throws Exception {
    server.enqueue(jsonResponse(200,
        "[{\"sku\":\"A-1\",\"quantity\":2,\"addedLater\":true},{\"sku\":\"B-7\",\"quantity\":1}]"));

    List<Item> items = json.read(get("/items"), new TypeReference<List<Item>>() {});

    assertThat(items).extracting(Item::getSku, Item::getQuantity)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("A-1", 2),
            org.assertj.core.groups.Tuple.tuple("B-7", 1));
  }

  @Test
  void userSuppliedMapperIsUsedAsIs() throws Exception {
    ObjectMapper strict = new ObjectMapper()
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    server.enqueue(jsonResponse(200, "{\"id\":\"p-1\",\"amount\":5,\"currency\":\"EUR\",\"extra\":1}"));

    JsonBodyException e = catchThrowableOfType(JsonBodyException.class,
        () -> JsonCodec.create(strict).read(get("/p"), Payment.class));

    assertThat(e.getMessage()).startsWith("the HTTP 200 response body does not match the expected type"
        + " for io.github.resilienthttp.json.JsonCodecTest$Payment (UnrecognizedPropertyException");
  }

  @Test
  void malformedJsonIsAClearIOExceptionAndTheConnectionGoesBackToThePool() throws Exception {
    server.enqueue(jsonResponse(200, "{\"id\": sk_live_secret"));
    Response response = okHttp.newCall(new Request.Builder().url(server.url("/p")).build()).execute();

    JsonBodyException e = catchThrowableOfType(JsonBodyException.class,
        () -> json.read(response, Payment.class));

    assertThat(e).isInstanceOf(IOException.class);
    assertThat(e.getMessage()).isEqualTo("the HTTP 200 response body is not well-formed JSON for"
        + " io.github.resilienthttp.json.JsonCodecTest$Payment (JsonParseException at line 1,"
        + " column 8)");
    assertThat(e.getMessage()).doesNotContain("secret");
    assertThat(e.statusCode()).isEqualTo(200);
    assertThat(e.expectedType()).isEqualTo("io.github.resilienthttp.json.JsonCodecTest$Payment");
    assertThat(e.getCause()).isInstanceOf(JsonParseException.class);
    assertClosed(response);
    // The whole (small) body was read before parsing, so the connection is reusable, not leaked.
    assertThat(okHttp.connectionPool().connectionCount()).isEqualTo(1);
    assertThat(okHttp.connectionPool().idleConnectionCount()).isEqualTo(1);

    server.enqueue(jsonResponse(200, "{\"id\":\"p-3\",\"amount\":7,\"currency\":\"EUR\"}"));
    assertThat(json.read(get("/p"), Payment.class)).isEqualTo(new Payment("p-3", 7, "EUR"));
    server.takeRequest();
    assertThat(server.takeRequest().getExchangeIndex()).isEqualTo(1);
  }

  @Test
  void jsonOfTheWrongShapeNamesTheTypeAndPosition() throws Exception {
    server.enqueue(jsonResponse(200, "{\"id\":\"p-1\",\"amount\":\"lots\",\"currency\":\"EUR\"}"));

    JsonBodyException e = catchThrowableOfType(JsonBodyException.class,
        () -> json.read(get("/p"), Payment.class));

    assertThat(e.getMessage()).isEqualTo("the HTTP 200 response body does not match the expected type"
        + " for io.github.resilienthttp.json.JsonCodecTest$Payment (InvalidFormatException at line 1,"
        + " column 22)");
  }

  @Test
  void trailingGarbageAfterTheJsonValueIsRejectedByTheDefaultMapper() throws Exception {
    server.enqueue(jsonResponse(200, "{\"id\":\"p-1\",\"amount\":1,\"currency\":\"EUR\"} {}"));

    JsonBodyException e = catchThrowableOfType(JsonBodyException.class,
        () -> json.read(get("/p"), Payment.class));

    assertThat(e.getCause()).isInstanceOf(MismatchedInputException.class);
    assertThat(e.getMessage()).startsWith("the HTTP 200 response body does not match the expected"
        + " type for io.github.resilienthttp.json.JsonCodecTest$Payment (MismatchedInputException");
  }

  @Test
  void emptyBodyIsAClearError() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).body("").build());

    assertThatThrownBy(() -> json.read(get("/p"), Payment.class))
        .isExactlyInstanceOf(JsonBodyException.class)
        .hasMessage("the HTTP 200 response body is empty; expected JSON for"
            + " io.github.resilienthttp.json.JsonCodecTest$Payment");
  }

  @Test
  void jsonNullAndVoidReadAsNull() throws Exception {
    server.enqueue(jsonResponse(200, "null"));
    server.enqueue(jsonResponse(200, "{\"ignored\":true}"));

    assertThat(json.read(get("/a"), Payment.class)).isNull();
    assertThat(json.read(get("/b"), Void.class)).isNull();
  }

  @Test
  void declaredBodyOverTheLimitFailsBeforeReadingAndClosesTheResponse() throws Exception {
    server.enqueue(jsonResponse(200, "[" + "0,".repeat(1024 * 1024) + "0]"));
    Response response = get("/big");

    JsonBodyTooLargeException e = catchThrowableOfType(JsonBodyTooLargeException.class,
        () -> json.read(response, new TypeReference<List<Integer>>() {}));

    assertThat(e.getMessage()).isEqualTo("the HTTP 200 response body for"
        + " java.util.List<java.lang.Integer> is larger than the limit of 1048576 bytes"
        + " (maxBodyBytes); Content-Length: 2097155");
    assertThat(e.limitBytes()).isEqualTo(1_048_576);
    assertThat(e.contentLength()).isEqualTo(2_097_155);
    assertClosed(response);
  }

  @Test
  void chunkedBodyOverTheLimitStopsReadingAtTheLimit() throws Exception {
    JsonCodec small = JsonCodec.builder().maxBodyBytes(1000).build();
    server.enqueue(new MockResponse.Builder().code(200)
        .chunkedBody("[" + "0,".repeat(1024 * 1024) + "0]", 4096).build());
    Response response = get("/big");

    JsonBodyTooLargeException e = catchThrowableOfType(JsonBodyTooLargeException.class,
        () -> small.read(response, Object.class));

    assertThat(e.getMessage()).isEqualTo("the HTTP 200 response body for java.lang.Object is larger"
        + " than the limit of 1000 bytes (maxBodyBytes)");
    assertThat(e.contentLength()).isEqualTo(-1);
    assertClosed(response);
  }

  @Test
  void bodyExactlyAtTheLimitIsRead() throws Exception {
    JsonCodec small = JsonCodec.builder().maxBodyBytes(7).build();
    server.enqueue(new MockResponse.Builder().code(200).chunkedBody("[1,2,3]", 2).build());

    assertThat(small.read(get("/p"), new TypeReference<List<Integer>>() {}))
        .containsExactly(1, 2, 3);
  }

  @Test
  void builderValidatesMaxBodyBytesAtBuild() {
    assertThatThrownBy(() -> JsonCodec.builder().maxBodyBytes(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxBodyBytes must be in 1..2147483647 but was 0");
    assertThatThrownBy(() -> JsonCodec.builder().maxBodyBytes(2_147_483_648L).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxBodyBytes must be in 1..2147483647 but was 2147483648");
    assertThat(JsonCodec.builder().maxBodyBytes(Integer.MAX_VALUE).build().maxBodyBytes())
        .isEqualTo(Integer.MAX_VALUE);
    assertThat(JsonCodec.create().maxBodyBytes()).isEqualTo(1_048_576);
  }

  @Test
  void unserializableValueIsAProgrammingError() {
    assertThatThrownBy(() -> json.body(new NoProperties()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cannot serialize a io.github.resilienthttp.json.JsonCodecTest$NoProperties to"
            + " JSON: No serializer found for class"
            + " io.github.resilienthttp.json.JsonCodecTest$NoProperties and no properties discovered"
            + " to create BeanSerializer (to avoid exception, disable"
            + " SerializationFeature.FAIL_ON_EMPTY_BEANS)");
  }

  private Response get(String path) throws IOException {
    return okHttp.newCall(new Request.Builder().url(server.url(path)).build()).execute();
  }

  static MockResponse jsonResponse(int code, String body) {
    return new MockResponse.Builder().code(code)
        .setHeader("Content-Type", "application/json").body(body).build();
  }

  static void assertClosed(Response response) {
    assertThatThrownBy(() -> response.body().source().readByte())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("closed");
  }
}
