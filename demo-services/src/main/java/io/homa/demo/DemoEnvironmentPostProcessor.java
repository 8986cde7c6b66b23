package io.homa.demo;

import io.homa.demo.kv.KvShards;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.CommandLinePropertySource;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;

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
 *   <li>{@code client}: port 0;</li>
 *   <li>{@code shard}: port {@value #SERVER_MODE_HOMA_PORT} with reflection on, as in server mode;
 *       {@code spring.application.name} = {@code kv-<shard>}, the name the aggregator discovers
 *       the shard by, above every source but the command line (where
 *       {@code --spring.application.name} still wins); and with the {@code eureka} profile the
 *       shard registers but does not fetch the registry;</li>
 *   <li>{@code watch}: port 0; with the {@code eureka} profile it fetches the registry but does
 *       not register.</li>
 * </ul>
 */
public class DemoEnvironmentPostProcessor implements EnvironmentPostProcessor {
    /** Port of the starter's endpoint in server mode. */
    public static final int SERVER_MODE_HOMA_PORT = 4001;
    static final String PROPERTY_SOURCE_NAME = "homaDemoModeDefaults";
    static final String SHARD_NAME_SOURCE_NAME = "homaDemoShardName";

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
            case "shard" -> {
                defaults.put("homa.server.port", SERVER_MODE_HOMA_PORT);
                defaults.put("homa.server.reflection.enabled", "true");
                defaults.put("eureka.client.fetch-registry", "false");
                nameShard(environment);
            }
            case "watch" -> {
                defaults.put("homa.server.port", 0);
                defaults.put("eureka.client.register-with-eureka", "false");
            }
            default -> {
                defaults.put("homa.server.port", 0);
                defaults.put("homa.server.bind-address", "127.0.0.1");
            }
        }
        environment.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE_NAME, defaults));
    }

    /** Shard mode: {@code spring.application.name=kv-<shard>}, just below the command line. */
    private static void nameShard(ConfigurableEnvironment environment) {
        String shard = environment.getProperty("shard");
        if (shard == null || shard.isBlank()) {
            return; // DemoProperties rejects it, naming --shard
        }
        MapPropertySource name = new MapPropertySource(SHARD_NAME_SOURCE_NAME,
                Map.of("spring.application.name", KvShards.PEER_PREFIX + shard.trim()));
        MutablePropertySources sources = environment.getPropertySources();
        if (sources.contains(CommandLinePropertySource.COMMAND_LINE_PROPERTY_SOURCE_NAME)) {
            sources.addAfter(CommandLinePropertySource.COMMAND_LINE_PROPERTY_SOURCE_NAME, name);
        } else {
            sources.addFirst(name);
        }
    }
}
