package io.github.resilienthttp.json;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationInterruptedException;
import io.github.resilienthttp.ResilientHttpException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.util.Objects;
import okhttp3.MediaType;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;

/**
 * Typed JSON for operations, with Jackson: turns values into request bodies and successful responses
 * into values, reading every body with a size limit.
 *
 * <pre>{@code
 * JsonCodec json = JsonCodec.create();
 * Request request = new Request.Builder().url(url)
 *     .post(json.body(new CreatePayment(100, "EUR")))
 *     .build();
 * Payment payment = json.execute(client.operation(request), Payment.class);
 * }</pre>
 *
 * <h2>Reading</h2>
 * A body is read through Okio into memory, at most {@link #maxBodyBytes()} bytes (default
 * {@value #DEFAULT_MAX_BODY_BYTES}, 1 MiB), then parsed; {@link okhttp3.ResponseBody#bytes()} is
 * never called. Reading waits for the network, bounded by the call's timeout: for an
 * {@link Operation}, its deadline. The limit applies to the decoded body, after OkHttp's
 * transparent gzip. JSON's encoding is detected from its first bytes (RFC 8259 §8.1); the
 * {@code charset} parameter and the {@code Content-Type} itself are not checked. A body of
 * {@code null} is read as {@code null}; when the type is {@code Void}, the body is not read and
 * {@code null} is returned.
 *
 * <h2>Failures</h2>
 * <table>
 * <caption>What is thrown when</caption>
 * <tr><th>situation</th><th>{@link #read(Response, Class) read}</th>
 *     <th>{@link #execute(Operation, Class) execute}: {@link ResilientHttpException} with
 *     reason</th></tr>
 * <tr><td>final status not 2xx</td><td>(not checked)</td>
 *     <td>{@link HttpStatusException}, reason {@code status-NNN}</td></tr>
 * <tr><td>body over {@link #maxBodyBytes()}</td><td>{@link JsonBodyTooLargeException}</td>
 *     <td>{@code body-too-large}, cause {@link JsonBodyTooLargeException}</td></tr>
 * <tr><td>body empty, not JSON, or not matching the type</td><td>{@link JsonBodyException}</td>
 *     <td>{@code json-unreadable}, cause {@link JsonBodyException}</td></tr>
 * <tr><td>deadline passed while reading</td><td>OkHttp's {@link InterruptedIOException}</td>
 *     <td>{@link DeadlineExceededException}, reason {@code deadline}</td></tr>
 * <tr><td>thread interrupted while reading</td><td>{@link InterruptedIOException}</td>
 *     <td>{@link OperationInterruptedException}</td></tr>
 * <tr><td>other I/O failure while reading</td><td>that {@link IOException}</td>
 *     <td>{@code body-read-failed}, cause that exception</td></tr>
 * </table>
 * Whatever happens, the response is closed before the method returns or throws. None of these
 * messages contains the body.
 *
 * <p>The default {@link ObjectMapper} is a plain one (no modules; records work, {@code java.time}
 * types need a user-supplied mapper with {@code jackson-datatype-jsr310}) with
 * {@link DeserializationFeature#FAIL_ON_UNKNOWN_PROPERTIES} disabled, so that a server may add
 * fields, and {@link DeserializationFeature#FAIL_ON_TRAILING_TOKENS} enabled, so that a body with
 * garbage after its JSON value is rejected.
 *
 * <p>Immutable and thread-safe: share one instance. A user-supplied mapper is used as is, not copied;
 * do not reconfigure it afterwards (Jackson's own rule for sharing a mapper between threads).
 *
 * <p>Requires {@code com.fasterxml.jackson.core:jackson-databind} on the classpath (an optional
 * dependency of this SDK).
 */
public final class JsonCodec {

  /** The default {@link #maxBodyBytes()}: 1 MiB. */
  public static final long DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

  /** The media type of this codec's request bodies: {@code application/json; charset=utf-8}. */
  public static final MediaType JSON = MediaType.get("application/json; charset=utf-8");

  /** Never handed out, so nobody can reconfigure it under the other users. */
  static final ObjectMapper DEFAULT_MAPPER = new ObjectMapper()
      .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private static final JsonCodec DEFAULT = builder().build();

  /** Bytes asked of the source per read, so the buffer never passes the limit by more than this. */
  private static final long READ_CHUNK = 8192;

  private final ObjectMapper mapper;
  private final long maxBodyBytes;

  private JsonCodec(Builder b) {
    this.mapper = b.mapper;
    this.maxBodyBytes = b.maxBodyBytes;
  }

  /**
   * A codec with the default mapper (see the class comment) and a 1 MiB body limit.
   *
   * @return the codec
   */
  public static JsonCodec create() {
    return DEFAULT;
  }

