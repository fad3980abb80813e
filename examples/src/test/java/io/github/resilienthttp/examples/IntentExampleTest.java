package io.github.resilienthttp.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Runs the intent example in-process and checks what each scenario promised. */
class IntentExampleTest {

  @Test
  void everyScenarioEndsWithOneEffect() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    IntentExample.Result r = IntentExample.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertThat(r.jobResult()).contains("\"result\":\"done\"");
    assertThat(r.polls()).isEqualTo(3);
    assertThat(r.resumedResult()).contains("\"result\":\"done\"");
    assertThat(r.resumedSubmits()).isEqualTo(1);
    assertThat(r.foundByQuery()).isTrue();
    assertThat(r.charges()).isEqualTo(1);
    assertThat(r.drained().resumed()).isEqualTo(1);
    assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("charges of order-43: 1");
  }
}
