package io.homa.spring;

import io.homa.spring.internal.HomaSettingsMapper;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of the Homa endpoint, the services it exports and the peers it calls, under
 * {@code homa.*}.
 *
 * <p>Every value is checked once it is bound: a bad one fails start-up with an
 * {@link InvalidConfigurationPropertyValueException} that names the full property (for example
 * {@code homa.protocol.mtu}) and its allowed range.
 */
@ConfigurationProperties("homa")
public class HomaProperties implements InitializingBean {

    private final Server server = new Server();

    private final Client client = new Client();

    @NestedConfigurationProperty
    private final HomaProtocolProperties protocol = new HomaProtocolProperties();

    @NestedConfigurationProperty
    private final HomaTransportProperties transport = new HomaTransportProperties();

    @NestedConfigurationProperty
    private final HomaSecurityProperties security = new HomaSecurityProperties();

    public Server getServer() {
        return this.server;
    }

    public Client getClient() {
        return this.client;
    }

    public HomaProtocolProperties getProtocol() {
        return this.protocol;
    }

    public HomaTransportProperties getTransport() {
        return this.transport;
    }

    public HomaSecurityProperties getSecurity() {
        return this.security;
    }

    /** Checks the values once they are bound; see {@link #validate()}. */
    @Override
    public void afterPropertiesSet() {
        validate();
    }

    /**
     * Checks the values only the starter uses (server, client, security); the protocol and
     * transport values are checked where they are used, by the engine's and transport's config
     * builders.
     *
     * @throws InvalidConfigurationPropertyValueException naming the first bad property, its value
     *     and its allowed range
     */
    public void validate() {
        HomaSettingsMapper.validate(this);
    }

    /** The local endpoint: where the UDP socket binds and whether {@code @HomaService} beans are exported. */
    public static class Server {

        /** Default Homa (= UDP) port. */
        public static final int DEFAULT_PORT = 4000;

        /**
         * UDP port (= Homa port) the endpoint binds to, 0..65535; 0 picks a free (ephemeral) port.
         */
        private int port = DEFAULT_PORT;

        /** Host name or IP address the UDP socket binds to. */
        private String bindAddress = "0.0.0.0";

        /**
         * Whether to export the methods of @HomaService beans. The endpoint binds either way, since
         * clients need a socket too.
         */
        private boolean enabled = true;

        private final Reflection reflection = new Reflection();

        public Reflection getReflection() {
            return this.reflection;
        }

        public int getPort() {
            return this.port;
        }

        public void setPort(int port) {
            this.port = port;
        }

        public String getBindAddress() {
            return this.bindAddress;
        }

        public void setBindAddress(String bindAddress) {
            this.bindAddress = bindAddress;
        }

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * Codecs the server accepts, by name, from the registry of codecs: json, smile and cbor
         * when their Jackson dataformat (tools.jackson.dataformat:jackson-dataformat-smile,
         * -cbor) is on the classpath, and PayloadCodec beans. Default: every codec of the
         * registry. It answers each request in the request's codec; a request in a codec not
         * listed gets INVALID_ARGUMENT.
         */
        private @Nullable List<String> codecs;

        /**
         * How long shutdown waits for RPCs in flight to finish, 0s..1h (a plain number means
         * seconds). From the start of shutdown new requests get UNAVAILABLE; keep it below
         * spring.lifecycle.timeout-per-shutdown-phase (30s by default).
         */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration shutdownGracePeriod = Duration.ofSeconds(10);

        /**
         * How much longer than shutdown-grace-period shutdown waits, at most, for the responses
         * to be acknowledged, 0s..1m (a plain number means seconds). Meanwhile the endpoint keeps
         * answering RESENDs and sending NEED_ACKs, and refuses new requests unexecuted (their
         * clients fail with UNAVAILABLE at once, not with a timeout).
         */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration shutdownAckTimeout = Duration.ofSeconds(2);

