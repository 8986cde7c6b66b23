package io.homa.demo.kv.shard;

import io.homa.demo.kv.KvExceptionAdvice;
import io.homa.demo.kv.KvService;
import io.homa.reactive.HomaTransport;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.context.logging.LoggingApplicationListener;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * One key-value shard as a Spring Boot application of its own: the starter's auto-configuration
 * (its own Homa endpoint, dispatcher and {@code @HomaService} export) with just {@link KvService}
 * and {@link KvExceptionAdvice}. Not a {@code @Configuration}, so the demo's component scan
 * ignores it; {@link io.homa.demo.kv.KvShardServers} starts one per in-process shard.
 *
 * <p>To start fast, a shard uses only the auto-configurations it needs: the starter's
 * ({@code io.homa.*}), Jackson's and Spring Boot's context basics; the others (Actuator, web,
 * metrics...) are excluded through {@code spring.autoconfigure.exclude}.
 */
@EnableAutoConfiguration
@Import({KvService.class, KvExceptionAdvice.class})
public class KvShardApplication {
    /** Package prefixes of the auto-configurations a shard uses. */
    static final List<String> USED_AUTO_CONFIGURATION_PREFIXES = List.of(
            "io.homa.", "org.springframework.boot.jackson.", "org.springframework.boot.autoconfigure.context.");

    /**
     * Starts a shard; its endpoint is bound when this returns.
     *
     * @param shard the shard index, for the application name ({@code homa-demo-kv-<shard>})
     * @param bindAddress IP address the shard's endpoint binds, on a free port
     * @param extraArgs more command-line arguments, e.g. {@code --homa.protocol.*} settings
     * @return the running shard; close it to stop it
     */
    public static ConfigurableApplicationContext start(int shard, String bindAddress, List<String> extraArgs) {
        List<String> args = new ArrayList<>(extraArgs);
        args.add("--spring.application.name=homa-demo-kv-" + shard);
        args.add("--spring.main.web-application-type=none");
        args.add("--homa.server.port=0");
        args.add("--homa.server.bind-address=" + bindAddress);
        args.add("--homa.server.enabled=true");
        SpringApplicationBuilder builder = new SpringApplicationBuilder(KvShardApplication.class)
                .web(WebApplicationType.NONE)
                .properties(Map.of("spring.autoconfigure.exclude", String.join(",", unusedAutoConfigurations())))
                .registerShutdownHook(false); // the demo application closes its shards
        builder.application().setListeners(builder.application().getListeners().stream()
                .filter(KvShardApplication::keepsListener)
                .toList());
        return builder.run(args.toArray(String[]::new));
    }

    /**
     * Whether a shard's {@code SpringApplication} keeps this listener. The demo has set up logging
     * already, in this JVM: a shard drops Spring Boot's {@link LoggingApplicationListener} (a second
     * initialisation would reset it under the demo's feet) and Spring Cloud's listeners, which a shard
     * does not use and one of which ({@code LoggingSystemShutdownListener}) shuts logging down to
     * suppress every line until that second initialisation, which then never comes: the demo's own
     * log lines went silent whenever a shard ran in the same JVM.
     */
    static boolean keepsListener(ApplicationListener<?> listener) {
        return !(listener instanceof LoggingApplicationListener)
                && !listener.getClass().getName().startsWith("org.springframework.cloud.");
    }

    /** The auto-configurations on the class path that a shard does not use. */
    static List<String> unusedAutoConfigurations() {
        List<String> unused = new ArrayList<>();
        for (String name : ImportCandidates.load(AutoConfiguration.class, KvShardApplication.class.getClassLoader())) {
            if (USED_AUTO_CONFIGURATION_PREFIXES.stream().noneMatch(name::startsWith)) {
                unused.add(name);
            }
        }
        return unused;
    }

    /** The address a running shard's endpoint is bound to. */
    public static InetSocketAddress localAddress(ConfigurableApplicationContext shard) {
        return shard.getBean(HomaTransport.class).localAddress();
    }
}
