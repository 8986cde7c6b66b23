package io.homa.spring.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.ContextCustomizer;

/** Which test classes get the customizer, and which properties it sets. */
class HomaTestContextCustomizerFactoryTests {

    private final HomaTestContextCustomizerFactory factory = new HomaTestContextCustomizerFactory();

    @Test
    void shouldIgnoreATestWithoutTheAnnotation() {
        assertThat(this.factory.createContextCustomizer(Plain.class, List.of())).isNull();
    }

    @Test
    void shouldSetARandomLoopbackPortAndRouteEveryExportedServiceByDefault() {
        ContextCustomizer customizer = this.factory.createContextCustomizer(Defaults.class, List.of());

        assertThat(customizer).isInstanceOfSatisfying(HomaTestContextCustomizer.class,
                (homa) -> assertThat(homa.properties()).containsExactly(
                        Map.entry("homa.server.port", "0"),
                        Map.entry("homa.server.bind-address", "127.0.0.1"),
                        Map.entry("homa.client.local-services", "*")));
    }

    @Test
    void shouldKeepThePortAndNameTheSelectedServices() {
        ContextCustomizer customizer = this.factory.createContextCustomizer(Selected.class, List.of());

        assertThat(customizer).isInstanceOfSatisfying(HomaTestContextCustomizer.class,
                (homa) -> assertThat(homa.properties()).containsOnly(
                        Map.entry("homa.client.local-services", "kv,greeting")));
    }

    @Test
    void shouldGiveEqualCustomizersToEqualAnnotationsSoTheContextIsShared() {
        assertThat(this.factory.createContextCustomizer(Defaults.class, List.of()))
                .isEqualTo(this.factory.createContextCustomizer(AlsoDefaults.class, List.of()))
                .isNotEqualTo(this.factory.createContextCustomizer(Selected.class, List.of()));
    }

    @Test
    void shouldFindTheAnnotationOnAnEnclosingClass() {
        assertThat(this.factory.createContextCustomizer(Defaults.Inner.class, List.of()))
                .isEqualTo(this.factory.createContextCustomizer(Defaults.class, List.of()));
    }

    @Test
    void shouldRefuseABlankServiceName() {
        assertThatIllegalStateException()
                .isThrownBy(() -> this.factory.createContextCustomizer(Blank.class, List.of()))
                .withMessageContaining("@AutoConfigureHomaTest(services) of " + Blank.class.getName())
                .withMessageContaining("must list service names");
    }

    static class Plain {
    }

    @AutoConfigureHomaTest
    static class Defaults {

        /** As a {@code @Nested} test class is. */
        class Inner {
        }
    }

    @AutoConfigureHomaTest
    static class AlsoDefaults {
    }

    @AutoConfigureHomaTest(services = {"kv", " greeting"}, randomPort = false)
    static class Selected {
    }

    @AutoConfigureHomaTest(services = " ")
    static class Blank {
    }
}