        /**
         * Threads of the scheduler that runs blocking methods (those returning a plain value or
         * void) and decodes long requests, 1..10000; default 10 per processor. Methods returning
         * Mono, Flux or CompletionStage run on the event loop and must not block. With
         * spring.threads.virtual.enabled=true on JDK 21+ a virtual thread per call is used instead.
         */
        private int threads = 10 * Runtime.getRuntime().availableProcessors();

        /**
         * Calls that may wait for a thread of that scheduler, per thread, 1..10000000; a call
         * beyond it is answered RESOURCE_EXHAUSTED.
         */
        private int queueCapacity = 100_000;

        /**
         * Longest request (bytes) decoded on the event loop; a longer one is decoded, run and
         * encoded on the scheduler, so the event loop keeps answering the protocol. 0B..64MB.
         */
        private DataSize offloadSize = DataSize.ofKilobytes(16);

        /**
         * Most bytes a client may keep in flight on one stream in each direction, 0B..64MB: the
         * batch requests of a server stream (each counted at the stream batch limit, 512KB) and the
         * pushes of a request stream. Pushes that arrive ahead of their turn wait on the server, so
         * this also bounds what one channel holds. A client uses the smaller of this and its own
         * homa.client.stream-window-size.
         */
        private DataSize streamWindowSize = DataSize.ofMegabytes(8);

        /**
         * Most calls in service (unary calls and stream opens from their arrival until their
         * response, on the event loop or on a thread): with this many in service the server
         * refuses new requests before decoding them, and their callers fail with UNAVAILABLE
         * "server overloaded: not executed", which is safe to retry. 1..1000000; default
         * 4 x (threads + event loops), at least 128.
         */
        private @Nullable Integer maxCallsInService;

        /**
         * Most calls of blocking methods in service (each running on a thread of the scheduler or
         * waiting for one): with this many the server refuses new requests before decoding them, as
         * for max-calls-in-service, so a call that is admitted waits behind a few others only.
         * 1..1000000; default 4 x threads (with virtual threads, max-calls-in-service). For
         * CPU-bound methods set threads to the number of cores, so that this bound keeps the
         * latency under overload within a few service times.
         */
        private @Nullable Integer maxBlockingCalls;

        /**
         * Longest wait of work (a blocking method, a long request to decode) for a thread of the
         * scheduler: while the oldest queued work has waited longer, the server refuses new
         * requests before decoding them, as for max-calls-in-service. 0ms..1m (a plain number means
         * milliseconds; 0 = no bound).
         */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration maxQueueDelay = Duration.ofMillis(50);

        public @Nullable Integer getMaxCallsInService() {
            return this.maxCallsInService;
        }

        public void setMaxCallsInService(@Nullable Integer maxCallsInService) {
            this.maxCallsInService = maxCallsInService;
        }

        public @Nullable Integer getMaxBlockingCalls() {
            return this.maxBlockingCalls;
        }

        public void setMaxBlockingCalls(@Nullable Integer maxBlockingCalls) {
            this.maxBlockingCalls = maxBlockingCalls;
        }

        public Duration getMaxQueueDelay() {
            return this.maxQueueDelay;
        }

        public void setMaxQueueDelay(Duration maxQueueDelay) {
            this.maxQueueDelay = maxQueueDelay;
        }

        public int getThreads() {
            return this.threads;
        }

        public void setThreads(int threads) {
            this.threads = threads;
        }

        public int getQueueCapacity() {
            return this.queueCapacity;
        }

        public void setQueueCapacity(int queueCapacity) {
            this.queueCapacity = queueCapacity;
        }

        public DataSize getOffloadSize() {
            return this.offloadSize;
        }

        public void setOffloadSize(DataSize offloadSize) {
            this.offloadSize = offloadSize;
        }

        public DataSize getStreamWindowSize() {
            return this.streamWindowSize;
        }

