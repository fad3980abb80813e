package io.github.resilienthttp.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class KeyGeneratorTest {

  @Test
  void keysAreCanonicalRandomUuidVersion4AcrossManyDraws() {
    KeyGenerator keys = new KeyGenerator();
    Set<String> seen = new HashSet<>();
    int n = KeyGenerator.KEYS_PER_DRAW * 200 + 3; // many refills, and a partial last draw
    for (int i = 0; i < n; i++) {
      String key = keys.next();
      UUID uuid = UUID.fromString(key);
      assertThat(uuid.version()).isEqualTo(4);
      assertThat(uuid.variant()).isEqualTo(2);
      assertThat(key).hasSize(36).isEqualTo(uuid.toString());
      seen.add(key);
    }
    assertThat(seen).hasSize(n);
  }

  @Test
  void everyRandomBitVaries() {
    // 122 of the 128 bits are random: over 2,000 keys each one must take both values.
    KeyGenerator keys = new KeyGenerator();
    long msbOr = 0;
    long msbAnd = -1;
    long lsbOr = 0;
    long lsbAnd = -1;
    for (int i = 0; i < 2_000; i++) {
      UUID u = UUID.fromString(keys.next());
      msbOr |= u.getMostSignificantBits();
      msbAnd &= u.getMostSignificantBits();
      lsbOr |= u.getLeastSignificantBits();
      lsbAnd &= u.getLeastSignificantBits();
    }
    assertThat(msbOr).isEqualTo(-1L ^ 0xB000L); // version 0100: bits 15, 13 and 12 always 0
    assertThat(msbAnd).isEqualTo(0x4000L); // and bit 14 always 1
    assertThat(lsbOr).isEqualTo(-1L ^ 0x4000_0000_0000_0000L); // variant 10: bit 62 always 0
    assertThat(lsbAnd).isEqualTo(0x8000_0000_0000_0000L); // and bit 63 always 1
  }

  @Test
  void concurrentCallersNeverGetTheSameKey() throws Exception {
    KeyGenerator keys = new KeyGenerator();
    Set<String> seen = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      Future<?>[] done = new Future<?>[8];
      for (int t = 0; t < done.length; t++) {
        done[t] = pool.submit(() -> {
          for (int i = 0; i < 5_000; i++) {
            seen.add(keys.next());
          }
        });
      }
      for (Future<?> f : done) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(seen).hasSize(40_000);
  }
}
