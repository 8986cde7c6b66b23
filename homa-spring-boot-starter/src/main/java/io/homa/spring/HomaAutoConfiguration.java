package io.homa.spring;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.PayloadCodec;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.reactive.rpc.StaticServiceResolver;
import java.time.Duration;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * Auto-configuration of a Homa endpoint: one {@link HomaTransport} bound at start-up to
 * {@code homa.server.bind-address}:{@code homa.server.port}, serving the methods of
 * {@link HomaService @HomaService} beans through an {@link RpcDispatcher}, and a
 * {@link HomaClient} that calls the services listed in {@code homa.client.peers}. Every bean backs
 * off when the application defines its own of the same type.
 *
 * <p>The endpoint always binds (clients need a socket); {@code homa.server.enabled=false} only
 * stops exporting {@code @HomaService} beans. Requests that arrive before the context has
 * started wait and are dispatched once it has.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnClass(HomaTransport.class)
@EnableConfigurationProperties(HomaProperties.class)
public final class HomaAutoConfiguration {

    /** How long start-up waits for the UDP socket to bind. */
    static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);

    /**
     * JSON codec over the application's {@link JsonMapper} when there is exactly one, else over a
     * default one.
     */
    @Bean
    @ConditionalOnMissingBean
    PayloadCodec homaPayloadCodec(ObjectProvider<JsonMapper> jsonMapper) {
        return new JsonPayloadCodec(jsonMapper.getIfUnique(() -> JsonMapper.builder().build()));
    }

    /** The endpoints of {@code homa.client.peers}. */
    @Bean
    @ConditionalOnMissingBean
    ServiceResolver homaServiceResolver(HomaProperties properties) {
        return new StaticServiceResolver(properties.getClient().peerAddresses());
    }

    /** Server side of the RPC layer; methods run on {@link Schedulers#boundedElastic()}. */
    @Bean
    @ConditionalOnMissingBean
    RpcDispatcher homaRpcDispatcher(PayloadCodec codec) {
        return new RpcDispatcher(codec, Schedulers.boundedElastic());
    }

    /** {@code homa.*} mapped onto the transport's settings. */
    @Bean
    @ConditionalOnMissingBean
    HomaTransportConfig homaTransportConfig(HomaProperties properties) {
        return transportConfig(properties);
    }

    /** Holds requests until the context has started; only with the auto-configured transport. */
    @Bean
    @ConditionalOnMissingBean(HomaTransport.class)
    HomaRequestGate homaRequestGate(RpcDispatcher dispatcher) {
        return new HomaRequestGate(dispatcher);
    }

    /** The endpoint, bound now (so the client can use it); disposed when the context closes. */
    @Bean(destroyMethod = "disposeNow")
    @ConditionalOnMissingBean
    HomaTransport homaTransport(HomaTransportConfig config, HomaRequestGate gate) {
        return HomaTransport.bindNow(config, gate::handle, BIND_TIMEOUT);
    }

    @Bean
    @ConditionalOnMissingBean
    HomaClient homaClient(HomaTransport transport, ServiceResolver resolver, PayloadCodec codec) {
        return new HomaClient(transport, resolver, codec);
    }

    static HomaTransportConfig transportConfig(HomaProperties properties) {
        PropertyMapper map = PropertyMapper.get();
        HomaProperties.Protocol protocol = properties.getProtocol();
        EngineConfig.Builder engine = EngineConfig.builder();
        map.from(protocol::getMtu).to(engine::mtuBytes);
        map.from(protocol::getUnscheduledBytes).asInt(DataSize::toBytes).to(engine::unscheduledBytes);
        map.from(protocol::getMaxMessageSize).asInt(DataSize::toBytes).to(engine::maxMessageBytes);
        map.from(protocol::getResendInterval).as(Duration::toNanos).to(engine::resendIntervalNs);
        map.from(protocol::getTimeoutResends).to(engine::timeoutResends);
        map.from(protocol::getPeerIdleTimeout).as(Duration::toNanos).to(engine::peerIdleTimeoutNs);
        map.from(protocol::getMaxInboundBuffer).as(DataSize::toBytes).to(engine::maxInboundBufferBytes);
        map.from(protocol::getMaxOvercommit).to(engine::maxOvercommit);
        map.from(protocol::getMaxGrantsPerPeer).to(engine::maxGrantsPerPeer);
        map.from(protocol::getMaxIncoming).asInt(DataSize::toBytes).to(engine::maxIncomingBytes);
        map.from(protocol::getFifoGrantFraction).to(engine::fifoGrantFraction);
        map.from(protocol::getPriorityLevels).to(engine::priorityLevels);
        map.from(protocol::getIncastThreshold).to(engine::incastThreshold);
        map.from(protocol::getIncastUnscheduledBytes).asInt(DataSize::toBytes).to(engine::incastUnscheduledBytes);

        HomaProperties.Server server = properties.getServer();
        HomaProperties.Transport transport = properties.getTransport();
        HomaTransportConfig.Builder config = HomaTransportConfig.builder();
        map.from(server::getBindAddress).to(config::bindAddress);
        map.from(server::getPort).to(config::port);
        map.from(transport::getReceiveBufferSize).asInt(DataSize::toBytes).to(config::receiveBufferBytes);
        map.from(transport::getSendBufferSize).asInt(DataSize::toBytes).to(config::sendBufferBytes);
        map.from(transport::isNative).to(config::nativeTransport);
        map.from(transport::getLinkMbps).to(config::linkMbps);
        map.from(transport::isPriorityTos).to(config::priorityTos);
        return config.engine(engine.build()).build();
    }

    /** Exports {@link HomaService @HomaService} beans unless {@code homa.server.enabled=false}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "homa.server.enabled", matchIfMissing = true)
    static class HomaServiceExportConfiguration {

        @Bean
        HomaServiceRegistrar homaServiceRegistrar(ListableBeanFactory beanFactory, RpcDispatcher dispatcher) {
            return new HomaServiceRegistrar(beanFactory, dispatcher);
        }
    }
}
