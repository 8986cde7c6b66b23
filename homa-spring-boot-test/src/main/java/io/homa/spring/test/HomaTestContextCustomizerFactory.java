package io.homa.spring.test;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.util.StringUtils;

/**
 * Gives a test class annotated {@link AutoConfigureHomaTest @AutoConfigureHomaTest} (directly, on
 * a superclass or an enclosing class, or as a meta-annotation) its {@link HomaTestContextCustomizer}.
 * Registered in {@code META-INF/spring.factories}.
 */
class HomaTestContextCustomizerFactory implements ContextCustomizerFactory {

    @Override
    public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
            List<ContextConfigurationAttributes> configAttributes) {
        AutoConfigureHomaTest annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass,
                AutoConfigureHomaTest.class);
        if (annotation == null) {
            return null;
        }
        List<String> services = List.of(annotation.services());
        for (String service : services) {
            if (!StringUtils.hasText(service)) {
                throw new IllegalStateException("@AutoConfigureHomaTest(services) of " + testClass.getName()
                        + " must list service names, was " + services);
            }
        }
        return new HomaTestContextCustomizer(services.stream().map(String::trim).toList(), annotation.randomPort());
    }
}
