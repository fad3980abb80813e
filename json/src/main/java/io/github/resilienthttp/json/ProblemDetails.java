package io.github.resilienthttp.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.ResponseClassifier;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import okhttp3.MediaType;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * An RFC 9457 "Problem Details for HTTP APIs" object, as sent in an
 * {@code application/problem+json} response body.
 *
 * <p>Parsing is lenient, as RFC 9457 §3.1 requires: a standard member whose value has the wrong JSON
 * type is ignored (processing continues as if it were absent), and unknown members are kept as
 * extension members (§3.2). A body that is not a JSON object yields no problem at all.
 *
 * <p>Two ways in:
 * <ul>
 *   <li>{@link #parse(byte[], ObjectMapper)} / {@link #parse(String, ObjectMapper)} for a body you
 *       already hold;
 *   <li>{@link #from(AttemptOutcome)} inside a {@link ResponseClassifier}, which peeks at the
 *       attempt's response without consuming or closing it.
 * </ul>
 * {@link JsonCodec#execute} also attaches the problem to the {@code HttpStatusException} it throws.
 *
 * <p>Requires {@code com.fasterxml.jackson.core:jackson-databind} on the classpath (an optional
 * dependency of this SDK). Immutable and thread-safe; serializable when its extension values are
 * (they always are when parsed).
 */
public final class ProblemDetails implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The media type of a problem details JSON document (RFC 9457 §6.1). */
  public static final String MEDIA_TYPE = "application/problem+json";

  /** The {@link #type()} when the document has none (RFC 9457 §3.1.1). */
  public static final String ABOUT_BLANK = "about:blank";

  /**
   * The most bytes {@link #from(AttemptOutcome)} peeks at, and {@link JsonCodec#execute} reads, of a
   * problem body: 64 KiB. A longer body yields no problem rather than a failure.
   */
  public static final int MAX_PROBLEM_BYTES = 64 * 1024;

  /** The problem type URI reference. */
  private final String type;
  /** The title, or {@code null}. */
  private final String title;
  /** The status member, or {@code null}. */
  private final Integer status;
  /** The detail, or {@code null}. */
  private final String detail;
  /** The instance, or {@code null}. */
  private final String instance;
  /** The extension members, unmodifiable. */
  private final Map<String, Object> extensions;

  private ProblemDetails(
      String type, String title, Integer status, String detail, String instance,
      Map<String, Object> extensions) {
    this.type = type;
    this.title = title;
    this.status = status;
    this.detail = detail;
    this.instance = instance;
    this.extensions = extensions;
  }

  /**
   * Parses a problem details document.
   *
   * @param json the body, UTF-8 (or UTF-16/32, detected as RFC 8259 §8.1 allows)
   * @param mapper used only to build a tree ({@link ObjectMapper#readTree(byte[])}); its data-binding
   *     settings do not matter
   * @return empty when the body is not a well-formed JSON object; never throws for bad input
   */
  public static Optional<ProblemDetails> parse(byte[] json, ObjectMapper mapper) {
    Objects.requireNonNull(json, "json");
    Objects.requireNonNull(mapper, "mapper");
    JsonNode root;
    try {
      root = mapper.readTree(json);
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
    return fromTree(root);
  }

  /**
   * As {@link #parse(byte[], ObjectMapper)}, for a body held as a string.
   *
   * @param json the body
   * @param mapper the mapper to parse with
   * @return the problem, or empty when the body is not a JSON object
   */
  public static Optional<ProblemDetails> parse(String json, ObjectMapper mapper) {
    Objects.requireNonNull(json, "json");
    return parse(json.getBytes(StandardCharsets.UTF_8), mapper);
  }

  /**
   * The problem in an attempt's response, for use inside a {@link ResponseClassifier}.
   *
   * <p>Looks only at responses whose {@code Content-Type} is {@code application/problem+json}
   * (parameters such as {@code charset} are allowed). Peeks at up to {@link #MAX_PROBLEM_BYTES} of the
   * body with {@link Response#peekBody(long)}: the body is neither consumed nor closed, so the
   * caller (or the SDK) can still read it. Peeking reads from the network, so it can wait for the
   * server; that wait is bounded by the operation's deadline.
   *
   * <p>Never throws: an exception outcome, another content type, a body over the cap, a read failure
   * or a body that is not a JSON object all yield empty. Parses with a plain {@link ObjectMapper}.
   *
   * @param outcome the attempt's outcome
   * @return the problem, or empty
   */
  public static Optional<ProblemDetails> from(AttemptOutcome outcome) {
    Objects.requireNonNull(outcome, "outcome");
    Optional<Response> response = outcome.response();
    if (response.isEmpty()) {
      return Optional.empty();
    }
    return peek(response.get(), JsonCodec.DEFAULT_MAPPER);
  }

  static Optional<ProblemDetails> peek(Response response, ObjectMapper mapper) {
    ResponseBody body = response.body();
    if (!isProblemJson(body.contentType()) || body.contentLength() > MAX_PROBLEM_BYTES) {
      return Optional.empty();
    }
    byte[] bytes;
    try {
      // One byte over the cap tells "exactly at the cap" from "truncated by peekBody".
      bytes = response.peekBody(MAX_PROBLEM_BYTES + 1L).bytes();
    } catch (IOException e) {
      return Optional.empty();
    }
    return bytes.length > MAX_PROBLEM_BYTES ? Optional.empty() : parse(bytes, mapper);
  }

  /**
   * Whether {@code contentType} is {@code application/problem+json}, ignoring case and parameters.
   *
   * @param contentType a content type, may be {@code null}
   * @return whether it is {@code application/problem+json}
   */
  public static boolean isProblemJson(MediaType contentType) {
    return contentType != null
        && contentType.type().equalsIgnoreCase("application")
        && contentType.subtype().equalsIgnoreCase("problem+json");
  }

  private static Optional<ProblemDetails> fromTree(JsonNode root) {
    if (root == null || !root.isObject()) {
      return Optional.empty();
    }
    String type = ABOUT_BLANK;
    String title = null;
    Integer status = null;
    String detail = null;
    String instance = null;
    Map<String, Object> extensions = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> member : root.properties()) {
      JsonNode value = member.getValue();
      // RFC 9457 §3.1: a standard member of the wrong type is ignored, as if absent.
      switch (member.getKey()) {
        case "type":
          if (value.isTextual()) {
            type = value.textValue();
          }
          break;
        case "title":
          title = value.isTextual() ? value.textValue() : null;
          break;
        case "status":
          status = value.isIntegralNumber() && value.canConvertToInt() ? value.intValue() : null;
          break;
        case "detail":
          detail = value.isTextual() ? value.textValue() : null;
          break;
        case "instance":
          instance = value.isTextual() ? value.textValue() : null;
          break;
        default:
          extensions.put(member.getKey(), toJava(value));
      }
    }
    return Optional.of(new ProblemDetails(
        type, title, status, detail, instance, Collections.unmodifiableMap(extensions)));
  }

  /** JSON tree to plain, unmodifiable Java values; see {@link #extensions()}. */
  private static Object toJava(JsonNode node) {
    if (node.isObject()) {
      Map<String, Object> map = new LinkedHashMap<>();
      for (Map.Entry<String, JsonNode> e : node.properties()) {
        map.put(e.getKey(), toJava(e.getValue()));
      }
      return Collections.unmodifiableMap(map);
    }
    if (node.isArray()) {
      List<Object> list = new ArrayList<>(node.size());
      for (JsonNode element : node) {
        list.add(toJava(element));
      }
      return Collections.unmodifiableList(list);
    }
    if (node.isTextual()) {
      return node.textValue();
    }
    if (node.isNumber()) {
      return node.numberValue();
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    if (node.isNull() || node.isMissingNode()) {
      return null;
    }
    return node.asText();
  }

  /**
   * The problem type (RFC 9457 §3.1.1): a URI reference, as sent (relative references are not
   * resolved). {@value #ABOUT_BLANK} when the member is absent or not a string. The primary
   * identifier of the problem: classify on this, not on the title.
   *
   * @return the problem type
   */
  public String type() {
    return type;
  }

  /**
   * A short human-readable summary of the problem type (§3.1.3), if present and a string.
   *
   * @return the title, or empty
   */
  public Optional<String> title() {
    return Optional.ofNullable(title);
  }

  /**
   * The HTTP status code the server generated for this occurrence (§3.1.2), if present and an
   * integer; advisory only (it may differ from the response's actual status).
   *
   * @return the status member, or empty
   */
  public Optional<Integer> status() {
    return Optional.ofNullable(status);
  }

  /**
   * A human-readable explanation of this occurrence (§3.1.4), if present and a string.
   *
   * @return the detail, or empty
   */
  public Optional<String> detail() {
    return Optional.ofNullable(detail);
  }

  /**
   * A URI reference identifying this occurrence (§3.1.5), if present and a string.
   *
   * @return the instance, or empty
   */
  public Optional<String> instance() {
    return Optional.ofNullable(instance);
  }

  /**
   * The extension members (§3.2): every member other than the five standard ones, in document order.
   * Unmodifiable. Values are plain Java objects, never Jackson types: JSON objects become
   * unmodifiable {@code Map<String, Object>}, arrays unmodifiable {@code List<Object>}, strings
   * {@code String}, {@code true}/{@code false} {@code Boolean}, numbers the {@code Number} Jackson
   * chose ({@code Integer}, {@code Long} or {@code BigInteger} for integers; {@code Double}, or
   * {@code BigDecimal} when the mapper uses big decimals, otherwise), and {@code null} a
   * {@code null} value (so use {@link Map#containsKey} to test for presence).
   *
   * @return the extension members
   */
  public Map<String, Object> extensions() {
    return extensions;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ProblemDetails p
        && p.type.equals(type)
        && Objects.equals(p.title, title)
        && Objects.equals(p.status, status)
        && Objects.equals(p.detail, detail)
        && Objects.equals(p.instance, instance)
        && p.extensions.equals(extensions);
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, title, status, detail, instance, extensions);
  }

  /** Type, title, status and the extension members' names; never {@code detail} or values. */
  @Override
  public String toString() {
    return "ProblemDetails{type=" + type + ", title=" + title + ", status=" + status
        + ", extensions=" + extensions.keySet() + "}";
  }
}
