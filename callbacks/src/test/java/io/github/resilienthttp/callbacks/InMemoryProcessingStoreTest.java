package io.github.resilienthttp.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class InMemoryProcessingStoreTest extends ProcessingStoreContract {
  @Override
  ProcessingStore store() {
    return InMemoryProcessingStore.builder().clock(clock).retention(RETENTION).build();
  }

  @Test
  void boundedWhenFull_dropsOnlyRecordsPastRetention_elseRefusesRatherThanForget() {
    InMemoryProcessingStore store = InMemoryProcessingStore.builder().clock(clock).maxRecords(2)
        .retention(Duration.ofHours(1)).build();
    store.complete((Claim.Acquired) store.claim("s", "a", LEASE), null);
    store.claim("s", "b", LEASE);
    assertThatThrownBy(() -> store.claim("s", "c", LEASE)).isInstanceOf(ProcessingStoreException.class)
        .hasMessageStartingWith("in-memory store full: 2 records, none past retention PT1H");
    assertThat(store.claim("s", "a", LEASE)).isInstanceOf(Claim.Done.class); // existing IDs still answer
    clock.advance(Duration.ofHours(1));
    assertThat(store.claim("s", "c", LEASE)).isInstanceOf(Claim.Acquired.class); // "a" dropped
    assertThat(store.size()).isEqualTo(2);
  }

  @Test
  void builderValidates() {
    assertThatThrownBy(() -> InMemoryProcessingStore.builder().maxRecords(0).build())
        .hasMessage("maxRecords: 0 is outside 1..10000000");
    assertThatThrownBy(() -> InMemoryProcessingStore.builder().retention(Duration.ZERO).build())
        .hasMessage("retention: PT0S is outside 1 s..3650 days");
  }
}
