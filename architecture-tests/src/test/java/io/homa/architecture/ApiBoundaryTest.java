package io.homa.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.homa.architecture.fixture.api.Leaks;
import io.homa.architecture.fixture.internal.Hidden;
import org.junit.jupiter.api.Test;

/** The condition itself, on fixture classes: it finds each way of leaking an internal type, and only those. */
class ApiBoundaryTest {

    private final JavaClasses fixtures = new ClassFileImporter().importPackagesOf(Leaks.class, Hidden.class);

    @Test
    void shouldReportEachWayAnApiClassLeaksAnInternalType() {
        assertThat(violations(Leaks.Returns.class)).containsExactly(
                Leaks.Returns.class.getName() + ".get return type names " + Hidden.class.getName());
        assertThat(violations(Leaks.TakesList.class)).singleElement().asString().contains("take parameter");
        assertThat(violations(Leaks.Supplies.class)).singleElement().asString().contains("implements");
        assertThat(violations(Leaks.Field.class)).singleElement().asString().contains("hidden field type");
        assertThat(violations(Leaks.Extensible.class)).singleElement().asString().contains("hook return type");
    }

    @Test
    void shouldAcceptInternalTypesUsedOutOfUsersReach() {
        assertThat(violations(Leaks.KeepsItPrivate.class)).isEmpty();
        assertThat(violations(fixtures.get(Leaks.class.getName() + "$PackagePrivate"))).isEmpty();
        assertThat(violations(Hidden.class)).as("an internal class itself is not API").isEmpty();
    }

    @Test
    void shouldFailTheRuleOnALeak() {
        assertThatThrownBy(() -> classes().should(ApiBoundary.exposeNoInternalType()).check(fixtures))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(Leaks.Returns.class.getName() + ".get return type names " + Hidden.class.getName());
    }

    @Test
    void shouldTellInternalPackagesBySegment() {
        assertThat(ApiBoundary.isInternalPackage("io.homa.reactive.internal")).isTrue();
        assertThat(ApiBoundary.isInternalPackage("io.homa.reactive.internal.transport")).isTrue();
        assertThat(ApiBoundary.isInternalPackage("io.homa.reactive.internals")).isFalse();
        assertThat(ApiBoundary.isInternalPackage("io.homa.reactive")).isFalse();
    }

    private java.util.List<String> violations(Class<?> type) {
        return violations(fixtures.get(type));
    }

    private static java.util.List<String> violations(JavaClass javaClass) {
        return ApiBoundary.violations(javaClass, c -> ApiBoundary.isInternalPackage(c.getPackageName()));
    }
}
