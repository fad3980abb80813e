package io.github.resilienthttp.callbacks;

import java.time.Duration;
import java.util.Objects;

/** A record's identity, validated the same way by every store (the JDBC columns are 200 long). */
record RecordKey(String scope, String eventId) {
  static final int MAX_LENGTH = 200;

  RecordKey {
    check("scope", scope);
    check("eventId", eventId);
  }

  static void checkLease(Duration lease) {
    Objects.requireNonNull(lease, "lease");
    if (lease.isNegative() || lease.isZero()) {
      throw new IllegalArgumentException("lease: " + lease + " is not positive");
    }
  }

  private static void check(String field, String value) {
    Objects.requireNonNull(value, field);
    if (value.isEmpty() || value.length() > MAX_LENGTH) {
      throw new IllegalArgumentException(
          field + ": length " + value.length() + " is outside 1.." + MAX_LENGTH);
    }
  }
}
