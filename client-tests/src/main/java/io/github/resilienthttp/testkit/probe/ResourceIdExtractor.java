package io.github.resilienthttp.testkit.probe;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the id of the resource a response names (the payment it created), which is how an {@link
 * IdempotencyProbe} tells an execution from a replay: two answers for one key with different ids
 * mean the server executed twice. When no id is found, the probe compares whole bodies instead.
 * Implementations must be stateless and thread-safe.
 */
@FunctionalInterface
public interface ResourceIdExtractor {

  /**
   * The resource id of a response.
   *
   * @param response a response the probe received
   * @return the id, or empty when the response names none
   */
  Optional<String> resourceId(ProbeExchange response);

  /**
   * The value of the first JSON member called {@code field} in the body, a string (unescaped only
   * for {@code \"} and {@code \\}) or a number: {@code {"id":"pay_1"}} gives {@code pay_1}. A
   * pattern, not a JSON parser (the testkit has no JSON library on its class path): it takes the
   * first member with that name at any depth, so name a field that occurs once.
   *
   * @param field the member name, e.g. {@code id}
   * @return the extractor
   */
  static ResourceIdExtractor jsonField(String field) {
    Objects.requireNonNull(field, "field");
    if (field.isEmpty()) {
      throw new IllegalArgumentException("field must not be empty");
    }
    String string = "\"((?:[^\"\\\\]|\\\\.)*)\"";
    String number = "(-?[0-9][0-9.eE+-]*)";
    Pattern member = Pattern.compile(
        "\"" + Pattern.quote(field) + "\"\\s*:\\s*(?:" + string + "|" + number + ")");
    return response -> {
      Matcher m = member.matcher(response.body());
      if (!m.find()) {
        return Optional.empty();
      }
      String value = m.group(1) != null ? m.group(1) : m.group(2);
      return Optional.of(value.replace("\\\"", "\"").replace("\\\\", "\\"));
    };
  }

  /**
   * The value of a response header, e.g. {@code Location} for servers that answer {@code 201
   * Created} with the new resource's URL.
   *
   * @param name the header name
   * @return the extractor
   */
  static ResourceIdExtractor header(String name) {
    Objects.requireNonNull(name, "name");
    return response -> Optional.ofNullable(response.header(name));
  }
}
