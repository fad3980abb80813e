package io.github.resilienthttp.examples;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class HedgingExampleTest {
  @Test
  @Timeout(60)
  void hedgingCutsTheTailForAFewExtraRequests() throws Exception {
    assertThat(HedgingExample.run()).isTrue();
  }
}
