package dev.outboxreplay.h2;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noFields;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.outboxreplay.h2.internal.H2File;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The library's machinery around H2 (checks, repairs, journal, handover, commit outcome,
 * compaction, shutdown) is reached through the per-file object {@link H2File} alone, and keeps its
 * state there: no other class of the module holds mutable state of its own in a static field.
 */
class H2MachineryBoundaryTest {
  private static final String INTERNAL = "dev.outboxreplay.h2.internal";
  private static JavaClasses main;

  @BeforeAll
  static void importMainClasses() {
    main = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.outboxreplay.h2");
  }

  @Test
  void theApiReachesTheMachineryOnlyThroughThePerFileObject() {
    noClasses().that().resideInAPackage("dev.outboxreplay.h2")
        .should().dependOnClassesThat(resideInAPackage(INTERNAL)
            .and(not(belongToAnyOf(H2File.class))))
        .because("H2Database opens, checks, hands over, compacts and closes a file through "
            + "H2File.Opened, not through the pieces behind it")
        .check(main);
  }

  @Test
  void noStaticFieldChangesAfterTheClassLoads() {
    fields().that().areStatic()
        .and().areDeclaredInClassesThat().resideInAPackage("dev.outboxreplay.h2..")
        .should().beFinal()
        .check(main);
  }

  @Test
  void theOnlyStaticRegistryIsThePerFileObjects() {
    noFields().that().areStatic()
        .and().areDeclaredInClassesThat().resideInAPackage("dev.outboxreplay.h2..")
        .and().areNotDeclaredIn(H2File.class)
        .should().haveRawType(assignableTo(Map.class))
        .orShould().haveRawType(assignableTo(ThreadLocal.class))
        .because("what the library knows about a file lives in that file's H2File")
        .check(main);
  }
}