        public void setStreamWindowSize(DataSize streamWindowSize) {
            this.streamWindowSize = streamWindowSize;
        }

        /** The codecs set in {@code homa.server.codecs}, or {@code null} (every codec of the registry) when unset. */
        public @Nullable List<String> getCodecs() {
            return this.codecs;
        }

        public void setCodecs(@Nullable List<String> codecs) {
            this.codecs = codecs;
        }

        public Duration getShutdownGracePeriod() {
            return this.shutdownGracePeriod;
        }

        public void setShutdownGracePeriod(Duration shutdownGracePeriod) {
            this.shutdownGracePeriod = shutdownGracePeriod;
        }

        public Duration getShutdownAckTimeout() {
            return this.shutdownAckTimeout;
        }

        public void setShutdownAckTimeout(Duration shutdownAckTimeout) {
            this.shutdownAckTimeout = shutdownAckTimeout;
        }
    }

    /**
     * The built-in reflection service (homa.reflection), which lists the exported services and
     * methods with the JSON Schemas of their parameters and results, for tools such as the homa
     * command-line client.
     */
    public static class Reflection {

        /**
         * Whether to serve the reflection service homa.reflection: auto (on where only trusted
         * callers reach the endpoint: it is bound to a loopback address, or homa.security.mode is
         * authenticate or encrypt), true or false.
         */
        private String enabled = "auto";

        public String getEnabled() {
            return this.enabled;
        }

        public void setEnabled(String enabled) {
            this.enabled = enabled;
        }
    }

    /**
     * The calling side: where each remote service lives, and the deadline and codec of calls.
     *
     * <p>Deadline of a declarative call, first set wins: {@code homa.client.services.<s>.methods.<m>.timeout},
     * {@code homa.client.services.<s>.timeout}, {@code @HomaMethod(timeout)}, {@code @HomaExchange(timeout)},
     * {@code homa.client.default-timeout}. Codec: {@code homa.client.services.<s>.codec},
     * {@code @HomaExchange(codec)}, {@code homa.client.codec}.
     */
    public static class Client {

        /**
         * Endpoints of each remote service, as service name to comma-separated "host:port" values
         * (IPv6 in brackets: "[::1]:4000"); calls rotate over them. Service names containing dots
         * are written in brackets: homa.client.peers[io.example.Echo]=host:4000,host2:4000.
         */
        private Map<String, String> peers = new LinkedHashMap<>();

        /**
         * Deadline of every call that sets none itself, 0s..1d (a plain number means
         * milliseconds; 0 = no deadline). It travels with the request, so the server stops
         * working on it too; a call past it fails with DEADLINE_EXCEEDED.
         */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration defaultTimeout = Duration.ofSeconds(10);

        /**
         * Codec of calls that name none, by name: json, smile or cbor (each of these two needs its
         * Jackson dataformat on the classpath), or the name of a PayloadCodec bean.
         */
        private String codec = "json";

        /**
         * Settings per remote service, by service name (names containing dots in brackets:
         * homa.client.services[io.example.Kv].timeout=2s): timeout, codec, and
         * methods.<method>.timeout per method.
         */
        private Map<String, ServiceSettings> services = new LinkedHashMap<>();

        /**
         * Most items one batch of a server stream (a Flux result) asks for, 1..65536; the client
         * asks for fewer when its subscriber demands fewer.
         */
        private int streamBatchSize = 256; // HomaClient.DEFAULT_STREAM_BATCH_SIZE, as a literal for the metadata

        /**
         * Bytes a stream keeps in flight in each direction, 0B..64MB: the batch requests of a
         * server stream (each counted at the server's batch limit, 512KB by default) and the pushes
         * of a request stream. Size it to the bandwidth-delay product of the path, counting a batch's
         * encoding and decoding in the delay; below one batch, one batch request and one push are in
         * flight at a time. The server may allow less (homa.server.stream-window-size, 8MB).
         * Backpressure does not depend on it: a stream never asks for more items than its
         * subscriber demanded, nor pushes more than the server's method asked for.
         */
        private DataSize streamWindowSize = DataSize.ofMegabytes(2);

