package io.github.resilienthttp.server;

class InMemoryGuardTest extends GuardContractTest {
  @Override
  IdempotencyStore newStore(MutableClock clock) {
    return new InMemoryIdempotencyStore(clock);
  }
}
