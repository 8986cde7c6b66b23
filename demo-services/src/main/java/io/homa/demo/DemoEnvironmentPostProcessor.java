package io.homa.demo;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Defaults for the starter's Homa endpoint (the one that serves {@code @HomaService} beans) that
 * depend on {@code --mode}, added with the lowest precedence so that any
 * {@code --homa.server.port} or {@code homa.*} setting wins:
 * <ul>
 *   <li>{@code server}: {@code homa.server.port} = {@value #SERVER_MODE_HOMA_PORT}, a fixed port
 *       that remote clients can reach (the workload's echo server is on {@code --port}, default 4000),
 *       and {@code homa.server.reflection.enabled} = true, so that the {@code homa} command-line
 *       client can list the demo's services (the endpoint binds the wildcard address, where the
 *       starter leaves reflection off unless asked);</li>
 *   <li>{@code local}: port 0 (a free one) on 127.0.0.1, so that two local runs never collide and
 *       the endpoint is not reachable from the network; the greeting call finds the bound port
 *       through {@link DemoHomaConfiguration};</li>
 *   <li>{@code client}: port 0.</li>
 * </ul>
 */
public class DemoEnvironmentPostProcessor implements EnvironmentPostProcessor {
    /** Port of the starter's endpoint in server mode. */
    public static final int SERVER_MODE_HOMA_PORT = 4001;
    static final String PROPERTY_SOURCE_NAME = "homaDemoModeDefaults";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        String mode = environment.getProperty("mode", "local").trim().toLowerCase(Locale.ROOT);
        Map<String, Object> defaults = new LinkedHashMap<>();
        switch (mode) {
            case "server" -> {
                defaults.put("homa.server.port", SERVER_MODE_HOMA_PORT);
                defaults.put("homa.server.reflection.enabled", "true");
            }
            case "client" -> defaults.put("homa.server.port", 0);
            default -> {
                defaults.put("homa.server.port", 0);
                defaults.put("homa.server.bind-address", "127.0.0.1");
            }
        }
        environment.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE_NAME, defaults));
    }
}
