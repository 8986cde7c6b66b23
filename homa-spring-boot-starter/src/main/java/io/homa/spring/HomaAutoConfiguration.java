package io.homa.spring;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.HomaTransportSpec;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.HomaServerInterceptor;
import io.homa.reactive.rpc.JacksonPayloadCodec;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.PayloadCodec;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.spring.client.AutoConfiguredHomaClientsRegistrar;
import io.homa.spring.client.HomaServiceProxyFactory;
import io.homa.spring.internal.HomaPropertiesConverters;
import io.homa.spring.internal.HomaSettingsMapper;
import io.homa.spring.reflection.HomaReflectionService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.io.ResourceLoader;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Auto-configuration of a Homa endpoint: one {@link HomaTransport} bound at start-up to
 * {@code homa.server.bind-address}:{@code homa.server.port}, serving the methods of
 * {@link HomaService @HomaService} beans through an {@link RpcDispatcher}, a {@link HomaClient}
 * that calls the services listed in {@code homa.client.peers}, and the declarative clients
 * ({@link io.homa.spring.client.HomaExchange @HomaExchange} interfaces) made by a
 * {@link HomaServiceProxyFactory}. Every bean backs off when the application defines its own of
 * the same type.
 *
 * <p>Extension points: {@link HomaTransportCustomizer} beans customize the endpoint's transport
 * before it binds (on the {@code homaLoopResources} event loops); {@link PayloadCodec} beans join the codec registry (replacing a built-in
 * codec of the same name); {@link HomaClientInterceptor} and {@link HomaServerInterceptor} beans
 * wrap every call, in {@link org.springframework.core.annotation.Order @Order}.
 *
 * <p>The endpoint always binds, when its bean is created (clients need a socket);
 * {@code homa.server.enabled=false} only stops exporting {@code @HomaService} beans. Requests that
 * arrive before the context is refreshed are held by the engine (answered BUSY) and dispatched
 * once {@link HomaEndpointLifecycle} starts; when the context stops, RPCs in flight get
 * {@code homa.server.shutdown-grace-period} to finish. The bound port is published as
 * {@code local.homa.port}.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnClass(HomaTransport.class)
@EnableConfigurationProperties(HomaProperties.class)
@Import(HomaPropertiesConverters.class)
public final class HomaAutoConfiguration {

