package io.homa.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Each library module's API packages let no internal type through (see {@link ApiBoundary}) and
 * depend on no other module's internal packages; what a user may depend on is listed per module in
 * docs/architecture.md.
 */
class ModuleApiTest {

    static final List<LibraryModule> MODULES = LibraryModule.ALL;

    private static JavaClasses everything;

    @BeforeAll
    static void importModules() {
        Path[] directories = MODULES.stream().map(LibraryModule::classesDirectory).toArray(Path[]::new);
        everything = new ClassFileImporter().importPaths(directories);
    }

    @ParameterizedTest
    @FieldSource("MODULES")
    void apiPackagesExposeNoInternalType(LibraryModule module) {
        JavaClasses own = ownClasses(module);
        classes().that(inApiPackageOf(module)).should(ApiBoundary.exposeNoInternalType())
                .allowEmptyShould(false).check(own);
    }

    @ParameterizedTest
    @FieldSource("MODULES")
    void apiPackagesDependOnNoOtherModulesInternals(LibraryModule module) {
        JavaClasses own = ownClasses(module);
        noClasses().that(inApiPackageOf(module)).should().dependOnClassesThat(internalOfAnotherModuleThan(module))
                .allowEmptyShould(false).check(own);
    }

    private static JavaClasses ownClasses(LibraryModule module) {
        JavaClasses own = everything.that(new DescribedPredicate<JavaClass>("in " + module) {
            @Override
            public boolean test(JavaClass javaClass) {
                return module.owns(javaClass.getPackageName());
            }
        });
        assertThat(own).as("classes of %s under %s", module, module.classesDirectory()).isNotEmpty();
        return own;
    }

    private static DescribedPredicate<JavaClass> inApiPackageOf(LibraryModule module) {
        return new DescribedPredicate<>("are in an API package of " + module) {
            @Override
            public boolean test(JavaClass javaClass) {
                return module.owns(javaClass.getPackageName()) && !module.ownsInternal(javaClass.getPackageName());
            }
        };
    }

    private static DescribedPredicate<JavaClass> internalOfAnotherModuleThan(LibraryModule module) {
        return new DescribedPredicate<>("are internal to another module than " + module) {
            @Override
            public boolean test(JavaClass javaClass) {
                String packageName = javaClass.getPackageName();
                return MODULES.stream().anyMatch(other -> other != module && other.ownsInternal(packageName));
            }
        };
    }
}