        /**
         * Services this application calls on its own endpoint instead of resolving them: service
         * names, or * for every service it exports. Only services it exports go there; a service
         * in homa.client.peers still goes to its peers. Empty (the default): none. Tests annotated
         * with @AutoConfigureHomaTest (homa-spring-boot-test) get *.
         */
        private List<String> localServices = new ArrayList<>();

        public List<String> getLocalServices() {
            return this.localServices;
        }

        public void setLocalServices(List<String> localServices) {
            this.localServices = localServices;
        }

        public int getStreamBatchSize() {
            return this.streamBatchSize;
        }

        public void setStreamBatchSize(int streamBatchSize) {
            this.streamBatchSize = streamBatchSize;
        }

        public DataSize getStreamWindowSize() {
            return this.streamWindowSize;
        }

        public void setStreamWindowSize(DataSize streamWindowSize) {
            this.streamWindowSize = streamWindowSize;
        }

        public Map<String, String> getPeers() {
            return this.peers;
        }

        public void setPeers(Map<String, String> peers) {
            this.peers = peers;
        }

        public Duration getDefaultTimeout() {
            return this.defaultTimeout;
        }

        public void setDefaultTimeout(Duration defaultTimeout) {
            this.defaultTimeout = defaultTimeout;
        }

        public String getCodec() {
            return this.codec;
        }

        public void setCodec(String codec) {
            this.codec = codec;
        }

        public Map<String, ServiceSettings> getServices() {
            return this.services;
        }

        public void setServices(Map<String, ServiceSettings> services) {
            this.services = services;
        }

        /**
         * Parses {@link #getPeers()}. Host names are resolved now, once; a name that does not
         * resolve stays unresolved (calls to it then fail).
         *
         * @return service name to its endpoints (at least one each, in the order written), in
         *     configuration order, unmodifiable
         * @throws InvalidConfigurationPropertyValueException naming {@code homa.client.peers.<service>}
         *     if an entry is not a comma-separated list of {@code host:port} with ports in 1..65535
         */
        public Map<String, List<InetSocketAddress>> peerAddresses() {
            return HomaSettingsMapper.peerAddresses(this);
        }

        /** Settings of calls to one remote service. */
        public static class ServiceSettings {

            /**
             * Deadline of calls to this service, 0s..1d (0 = none); overrides annotations and
             * homa.client.default-timeout.
             */
            @DurationUnit(ChronoUnit.MILLIS)
            private @Nullable Duration timeout;

            /** Codec of calls to this service; overrides @HomaExchange(codec) and homa.client.codec. */
            private @Nullable String codec;

            /** Settings per method of this service, by RPC method name. */
            private Map<String, MethodSettings> methods = new LinkedHashMap<>();

            public @Nullable Duration getTimeout() {
                return this.timeout;
            }

            public void setTimeout(@Nullable Duration timeout) {
                this.timeout = timeout;
            }

            public @Nullable String getCodec() {
                return this.codec;
            }

            public void setCodec(@Nullable String codec) {
                this.codec = codec;
            }

            public Map<String, MethodSettings> getMethods() {
                return this.methods;
            }

            public void setMethods(Map<String, MethodSettings> methods) {
                this.methods = methods;
            }
        }

        /** Settings of calls to one method of a remote service. */
        public static class MethodSettings {

            /** Deadline of calls to this method, 0s..1d (0 = none); overrides every other setting. */
            @DurationUnit(ChronoUnit.MILLIS)
            private @Nullable Duration timeout;

            public @Nullable Duration getTimeout() {
                return this.timeout;
            }

            public void setTimeout(@Nullable Duration timeout) {
                this.timeout = timeout;
            }
        }
    }
}
