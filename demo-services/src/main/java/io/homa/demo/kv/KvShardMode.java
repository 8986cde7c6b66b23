package io.homa.demo.kv;

import io.homa.demo.DemoProperties;
import io.homa.reactive.HomaTransport;
import java.io.PrintStream;
import java.util.Locale;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * In {@code shard} mode ({@code --mode=shard --shard=i}), says once the application has started
 * (its endpoint serves {@link KvService}, and with the {@code eureka} profile it has registered)
 * where shard {@code i} serves and under which name and Homa port it is registered, with the
 * time (epoch milliseconds, for the multi-host demo's script).
 */
@Component
@Order(0)
public class KvShardMode implements ApplicationRunner {
    private final DemoProperties properties;
    private final ObjectProvider<HomaTransport> endpoint;
    private final ObjectProvider<Registration> registration;
    private final PrintStream out;

    @Autowired
    public KvShardMode(DemoProperties properties, ObjectProvider<HomaTransport> endpoint,
            ObjectProvider<Registration> registration) {
        this(properties, endpoint, registration, System.out);
    }

    KvShardMode(DemoProperties properties, ObjectProvider<HomaTransport> endpoint,
            ObjectProvider<Registration> registration, PrintStream out) {
        this.properties = properties;
        this.endpoint = endpoint;
        this.registration = registration;
        this.out = out;
    }

    @Override
    public void run(ApplicationArguments args) {
        if (properties.mode() != DemoProperties.Mode.SHARD) {
            return;
        }
        out.println(describe(System.currentTimeMillis()));
    }

    /** The start-up line of shard mode, at {@code epochMillis}. */
    String describe(long epochMillis) {
        String name = KvShards.peerName(properties.shard());
        HomaTransport serving = endpoint.getIfAvailable();
        Registration registered = registration.getIfUnique();
        String where = serving == null ? "no endpoint" : "UDP " + serving.localAddress();
        String how = registered == null
                ? "not registered (no service registry: the aggregator needs homa.client.peers." + name + ")"
                : "registered as " + registered.getServiceId() + " at " + registered.getHost() + " with homa-port "
                        + registered.getMetadata().get("homa-port");
        return String.format(Locale.ROOT, "Key-value shard %s serving kv on %s, %s; ready at %d (epoch ms)",
                name, where, how, epochMillis);
    }
}
