package io.github.resilienthttp.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecoveryTimeTest {
  record Op(long endNanos, boolean success) {}

  private static final long MS = 1_000_000L;

  private static List<Op> opsEveryMs(long fromMs, long toMs, long firstSuccessMs) {
    List<Op> ops = new ArrayList<>();
    for (long t = fromMs; t < toMs; t++) {
      ops.add(new Op(t * MS, t >= firstSuccessMs));
    }
    return ops;
  }

  @Test
  void theFirstWindowFromWhichEveryWindowIsGood() {
    // Recovery at 1,000 ms; operations fail until 1,300 ms, then all succeed.
    List<Op> ops = opsEveryMs(0, 3_000, 1_300);
    assertThat(RecoveryTime.of(ops, Op::endNanos, Op::success, 1_000 * MS, 3_000 * MS,
        Duration.ofMillis(100), Duration.ofMillis(10), 99)).contains(Duration.ofMillis(300));
  }

  @Test
  void immediateRecoveryIsZeroAndAFailingTailIsEmpty() {
    assertThat(RecoveryTime.of(opsEveryMs(0, 2_000, 0), Op::endNanos, Op::success, 1_000 * MS,
        2_000 * MS, Duration.ofMillis(100), Duration.ofMillis(10), 99)).contains(Duration.ZERO);
    List<Op> failingAtTheEnd = opsEveryMs(0, 2_000, 1_100);
    failingAtTheEnd.add(new Op(1_990 * MS, false));
    failingAtTheEnd.add(new Op(1_991 * MS, false));
    assertThat(RecoveryTime.of(failingAtTheEnd, Op::endNanos, Op::success, 1_000 * MS, 2_000 * MS,
        Duration.ofMillis(100), Duration.ofMillis(10), 99)).isEmpty();
  }
}
