package io.github.resilienthttp.callbacks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The headers of one delivery, looked up case-insensitively (RFC 9110 §5.1: field names are
 * case-insensitive), built from whatever map the web framework hands over.
 *
 * <p>Immutable and thread-safe. Null keys (some servlet containers and {@code HttpURLConnection} put the
 * status line under {@code null}) and null values are skipped.
 */
public final class CallbackHeaders {
  private static final CallbackHeaders EMPTY = new CallbackHeaders(new TreeMap<>());

  private final Map<String, List<String>> values;

  private CallbackHeaders(Map<String, List<String>> values) {
    this.values = values;
  }

  /**
   * Copies a multi-valued header map, as {@code com.sun.net.httpserver.Headers}, Servlet or Netty
   * adapters and OkHttp's {@code Headers.toMultimap()} give it.
   *
   * @param headers header names to their values, in any case
   * @return the headers
   */
  public static CallbackHeaders of(Map<String, ? extends List<String>> headers) {
    Objects.requireNonNull(headers, "headers");
    Map<String, List<String>> copy = new TreeMap<>();
    headers.forEach((name, list) -> {
      if (name == null || list == null) return;
      List<String> target = copy.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>());
      for (String v : list) if (v != null) target.add(v);
    });
    copy.replaceAll((k, v) -> Collections.unmodifiableList(v));
    return new CallbackHeaders(copy);
  }

  /**
   * Single-valued headers, for tests and frameworks that give a flat map.
   *
   * @param headers header names to one value each
   * @return the headers
   */
  public static CallbackHeaders ofSingle(Map<String, String> headers) {
    Objects.requireNonNull(headers, "headers");
    Map<String, List<String>> multi = new TreeMap<>();
    headers.forEach((k, v) -> {
      if (k != null && v != null) multi.put(k, List.of(v));
    });
    return of(multi);
  }

  /** {@return no headers} */
  public static CallbackHeaders empty() {
    return EMPTY;
  }

  /**
   * Every value of a header, in arrival order.
   *
   * @param name the header name, any case
   * @return the values, empty when absent
   */
  public List<String> all(String name) {
    return values.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
  }

  /**
   * The first value of a header.
   *
   * @param name the header name, any case
   * @return the first value, or empty when absent
   */
  public Optional<String> first(String name) {
    List<String> all = all(name);
    return all.isEmpty() ? Optional.empty() : Optional.of(all.get(0));
  }

  /** {@return every header, names in lower case} */
  public Map<String, List<String>> asMap() {
    return Collections.unmodifiableMap(values);
  }

  /** Lists header names only: values may be signatures. */
  @Override
  public String toString() {
    return "CallbackHeaders" + values.keySet();
  }
}