  /**
   * A codec with {@code mapper}, used as is, and a 1 MiB body limit.
   *
   * @param mapper the mapper for both directions
   * @return the codec
   */
  public static JsonCodec create(ObjectMapper mapper) {
    return builder().objectMapper(mapper).build();
  }

  /**
   * A builder starting from the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The most bytes of a response body this codec reads.
   *
   * @return the body limit in bytes
   */
  public long maxBodyBytes() {
    return maxBodyBytes;
  }

  /**
   * {@code value} as a JSON request body of type {@link #JSON}. The value is serialized now, once,
   * into bytes: the body can be written any number of times, so an operation can resend it on a retry
   * and every attempt sends exactly the same bytes.
   *
   * @param value not {@code null}
   * @return the request body
   * @throws IllegalArgumentException when Jackson cannot serialize the value (a programming error,
   *     such as a class without properties); the cause is Jackson's exception
   */
  public RequestBody body(Object value) {
    Objects.requireNonNull(value, "value");
    byte[] bytes;
    try {
      bytes = mapper.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("cannot serialize a " + value.getClass().getName()
          + " to JSON: " + e.getOriginalMessage(), e);
    }
    return RequestBody.create(bytes, JSON);
  }

  /**
   * Reads {@code response}'s body as a {@code type}, then closes the response (always, also when
   * this throws). Does not look at the status code: call it for a response you have checked, or use
   * {@link #execute(Operation, Class)}.
   *
   * @param <T> the result type
   * @param response the response; closed by this method
   * @param type the type to read the body as
   * @return the value; {@code null} for a JSON {@code null} or when {@code type} is {@code Void}
   * @throws JsonBodyTooLargeException when the body is longer than {@link #maxBodyBytes()}
   * @throws JsonBodyException when the body is empty, not JSON, or does not match {@code type}
   * @throws IOException when reading fails (e.g. the call timed out)
   */
  public <T> T read(Response response, Class<T> type) throws IOException {
    Objects.requireNonNull(type, "type");
    return read(response, mapper.getTypeFactory().constructType(type));
  }

  /**
   * As {@link #read(Response, Class)}, for a generic type such as
   * {@code new TypeReference<List<Item>>() {}}.
   *
   * @param <T> the result type
   * @param response the response; closed by this method
   * @param type the type to read the body as
   * @return the value; {@code null} for a JSON {@code null}
   * @throws IOException as {@link #read(Response, Class)}
   */
  public <T> T read(Response response, TypeReference<T> type) throws IOException {
    Objects.requireNonNull(type, "type");
    return read(response, mapper.getTypeFactory().constructType(type));
  }

  /**
   * Executes {@code operation} and reads its final response: for a 2xx status, its body as a
   * {@code type}; for any other final status, throws {@link HttpStatusException} with the status,
   * the headers and, for an {@code application/problem+json} body, the {@link ProblemDetails}. The
   * response is closed before this returns or throws. See the class comment for every failure; each
   * one carries the operation's idempotency key ({@link OperationFailure}).
   *
   * @param <T> the result type
   * @param operation the operation to execute; not yet executed
   * @param type the type to read a 2xx body as
   * @return the value; {@code null} for a JSON {@code null} or when {@code type} is {@code Void}
   * @throws HttpStatusException when the final status is not 2xx
   * @throws IOException everything {@link Operation#execute()} throws, and the failures to read the
   *     body listed in the class comment
   */
  public <T> T execute(Operation operation, Class<T> type) throws IOException {
    Objects.requireNonNull(type, "type");
    return execute(operation, mapper.getTypeFactory().constructType(type));
  }

  /**
   * As {@link #execute(Operation, Class)}, for a generic type.
   *
   * @param <T> the result type
   * @param operation the operation to execute; not yet executed
   * @param type the type to read a 2xx body as
   * @return the value; {@code null} for a JSON {@code null}
   * @throws IOException as {@link #execute(Operation, Class)}
   */
  public <T> T execute(Operation operation, TypeReference<T> type) throws IOException {
    Objects.requireNonNull(type, "type");
    return execute(operation, mapper.getTypeFactory().constructType(type));
  }

  private <T> T execute(Operation operation, JavaType type) throws IOException {
    Objects.requireNonNull(operation, "operation");
    Response response = operation.execute();
    try (response) {
      if (!response.isSuccessful()) {
        throw new HttpStatusException(operation.idempotencyKey(), operation.idempotencyKeySent(),
            operation.attempts(), response.code(), response.headers(),
            ProblemDetails.peek(response, mapper).orElse(null));
      }
      try {
        return decode(response, type);
      } catch (IOException e) {
        throw asOperationFailure(operation, e);
      }
    }
  }

