package io.homa.demo.aggregator;

import io.homa.demo.DemoProperties;
import io.homa.demo.kv.KvService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * In {@code server} mode, puts the demo's keys ({@code key-000} .. {@code key-099}, values
 * {@code value-000} .. {@code value-099}, as {@link KvDemo} does) into the {@code kv} store this
 * application exports on its endpoint (port 4001) at start, so that a client finds them without
 * running the client demo first: {@code homa call kv get '"key-042"'} prints {@code "value-042"}.
 * The aggregator's shards start empty.
 */
@Component
@Order(0)
public class KvServerSeed implements ApplicationRunner {
    private static final Logger log = LoggerFactory.getLogger(KvServerSeed.class);

    private final KvService kv;
    private final DemoProperties properties;

    public KvServerSeed(KvService kv, DemoProperties properties) {
        this.kv = kv;
        this.properties = properties;
    }

    @Override
    public void run(ApplicationArguments args) {
        if (properties.mode() != DemoProperties.Mode.SERVER) {
            return;
        }
        for (int i = 0; i < KvDemo.KEYS; i++) {
            kv.put(KvDemo.key(i), KvDemo.value(i));
        }
        log.info("Put {} keys ({} .. {}) into the kv service of this endpoint", KvDemo.KEYS, KvDemo.key(0),
                KvDemo.key(KvDemo.KEYS - 1));
    }
}
