package io.homa.demo.registry;

import com.netflix.appinfo.InstanceInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.netflix.eureka.server.event.EurekaInstanceCanceledEvent;
import org.springframework.cloud.netflix.eureka.server.event.EurekaInstanceRegisteredEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * One INFO line per instance that registers (with its address and {@code homa-port} metadata) and
 * per instance that leaves (cancelled by its application, or evicted when its lease expired), so
 * that the demo's log shows the registry's view of the shards.
 */
@Component
class RegistryLog {
    private static final Logger log = LoggerFactory.getLogger(RegistryLog.class);

    @EventListener
    void registered(EurekaInstanceRegisteredEvent event) {
        InstanceInfo info = event.getInstanceInfo();
        if (event.isReplication() || info == null) {
            return;
        }
        log.info("Registered {} {} at {} (homa-port {}), lease {} s", info.getAppName(), info.getInstanceId(),
                info.getIPAddr(), info.getMetadata().get("homa-port"), event.getLeaseDuration());
    }

    @EventListener
    void cancelled(EurekaInstanceCanceledEvent event) {
        if (!event.isReplication()) {
            log.info("Removed {} {} (cancelled, or its lease expired)", event.getAppName(), event.getServerId());
        }
    }
}