  private <T> T read(Response response, JavaType type) throws IOException {
    Objects.requireNonNull(response, "response");
    try (response) {
      return decode(response, type);
    }
  }

  private <T> T decode(Response response, JavaType type) throws IOException {
    if (type.hasRawClass(Void.class)) {
      return null;
    }
    int status = response.code();
    String typeName = type.toCanonical();
    Buffer buffer = readAtMost(response.body(), status, typeName);
    if (buffer.size() == 0) {
      throw new JsonBodyException("the HTTP " + status + " response body is empty; expected JSON for "
          + typeName, status, typeName, null);
    }
    try (InputStream in = buffer.inputStream()) {
      return mapper.readValue(in, type);
    } catch (JsonProcessingException e) {
      String what = e instanceof StreamReadException
          ? "is not well-formed JSON" : "does not match the expected type";
      throw new JsonBodyException("the HTTP " + status + " response body " + what + " for "
          + typeName + " (" + e.getClass().getSimpleName() + position(e) + ")",
          status, typeName, e);
    }
  }

  private Buffer readAtMost(ResponseBody body, int status, String typeName) throws IOException {
    long declared = body.contentLength();
    if (declared > maxBodyBytes) {
      throw new JsonBodyTooLargeException(status, typeName, maxBodyBytes, declared);
    }
    BufferedSource source = body.source();
    Buffer buffer = new Buffer();
    while (source.read(buffer, READ_CHUNK) != -1) {
      if (buffer.size() > maxBodyBytes) {
        throw new JsonBodyTooLargeException(status, typeName, maxBodyBytes, declared);
      }
    }
    return buffer;
  }

  private static String position(JsonProcessingException e) {
    JsonLocation at = e.getLocation();
    return at == null || at.getLineNr() < 0
        ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
  }

  private static IOException asOperationFailure(Operation op, IOException e) {
    if (e instanceof OperationFailure) {
      return e;
    }
    String key = op.idempotencyKey();
    boolean sent = op.idempotencyKeySent();
    int attempts = op.attempts();
    if (e instanceof JsonBodyTooLargeException) {
      return new ResilientHttpException(e.getMessage(), key, sent, attempts, "body-too-large", e);
    }
    if (e instanceof JsonBodyException) {
      return new ResilientHttpException(e.getMessage(), key, sent, attempts, "json-unreadable", e);
    }
    // The operation's deadline is the call's timeout, which OkHttp reports as InterruptedIOException;
    // a read timeout is its subclass SocketTimeoutException.
    if (e instanceof InterruptedIOException && !(e instanceof SocketTimeoutException)) {
      if (Thread.currentThread().isInterrupted()) {
        return new OperationInterruptedException(key, sent, attempts, e);
      }
      return new DeadlineExceededException("deadline passed while reading the response body", key,
          sent, attempts, "deadline", e);
    }
    return new ResilientHttpException("could not read the response body: " + e, key, sent, attempts,
        "body-read-failed", e);
  }

  @Override
  public String toString() {
    return "JsonCodec{maxBodyBytes=" + maxBodyBytes
        + (mapper == DEFAULT_MAPPER ? ", default mapper}" : ", custom mapper}");
  }

  /** Builds a {@link JsonCodec}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private ObjectMapper mapper = DEFAULT_MAPPER;
    private long maxBodyBytes = DEFAULT_MAX_BODY_BYTES;

    private Builder() {}

    /**
     * The mapper for both directions, used as is. Default: see {@link JsonCodec}.
     *
     * @param mapper the mapper
     * @return this builder
     */
    public Builder objectMapper(ObjectMapper mapper) {
      this.mapper = Objects.requireNonNull(mapper, "mapper");
      return this;
    }

    /**
     * The most bytes of a response body to read: 1 to {@link Integer#MAX_VALUE}. Default
     * {@value JsonCodec#DEFAULT_MAX_BODY_BYTES} (1 MiB).
     *
     * @param maxBodyBytes the limit in bytes
     * @return this builder
     */
    public Builder maxBodyBytes(long maxBodyBytes) {
      this.maxBodyBytes = maxBodyBytes;
      return this;
    }

    /**
     * Builds the codec.
     *
     * @return the codec
     * @throws IllegalArgumentException when {@code maxBodyBytes} is out of range
     */
    public JsonCodec build() {
      if (maxBodyBytes < 1 || maxBodyBytes > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(
            "maxBodyBytes must be in 1.." + Integer.MAX_VALUE + " but was " + maxBodyBytes);
      }
      return new JsonCodec(this);
    }
  }
}
