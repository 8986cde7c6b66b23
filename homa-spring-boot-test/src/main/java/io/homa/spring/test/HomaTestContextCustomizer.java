package io.homa.spring.test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.support.TestPropertySourceUtils;

/**
 * The properties of {@link AutoConfigureHomaTest @AutoConfigureHomaTest}, in a property source
 * named {@value #PROPERTY_SOURCE_NAME} placed just below the test's own properties (inlined and
 * dynamic; first when there are none), so above the application's configuration.
 *
 * @param services the services routed to the application's own endpoint; empty for all it exports
 * @param randomPort whether the endpoint binds a free loopback port
 */
record HomaTestContextCustomizer(List<String> services, boolean randomPort) implements ContextCustomizer {

    /** The name of the property source this customizer adds. */
    static final String PROPERTY_SOURCE_NAME = "homaTest";

    /** The test's own property sources: inlined ({@code @SpringBootTest(properties)}, {@code @TestPropertySource}) and dynamic. */
    private static final List<String> TEST_PROPERTY_SOURCES = List.of(
            TestPropertySourceUtils.INLINED_PROPERTIES_PROPERTY_SOURCE_NAME, "Dynamic Test Properties");

    @Override
    public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
        MutablePropertySources sources = context.getEnvironment().getPropertySources();
        MapPropertySource source = new MapPropertySource(PROPERTY_SOURCE_NAME, properties());
        String below = null;
        for (String name : TEST_PROPERTY_SOURCES) {
            if (sources.contains(name) && (below == null || sources.precedenceOf(sources.get(name))
                    > sources.precedenceOf(sources.get(below)))) {
                below = name;
            }
        }
        if (below != null) {
            sources.addAfter(below, source);
        } else {
            sources.addFirst(source);
        }
    }

    /** {@code homa.*} properties by name. */
    Map<String, Object> properties() {
        Map<String, Object> properties = new LinkedHashMap<>();
        if (this.randomPort) {
            properties.put("homa.server.port", "0");
            properties.put("homa.server.bind-address", "127.0.0.1");
        }
        properties.put("homa.client.local-services", this.services.isEmpty() ? "*" : String.join(",", this.services));
        return properties;
    }
}
