package io.github.resilienthttp.server;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A clock the test moves by hand. */
final class MutableClock implements InstantSource {
  private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T00:00:00Z"));

  @Override
  public Instant instant() {
    return now.get();
  }

  void advance(Duration d) {
    now.updateAndGet(t -> t.plus(d));
  }
}
