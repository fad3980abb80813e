package io.github.resilienthttp;

import io.github.resilienthttp.internal.async.StatusWords;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;
import okhttp3.Response;

/**
 * Finds the status resource of an accepted ({@code 202}) asynchronous operation in the submit's
 * response. Return {@code null} when this locator finds none, so that {@link #orElse(StatusLocator)}
 * asks the next one. Relative references resolve against the request's URL. Implementations must be
 * thread-safe and must not read or close the body (it is passed, already read and bounded).
 */
@FunctionalInterface
public interface StatusLocator {

  /**
   * The status resource's URL, or {@code null}.
   *
   * @param accepted the submit's response (its body already read: use {@code body})
   * @param body the body, decoded as UTF-8, at most {@link AsyncOperationPolicy#maxStatusBodyBytes()}
   * @return the URL, or {@code null}
   */
  HttpUrl locate(Response accepted, String body);

  /**
   * This locator, then {@code next}.
   *
   * @param next the locator to ask next
   * @return the composed locator
   */
  default StatusLocator orElse(StatusLocator next) {
    Objects.requireNonNull(next, "next");
    return (r, body) -> {
      HttpUrl url = locate(r, body);
      return url != null ? url : next.locate(r, body);
    };
  }

  /**
   * The first of these response headers that is present, in this order: {@code Azure-AsyncOperation},
   * {@code Operation-Location}, {@code Location} (Azure's long-running operation rules).
   *
   * @return the locator
   */
  static StatusLocator standardHeaders() {
    return headers(List.of("Azure-AsyncOperation", "Operation-Location", "Location"));
  }

  /**
   * The first of {@code names} that is present.
   *
   * @param names header names, in order of preference
   * @return the locator
   */
  static StatusLocator headers(List<String> names) {
    List<String> copy = List.copyOf(names);
    return (r, body) -> {
      for (String name : copy) {
        String value = r.header(name);
        if (value != null && !value.isBlank()) {
          return r.request().url().resolve(value.trim());
        }
      }
      return null;
    };
  }

  /**
   * A JSON string field of the body, such as {@code "statusUrl": "/jobs/7"}, read with a small bounded
   * pattern (no JSON library in the core; the first such field wins, whatever its nesting).
   *
   * @param field the field's name: 1 to 64 of {@code [A-Za-z0-9_.$-]}
   * @return the locator
   */
  static StatusLocator bodyField(String field) {
    Pattern pattern = StatusWords.fieldPattern(field);
    return (r, body) -> {
      String value = StatusWords.stringField(pattern, body);
      return value == null ? null : r.request().url().resolve(value);
    };
  }

  /**
   * The default {@link AsyncOperationPolicy#cancelLocator() cancel locator}: a {@code Link} header
   * with {@code rel="cancel"}, else a JSON string field {@code cancelUrl}, else {@code cancelLocation}.
   *
   * @return the locator
   */
  static StatusLocator standardCancelLinks() {
    return linkRel("cancel").orElse(bodyField("cancelUrl")).orElse(bodyField("cancelLocation"));
  }

  /**
   * The target of the first {@code Link} header entry (RFC 8288) whose {@code rel} lists {@code rel},
   * such as {@code Link: </jobs/7/cancel>; rel="cancel"}.
   *
   * @param rel the relation type: 1 to 64 of {@code [A-Za-z0-9._-]}, compared ignoring case
   * @return the locator
   */
  static StatusLocator linkRel(String rel) {
    Objects.requireNonNull(rel, "rel");
    if (!rel.matches("[A-Za-z0-9._-]{1,64}")) {
      throw new IllegalArgumentException("rel must be 1 to 64 of [A-Za-z0-9._-]");
    }
    Pattern entry = Pattern.compile("<([^<>]{1,2048})>([^<]{0,512})");
    Pattern relParam = Pattern.compile(
        "(?i);\\s*rel\\s*=\\s*(?:\"[^\"]*(?<![A-Za-z0-9._-])" + Pattern.quote(rel)
            + "(?![A-Za-z0-9._-])[^\"]*\"|" + Pattern.quote(rel) + "(?![A-Za-z0-9._-]))");
    return (r, body) -> {
      for (String value : r.headers("Link")) {
        java.util.regex.Matcher m = entry.matcher(value);
        while (m.find()) {
          if (relParam.matcher(m.group(2)).find()) {
            return r.request().url().resolve(m.group(1).trim());
          }
        }
      }
      return null;
    };
  }
}
