package io.homa.spring;

import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.spring.reflection.HomaReflectionService;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Registers the {@link HomaReflectionService} on the dispatcher once all singletons exist, when
 * {@code homa.server.reflection.enabled} says so: {@code true}; or {@code auto} (the default) where
 * only trusted callers can reach the endpoint, i.e. it is bound to a loopback address or packet
 * authentication is on ({@code homa.security.mode} authenticate or encrypt); never with
 * {@code false}.
 */
final class HomaReflectionRegistrar implements SmartInitializingSingleton {

    private static final Logger logger = LoggerFactory.getLogger(HomaReflectionRegistrar.class);

    private final RpcDispatcher dispatcher;

    private final HomaReflectionService service;

    private final @Nullable Boolean setting;

    private final InetSocketAddress boundAddress;

    private final HomaSecurityConfig.Mode securityMode;

    /**
     * @param setting {@code homa.server.reflection.enabled} parsed: {@code null} for auto
     * @param boundAddress where the endpoint's socket is bound
     * @param securityMode the endpoint's packet authentication
     */
    HomaReflectionRegistrar(RpcDispatcher dispatcher, HomaReflectionService service, @Nullable Boolean setting,
            InetSocketAddress boundAddress, HomaSecurityConfig.Mode securityMode) {
        this.dispatcher = dispatcher;
        this.service = service;
        this.setting = setting;
        this.boundAddress = boundAddress;
        this.securityMode = securityMode;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (enabled(this.setting, this.boundAddress, this.securityMode)) {
            this.service.rpcMethods().forEach(this.dispatcher::register);
        }
        else if (this.setting == null) {
            logger.debug("Homa reflection ({}) is off: the endpoint {} is not bound to a loopback address and"
                    + " homa.security.mode is off; set homa.server.reflection.enabled=true to serve it anyway",
                    HomaReflectionService.SERVICE, this.boundAddress);
        }
    }

    /**
     * Whether to serve reflection.
     *
     * @param setting true, false, or {@code null} for auto: on when bound to a loopback address or
     *     when packets are authenticated
     */
    static boolean enabled(@Nullable Boolean setting, InetSocketAddress boundAddress, HomaSecurityConfig.Mode mode) {
        if (setting != null) {
            return setting;
        }
        InetAddress address = boundAddress.getAddress();
        return (address != null && address.isLoopbackAddress()) || mode != HomaSecurityConfig.Mode.OFF;
    }
}