    /** How long start-up waits for the UDP socket to bind. */
    static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);

    /**
     * The codecs by name: json (over the application's {@link JsonMapper} when there is exactly
     * one, else a default one), smile and cbor when their Jackson dataformat is on the classpath
     * ({@value PayloadCodecs#SMILE_DEPENDENCY}, {@value PayloadCodecs#CBOR_DEPENDENCY}), plus every
     * {@link PayloadCodec} bean (a bean replaces the built-in codec of its name).
     *
     * @throws InvalidConfigurationPropertyValueException when {@code homa.server.codecs},
     *     {@code homa.client.codec} or {@code homa.client.services.<service>.codec} names smile or
     *     cbor while its dataformat is missing, naming the property and the dependency to add
     */
    @Bean
    @ConditionalOnMissingBean
    PayloadCodecs homaPayloadCodecs(ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<PayloadCodec> codecs,
            HomaProperties properties, ResourceLoader resourceLoader) {
        Map<String, PayloadCodec> byName = new LinkedHashMap<>();
        PayloadCodecs defaults = PayloadCodecs.defaults(jsonMapper.getIfUnique(() -> JsonMapper.builder().build()),
                resourceLoader.getClassLoader());
        defaults.names().forEach((name) -> byName.put(name, defaults.get(name)));
        codecs.orderedStream().forEach((codec) -> byName.put(codec.name(), codec));
        PayloadCodecs registry = PayloadCodecs.of(byName.values().toArray(new PayloadCodec[0]));
        requireDataformats(properties, registry);
        return registry;
    }

    /**
     * Fails start-up when a codec property names smile or cbor and the registry lacks it because
     * its Jackson dataformat is not on the classpath; other unknown names are reported where
     * each property is used.
     */
    private static void requireDataformats(HomaProperties properties, PayloadCodecs registry) {
        List<String> serverCodecs = properties.getServer().getCodecs();
        if (serverCodecs != null) {
            for (String name : serverCodecs) {
                requireDataformat("homa.server.codecs", String.join(",", serverCodecs), name, registry);
            }
        }
        HomaProperties.Client client = properties.getClient();
        requireDataformat("homa.client.codec", client.getCodec(), client.getCodec(), registry);
        client.getServices().forEach((service, settings) -> {
            if (settings.getCodec() != null) {
                requireDataformat("homa.client.services." + service + ".codec", settings.getCodec(),
                        settings.getCodec(), registry);
            }
        });
    }

    private static void requireDataformat(String property, String value, String name, PayloadCodecs registry) {
        String codec = name.trim();
        if (registry.contains(codec)) {
            return;
        }
        PayloadCodecs.requiredDependency(codec).ifPresent((dependency) -> {
            throw new InvalidConfigurationPropertyValueException(property, value, "the " + codec + " codec needs "
                    + dependency + " on the classpath: add that dependency (codecs available now: "
                    + String.join(", ", registry.names()) + ")");
        });
    }

    /** The endpoints of {@code homa.client.peers}, several per service used in turn. */
    @Bean
    @ConditionalOnMissingBean
    ServiceResolver homaServiceResolver(HomaProperties properties) {
        return StaticServiceResolver.ofPeers(HomaSettingsMapper.peerAddresses(properties.getClient()));
    }

    /** The name of the scheduler bean that runs blocking service methods. */
    public static final String SERVER_SCHEDULER_BEAN = "homaServerScheduler";

    /**
     * Where blocking service methods (plain return types) run and long requests are decoded: a
     * bounded elastic scheduler of {@code homa.server.threads} threads queueing up to
     * {@code homa.server.queue-capacity} calls each, or, with {@code spring.threads.virtual.enabled}
     * on JDK 21+, a virtual thread per call (as Spring Boot's own servers do). Disposed with the context.
     */
    @Bean(name = SERVER_SCHEDULER_BEAN, destroyMethod = "dispose")
    @ConditionalOnMissingBean(name = SERVER_SCHEDULER_BEAN)
    Scheduler homaServerScheduler(HomaProperties properties, Environment environment) {
        if (Threading.VIRTUAL.isActive(environment)) {
            return Schedulers.fromExecutor(new VirtualThreadTaskExecutor("homa-server-"));
        }
        HomaProperties.Server server = properties.getServer();
        return Schedulers.newBoundedElastic(server.getThreads(), server.getQueueCapacity(), "homa-server", 60, true);
    }

    /**
     * Server side of the RPC layer: accepts the codecs of {@code homa.server.codecs} (by default
     * every codec of the registry); methods that
     * return {@code Mono}, {@code Flux} or {@code CompletionStage} run on the event loop, the others
     * on the {@value #SERVER_SCHEDULER_BEAN}; every {@link HomaServerInterceptor} bean wraps each
     * call, in order.
     */
    @Bean
    @ConditionalOnMissingBean
    RpcDispatcher homaRpcDispatcher(PayloadCodecs codecs, HomaProperties properties,
            ObjectProvider<HomaServerInterceptor> interceptors,
            @Qualifier(SERVER_SCHEDULER_BEAN) Scheduler serverScheduler, Environment environment) {
        List<PayloadCodec> accepted = new ArrayList<>();
        List<String> names = properties.getServer().getCodecs();
        if (names == null) {
            names = List.copyOf(codecs.names());
        }
        for (String name : names) {
            String trimmed = name.trim();
            if (!codecs.contains(trimmed)) {
                throw new InvalidConfigurationPropertyValueException("homa.server.codecs", String.join(",", names),
                        "must list codecs among the available ones: " + String.join(", ", codecs.names()));
            }
            if (accepted.stream().noneMatch((codec) -> codec.name().equals(trimmed))) {
                accepted.add(codecs.get(trimmed));
            }
        }
        int maxCallsInService = HomaSettingsMapper.maxCallsInService(properties.getServer(),
                HomaSettingsMapper.transportConfig(properties).resolvedLoops());
        RpcDispatcher dispatcher = new RpcDispatcher(PayloadCodecs.of(accepted.toArray(new PayloadCodec[0])),
                serverScheduler)
                .offloadBytes((int) properties.getServer().getOffloadSize().toBytes())
                .streamWindowBytes((int) properties.getServer().getStreamWindowSize().toBytes())
                .maxCallsInService(maxCallsInService)
                .maxBlockingCalls(HomaSettingsMapper.maxBlockingCalls(properties.getServer(),
                        Threading.VIRTUAL.isActive(environment), maxCallsInService))
                .maxQueueDelay(properties.getServer().getMaxQueueDelay());
        long maxMessageBytes = properties.getProtocol().getMaxMessageSize().toBytes();
        if (maxMessageBytes >= 1 && maxMessageBytes <= EngineConfig.MAX_MESSAGE_BYTES_CAP) {
            // (out of range, the transport's config fails start-up naming the property)
            dispatcher.maxResponseBytes((int) maxMessageBytes);
        }
        interceptors.orderedStream().forEach(dispatcher::addInterceptor);
        return dispatcher;
    }

    /**
     * {@code homa.*} mapped onto the transport's and engine's settings, whose config builders
     * check every value; a bad one fails start-up with the property, its value as written and its
     * allowed range.
     */
    @Bean
    @ConditionalOnMissingBean
    HomaTransportConfig homaTransportConfig(HomaProperties properties) {
        return HomaSettingsMapper.transportConfig(properties);
    }

    /**
     * The endpoint, bound now (so the application's clients can call while the context is still
     * being built) with the requests it receives held by the engine until
     * {@link HomaEndpointLifecycle} starts serving; disposed when the context closes. The bound
     * port is published as {@value #LOCAL_PORT_PROPERTY}.
     */
    @Bean(destroyMethod = "disposeNow")
    @ConditionalOnMissingBean
    HomaTransport homaTransport(HomaTransportConfig config, RpcDispatcher dispatcher, Environment environment,
            @Qualifier(LOOP_RESOURCES_BEAN) LoopResources loops, ObjectProvider<HomaTransportCustomizer> customizers) {
        HomaTransportSpec spec = HomaTransport.create(config)
                .handler(dispatcher::handle)
                .holdRequests(true)
                .runOn(loops);
        for (HomaTransportCustomizer customizer : customizers.orderedStream().toList()) {
            spec = customizer.customize(spec);
        }
        HomaTransport transport;
        try {
            transport = spec.bindNow(BIND_TIMEOUT);
        } catch (IllegalStateException ex) {
            throw new IllegalStateException(ex.getMessage() + " (homa.server.bind-address, homa.server.port)",
                    ex.getCause());
        }
        dispatcher.clock(transport.clock());
        publishLocalPort(environment, transport.localAddress().getPort());
        return transport;
    }

    /** The name of the event loops the starter creates for the endpoint (and disposes with the context). */
    public static final String LOOP_RESOURCES_BEAN = "homaLoopResources";

    /**
     * The endpoint's event loops: {@code homa.transport.loops} daemon threads ({@code homa-epoll-...}
     * or {@code homa-nio-N}; by default one per processor), each with a socket and an engine of the
     * endpoint, busy-polling {@code homa.transport.busy-poll} before they sleep where the native
     * transport runs ({@link HomaTransport#loops}); created here,
     * disposed when the context closes, after the transport. An application replaces them with a
     * {@link LoopResources} bean of the same name.
     */
    @Bean(name = LOOP_RESOURCES_BEAN, destroyMethod = "dispose")
    @ConditionalOnMissingBean(name = LOOP_RESOURCES_BEAN)
    LoopResources homaLoopResources(HomaTransportConfig config) {
        return HomaTransport.loops(config);
    }

    /** The property holding the port the endpoint bound, as {@code local.server.port} does for a web server. */
    public static final String LOCAL_PORT_PROPERTY = "local.homa.port";

    private static void publishLocalPort(Environment environment, int port) {
        if (environment instanceof ConfigurableEnvironment configurable) {
            MutablePropertySources sources = configurable.getPropertySources();
            if (sources.get("homa.ports") instanceof MapPropertySource ports) {
                ports.getSource().put(LOCAL_PORT_PROPERTY, port);
            } else {
                Map<String, Object> ports = new HashMap<>();
                ports.put(LOCAL_PORT_PROPERTY, port);
                sources.addFirst(new MapPropertySource("homa.ports", ports));
            }
        }
    }

    /**
     * Starts serving once the context is refreshed (logging the bound address and the exported
     * services), and lets RPCs in flight finish when it stops.
     */
    @Bean
    @ConditionalOnMissingBean
    HomaEndpointLifecycle homaEndpointLifecycle(HomaTransport transport, RpcDispatcher dispatcher,
            HomaProperties properties) {
        return new HomaEndpointLifecycle(transport, dispatcher, properties.getServer().getShutdownGracePeriod(),
                properties.getServer().getShutdownAckTimeout());
    }

    /**
     * The programmatic client: codec {@code homa.client.codec}, deadline
     * {@code homa.client.services.<service>[.methods.<method>].timeout}, else
     * {@code homa.client.default-timeout}, every {@link HomaClientInterceptor} bean in order
     * (outermost first). With {@code homa.client.local-services}, calls to the services this
     * application exports go to its own endpoint, unless {@code homa.client.peers} names them;
     * every other service is found by the {@link ServiceResolver} bean.
     */
    @Bean
    @ConditionalOnMissingBean
    HomaClient homaClient(HomaTransport transport, ServiceResolver resolver, PayloadCodecs codecs,
            HomaProperties properties, ObjectProvider<HomaClientInterceptor> interceptors, RpcDispatcher dispatcher) {
        HomaProperties.Client client = properties.getClient();
        String codec = client.getCodec().trim();
        if (!codecs.contains(codec)) {
            throw new InvalidConfigurationPropertyValueException("homa.client.codec", client.getCodec(),
                    "must be one of the codecs available: " + String.join(", ", codecs.names()));
        }
        return HomaClient.builder(transport)
                .resolver(LocalServiceResolver.wrap(resolver, client, dispatcher, transport.localAddress()))
                .codecs(codecs)
                .defaultCodec(codec)
                .defaultTimeout(client.getDefaultTimeout())
                .timeouts((service, method) -> HomaSettingsMapper.configuredTimeout(client, service, method))
                .streamBatchSize(client.getStreamBatchSize())
                .streamWindowBytes((int) client.getStreamWindowSize().toBytes())
                .interceptors(interceptors.orderedStream().toList())
                .build();
    }

    /** Implements {@code @HomaExchange} interfaces over the {@link HomaClient}. */
    @Bean
    @ConditionalOnMissingBean
    HomaServiceProxyFactory homaServiceProxyFactory(HomaClient client, HomaProperties properties,
            Environment environment) {
        return new HomaServiceProxyFactory(client, properties.getClient(), client.codecs().names(),
                environment::resolvePlaceholders);
    }

    /**
     * Warns at start-up of {@code homa.client.services.<service>.methods.<method>} keys that name
     * a method no declarative client of the service declares.
     */
    @Bean
    HomaClientSettingsCheck homaClientSettingsCheck(ListableBeanFactory beanFactory, HomaProperties properties,
            HomaServiceProxyFactory proxyFactory) {
        return new HomaClientSettingsCheck(beanFactory, properties.getClient(), proxyFactory);
    }

    /**
     * Registers the {@code @HomaExchange} interfaces of the application's packages, unless
     * {@code @EnableHomaClients} or {@code @ImportHomaClients} selects them.
     */
    @Configuration(proxyBeanMethods = false)
    @Import(AutoConfiguredHomaClientsRegistrar.class)
    static class HomaClientScanConfiguration {
    }

    /** Exports {@link HomaService @HomaService} beans unless {@code homa.server.enabled=false}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "homa.server.enabled", matchIfMissing = true)
    static class HomaServiceExportConfiguration {

        @Bean
        HomaServiceRegistrar homaServiceRegistrar(ListableBeanFactory beanFactory, RpcDispatcher dispatcher) {
            return new HomaServiceRegistrar(beanFactory, dispatcher);
        }

        /**
         * The reflection service {@value HomaReflectionService#SERVICE}, registered where
         * {@code homa.server.reflection.enabled} allows it (auto: bound to a loopback address, or
         * packet authentication on); its schemas follow the JSON codec's mapper.
         */
        @Bean
        HomaReflectionRegistrar homaReflectionRegistrar(RpcDispatcher dispatcher, HomaServiceRegistrar registrar,
                PayloadCodecs codecs, HomaTransport transport, HomaTransportConfig transportConfig,
                HomaProperties properties) {
            ObjectMapper schemaMapper = (codecs.contains(JsonPayloadCodec.NAME)
                    && codecs.get(JsonPayloadCodec.NAME) instanceof JacksonPayloadCodec json)
                    ? json.mapper() : JsonMapper.builder().build();
            HomaReflectionService service = new HomaReflectionService(dispatcher, schemaMapper, registrar::signature);
            return new HomaReflectionRegistrar(dispatcher, service, HomaSettingsMapper.reflectionMode(properties.getServer().getReflection()),
                    transport.localAddress(), transportConfig.security().mode());
        }
    }
}
