package io.github.resilienthttp.engine;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.internal.engine.Execution;
import java.net.URISyntaxException;
import java.util.List;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The engine's layering (issue 21), pinned on the client jar's classes: the API package holds only
 * public types; the features above the retry loop (the 202 wait, outcome queries, the outbox exit)
 * start attempts only through an {@link Operation} and its driver, never an OkHttp call of their
 * own; only the engine (and the deadline watchdog, which links operations) writes an operation's
 * running state.
 */
class LayeringTest {
  private static final String API = "io.github.resilienthttp";
  private static final String[] FEATURES = {"io.github.resilienthttp.internal.async..",
      "io.github.resilienthttp.internal.query..", "io.github.resilienthttp.internal.outbox.."};
  private static JavaClasses core;

  @BeforeAll
  static void importTheClientJar() throws URISyntaxException {
    // Only the client's own classes: tests in the same package (EngineAccess) are not the API.
    core = new ClassFileImporter().importLocations(List.of(Location.of(
        ResilientHttpClient.class.getProtectionDomain().getCodeSource().getLocation().toURI())));
  }

  @Test
  void theApiPackageHoldsOnlyPublicTypes() {
    classes().that().resideInAPackage(API).and().areTopLevelClasses()
        .and().doNotHaveSimpleName("package-info")
        .should().bePublic()
        .because("implementation lives under internal, where the import graph shows the layering")
        .check(core);
  }

  @Test
  void featuresStartAttemptsOnlyThroughAnOperation() {
    noClasses().that().resideInAnyPackage(FEATURES)
        .should().callMethod(Call.class, "execute")
        .orShould().callMethod(Call.class, "enqueue", Callback.class)
        .orShould().callMethod(OkHttpClient.class, "newCall", Request.class)
        .orShould().dependOnClassesThat().haveSimpleNameEndingWith("Driver")
        .orShould().dependOnClassesThat().haveSimpleName("RetryLoop")
        .because("an attempt's key, deadline, budget, breaker and bulkhead are the engine's")
        .check(core);
  }

  @Test
  void onlyTheEngineWritesAnOperationsRunningState() {
    noClasses().that().resideOutsideOfPackages("io.github.resilienthttp.internal.engine..",
            "io.github.resilienthttp.internal.deadline..")
        .should().setFieldWhere(DescribedPredicate.describe("a field of Execution",
            access -> access.getTarget().getOwner().isEquivalentTo(Execution.class)))
        .check(core);
  }

  @Test
  void executionKeepsItsStateBehindMethods() {
    fields().that().areDeclaredIn(Execution.class).and().areNotStatic()
        .should().bePrivate()
        .because("the running state changes only through Execution's methods")
        .check(core);
  }
}
