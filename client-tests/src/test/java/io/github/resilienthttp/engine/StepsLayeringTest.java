package io.github.resilienthttp.engine;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.internal.engine.Steps;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The 202 wait and the outcome query are step machines written once (issue 21), pinned on the
 * client jar's classes: they never run, sleep or schedule by themselves (only the run's two drivers
 * do), so neither has a blocking and a non-blocking twin, and the non-blocking path holds no thread
 * in their waits by construction.
 */
class StepsLayeringTest {
  private static JavaClasses core;

  @BeforeAll
  static void importTheClientJar() throws URISyntaxException {
    core = new ClassFileImporter().importLocations(List.of(Location.of(
        ResilientHttpClient.class.getProtectionDomain().getCodeSource().getLocation().toURI())));
  }

  @Test
  void theFeaturesNeverRunSleepOrScheduleByThemselves() {
    noClasses().that().implement(Steps.class)
        .should().callMethod(Operation.class, "execute")
        .orShould().callMethod(Operation.class, "executeAsync")
        .orShould().callMethod(Operation.class, "awaitCompletion",
            io.github.resilienthttp.AsyncOperationPolicy.class)
        .orShould().callMethod(TimeSource.class, "sleep", Duration.class)
        .orShould().callMethod(TimeSource.class, "sleep", Duration.class, Future.class)
        .orShould().dependOnClassesThat().areAssignableTo(ScheduledExecutorService.class)
        .because("a feature says what comes next (a Step); the run's drivers send and wait")
        .check(core);
  }

  @Test
  void theWaitAndTheQueryAreSteps() {
    classes().that().haveSimpleName("PollLoop").or().haveSimpleName("QueryLoop")
        .should().implement(Steps.class)
        .check(core);
  }
}
