package io.homa.spring;

import io.homa.engine.EngineConfig;
import io.homa.engine.wire.DataHeader;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransportConfig;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Locale;
import java.util.TreeMap;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.convert.DataSizeUnit;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.util.StringUtils;
import org.springframework.util.unit.DataSize;
import org.springframework.util.unit.DataUnit;

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

    /** Longest timeout any homa.client setting accepts: one day. */
    static final Duration MAX_TIMEOUT = Duration.ofDays(1);

    private final Server server = new Server();

    private final Client client = new Client();

    private final Protocol protocol = new Protocol();

    private final Transport transport = new Transport();

    private final Security security = new Security();

    public Server getServer() {
        return this.server;
    }

    public Client getClient() {
        return this.client;
    }

    public Protocol getProtocol() {
        return this.protocol;
    }

    public Transport getTransport() {
        return this.transport;
    }

    public Security getSecurity() {
        return this.security;
    }

    /** Validates the bound values; see {@link #validate()}. */
    @Override
    public void afterPropertiesSet() {
        validate();
    }

    /**
     * Checks the values only the starter uses (server, client); the protocol and transport values
     * are checked where they are used, by the engine's and transport's config builders.
     *
     * @throws InvalidConfigurationPropertyValueException naming the first bad property, its value
     *     and its allowed range
     */
    public void validate() {
        if (!StringUtils.hasText(this.server.bindAddress)) {
            throw new InvalidConfigurationPropertyValueException(
                    "homa.server.bind-address", this.server.bindAddress, "must be a host name or IP address");
        }
        if (this.server.codecs != null) {
            checkCodecNames("homa.server.codecs", this.server.codecs);
        }
        checkDuration("homa.server.shutdown-grace-period", this.server.shutdownGracePeriod, Duration.ZERO,
                Duration.ofHours(1), "between 0s and 1h");
        checkDuration("homa.server.shutdown-ack-timeout", this.server.shutdownAckTimeout, Duration.ZERO,
                Duration.ofMinutes(1), "between 0s and 1m");
        this.server.reflection.mode();
        checkRange("homa.server.threads", this.server.threads, 1, 10_000);
        checkRange("homa.server.queue-capacity", this.server.queueCapacity, 1, 10_000_000);
        if (this.server.offloadSize == null || this.server.offloadSize.toBytes() < 0
                || this.server.offloadSize.toBytes() > EngineConfig.MAX_MESSAGE_BYTES_CAP) {
            throw new InvalidConfigurationPropertyValueException("homa.server.offload-size", this.server.offloadSize,
                    "must be between 0B and 64MB");
        }
        this.client.peerAddresses();
        checkDuration("homa.client.default-timeout", this.client.defaultTimeout, Duration.ZERO, MAX_TIMEOUT,
                "between 0 (no deadline) and 1d");
        checkRange("homa.client.stream-batch-size", this.client.streamBatchSize, 1, 65_536);
        if (!StringUtils.hasText(this.client.codec)) {
            throw new InvalidConfigurationPropertyValueException("homa.client.codec", this.client.codec,
                    "must name a codec, e.g. json, smile or cbor");
        }
        this.client.services.forEach((service, settings) -> {
            String prefix = "homa.client.services." + service;
            if (settings.timeout != null) {
                checkDuration(prefix + ".timeout", settings.timeout, Duration.ZERO, MAX_TIMEOUT,
                        "between 0 (no deadline) and 1d");
            }
            if (settings.codec != null && !StringUtils.hasText(settings.codec)) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".codec", settings.codec,
                        "must name a codec, e.g. json, smile or cbor");
            }
            settings.methods.forEach((method, methodSettings) -> {
                if (methodSettings.timeout != null) {
                    checkDuration(prefix + ".methods." + method + ".timeout", methodSettings.timeout, Duration.ZERO,
                            MAX_TIMEOUT, "between 0 (no deadline) and 1d");
                }
            });
        });
        if (this.protocol.timeoutResends != null) {
            throw new InvalidConfigurationPropertyValueException("homa.protocol.timeout-resends",
                    this.protocol.timeoutResends, "has been replaced: set homa.protocol.peer-silence-timeout (a duration,"
                    + " default 5s) instead");
        }
        if (this.transport.linkMbps != null) {
            throw new InvalidConfigurationPropertyValueException("homa.transport.link-mbps", this.transport.linkMbps,
                    "has moved: set homa.protocol.link-mbps instead");
        }
        this.protocol.resolvedLinkMbps();
        this.security.toConfig();
        // homa.protocol.*, homa.server.port and the socket buffer sizes are validated once, by the
        // engine's and the transport's config builders (HomaAutoConfiguration.transportConfig).
    }

    private static void checkRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new InvalidConfigurationPropertyValueException(name, value,
                    "must be between " + min + " and " + max);
        }
    }

    private static void checkDuration(String name, @Nullable Duration value, Duration min, Duration max,
            String range) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new InvalidConfigurationPropertyValueException(name, value, "must be " + range);
        }
    }

    private static void checkCodecNames(String name, @Nullable List<String> codecs) {
        if (codecs == null || codecs.isEmpty() || codecs.stream().anyMatch((codec) -> !StringUtils.hasText(codec))) {
            throw new InvalidConfigurationPropertyValueException(name, codecs,
                    "must list at least one codec name, e.g. json, smile, cbor");
        }
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

        /** Allowed values of homa.server.reflection.enabled. */
        static final List<String> VALUES = List.of("auto", "true", "false");

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

        /**
         * The setting, parsed: {@code null} for auto, else true or false.
         *
         * @throws InvalidConfigurationPropertyValueException naming homa.server.reflection.enabled if
         *     it is not auto, true or false
         */
        public @Nullable Boolean mode() {
            String value = (this.enabled == null) ? "" : this.enabled.trim().toLowerCase(Locale.ROOT);
            if (!VALUES.contains(value)) {
                throw new InvalidConfigurationPropertyValueException("homa.server.reflection.enabled", this.enabled,
                        "must be one of auto, true, false");
            }
            return value.equals("auto") ? null : Boolean.valueOf(value);
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
         * The timeout configured in yml for one method of a service: the method's own
         * ({@code homa.client.services.<service>.methods.<method>.timeout}), else the service's
         * ({@code homa.client.services.<service>.timeout}).
         *
         * @return the timeout ({@link Duration#ZERO} = no deadline), or {@code null} if neither is set
         */
        public @Nullable Duration configuredTimeout(String service, String method) {
            ServiceSettings settings = this.services.get(service);
            if (settings == null) {
                return null;
            }
            MethodSettings methodSettings = settings.getMethods().get(method);
            if (methodSettings != null && methodSettings.getTimeout() != null) {
                return methodSettings.getTimeout();
            }
            return settings.getTimeout();
        }

        /**
         * The codec configured in yml for a service ({@code homa.client.services.<service>.codec}).
         *
         * @return the codec name, or {@code null} if none is set
         */
        public @Nullable String configuredCodec(String service) {
            ServiceSettings settings = this.services.get(service);
            return (settings != null && StringUtils.hasText(settings.getCodec())) ? settings.getCodec().trim() : null;
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
            Map<String, List<InetSocketAddress>> addresses = new LinkedHashMap<>();
            this.peers.forEach((service, value) -> addresses.put(service, parsePeers(service, value)));
            return Collections.unmodifiableMap(addresses);
        }

        static List<InetSocketAddress> parsePeers(String service, @Nullable String value) {
            if (value == null || !StringUtils.hasText(value)) {
                return List.of(parsePeer(service, value, value));
            }
            List<InetSocketAddress> addresses = new ArrayList<>();
            for (String part : value.split(",", -1)) {
                addresses.add(parsePeer(service, part, value));
            }
            return List.copyOf(addresses);
        }

        static InetSocketAddress parsePeer(String service, @Nullable String value, @Nullable String whole) {
            String name = "homa.client.peers." + service;
            String reason = "must be one or more comma-separated host:port with a port between 1 and 65535"
                    + " (IPv6 addresses in brackets, e.g. [::1]:4000)";
            if (!StringUtils.hasText(service)) {
                throw new InvalidConfigurationPropertyValueException(name, whole, "the service name must not be empty");
            }
            if (value == null) {
                throw new InvalidConfigurationPropertyValueException(name, null, reason);
            }
            String trimmed = value.trim();
            int colon = trimmed.lastIndexOf(':');
            if (colon <= 0 || colon == trimmed.length() - 1) {
                throw new InvalidConfigurationPropertyValueException(name, whole, reason);
            }
            String host = trimmed.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            else if (host.indexOf(':') >= 0 || host.indexOf('[') >= 0 || host.indexOf(']') >= 0) {
                throw new InvalidConfigurationPropertyValueException(name, whole, reason);
            }
            int port;
            try {
                port = Integer.parseInt(trimmed.substring(colon + 1));
            }
            catch (NumberFormatException ex) {
                throw new InvalidConfigurationPropertyValueException(name, whole, reason);
            }
            if (host.isBlank() || port < 1 || port > 65535) {
                throw new InvalidConfigurationPropertyValueException(name, whole, reason);
            }
            return new InetSocketAddress(host, port);
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

    /** Protocol settings of the Homa engine (draft-ousterhout-tsvwg-homa). */
    public static class Protocol {

        /**
         * Largest IP packet, headers included, 256..65535 bytes; a DATA packet carries mtu - 84
         * message bytes.
         */
        private int mtu = 1500;

        /**
         * Bytes of each message sent before any GRANT, 1B..64MB (a plain number means bytes).
         */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize unscheduledBytes = DataSize.ofBytes(60_000);

        /**
         * Largest request or response sent or accepted, 1B..64MB (a plain number means bytes).
         */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize maxMessageSize = DataSize.ofMegabytes(1);

        /**
         * Shortest silence after which a receiver asks for missing bytes with RESEND, 1ms..60s (a
         * plain number means milliseconds). The wait is the larger of this and the peer's measured
         * SRTT + 4 x RTTVAR, doubled after each unanswered RESEND up to a fifth of
         * peer-silence-timeout (at most 1s).
         */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration resendInterval = Duration.ofMillis(10);

        /**
         * How long a peer may stay silent (no packet about any RPC held with it) before its RPCs
         * fail with UNAVAILABLE, 100ms..10m and at least twice resend-interval (a plain number
         * means milliseconds). A JVM pause, a cold start or a busy server fits in it; RESENDs to
         * a silent peer back off up to a fifth of it (at most 1s), one per peer per step.
         */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration peerSilenceTimeout = Duration.ofSeconds(5);

        /** Replaced by peer-silence-timeout; setting it fails start-up with a message saying so. */
        private @Nullable Integer timeoutResends;

        /**
         * How long a peer with nothing in progress is remembered, with its record of finished
         * rpcids that keeps late duplicates from executing again, 1s..1d; must exceed
         * 2 x peer-silence-timeout (a plain number means seconds).
         */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration peerIdleTimeout = Duration.ofSeconds(60);

        /**
         * Memory for inbound messages still arriving, 64KB..1TB; beyond it the first packet of a
         * new message is dropped (its sender retries) while messages already arriving complete.
         */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize maxInboundBuffer = DataSize.ofMegabytes(256);

        /**
         * Inbound messages granted to at once, the shortest remaining first (SRPT), 1..64: more
         * keeps the link busy when senders stall, at the cost of buffer space.
         */
        private int maxOvercommit = 8;

        /**
         * Of the messages granted to at once, at most this many from one sending peer, 1..64: more
         * than one lets several long messages from one peer (e.g. concurrent large uploads) keep
         * the link busy while one of them waits.
         */
        private int maxGrantsPerPeer = 4;

        /**
         * Cap on bytes granted (or sent unscheduled) but not yet received, over all inbound
         * messages, from one DATA packet's payload (mtu - 84 bytes) to 1GB (a plain number means
         * bytes).
         */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize maxIncoming = DataSize.ofBytes(400_000);

        /**
         * Share of granted bytes that go to the oldest inbound message instead of the shortest, so
         * that long messages do not starve, 0..0.5.
         */
        private double fifoGrantFraction = 0.05;

        /**
         * Network priority levels used, 1..8: the highest carry control packets and unscheduled
         * bytes of short messages, the lowest scheduled bytes.
         */
        private int priorityLevels = 8;

        /**
         * Outstanding client RPCs above which new requests are marked INCAST, so that their
         * responses are mostly sent only when granted, 1..1000000.
         */
        private int incastThreshold = 64;

        /**
         * Bytes of the response to an INCAST-marked request sent before any GRANT, 0B..64MB (a
         * plain number means bytes); never more than unscheduled-bytes.
         */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize incastUnscheduledBytes = DataSize.ofBytes(400);

        /**
         * The buffer a client's fan-out may fill with the unscheduled heads of its responses,
         * 0B..1GB (a plain number means bytes): a request leaving with k RPCs outstanding (past
         * incast-threshold) lets its response start with this / k bytes, at least
         * incast-unscheduled-bytes. Set it to the port buffer of the switch in front of the
         * clients. Unset (the default): 4 x receive-buffer-size when bound to a loopback address,
         * 2MB otherwise; 0: every marked response starts with incast-unscheduled-bytes.
         */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize incastBufferBytes;

        /**
         * Whether a server sends a client address at most 3x the bytes it received from it until
         * the client echoes the server's address token (QUIC's anti-amplification rule): forged
         * requests or RESENDs from a spoofed address cannot aim responses at it. Clients of this
         * framework pass in their first round trip; turn it off only for clients that know only
         * the draft, which never echo and would be held to 3x.
         */
        private boolean addressValidation = true;

        /**
         * Pacer rate (Homa's link_mbps) in megabits per second, 0..1000000 (0 = no pacing), or
         * auto: the endpoint hands packets to the kernel no faster than this, so that its own
         * queue, not the socket's, holds the backlog, in SRPT order, and loopback receivers are not
         * overrun. auto (the default): the speed the bound device reports (Linux
         * /sys/class/net/DEVICE/speed), else 10000 (loopback, the wildcard address, devices that
         * report none) and 25000 bound to a loopback address (no wire there: what two JVMs carry);
         * the start-up log's data path says which. An explicit value always wins.
         */
        private String linkMbps = "auto";

        /**
         * How far a receiver grants each inbound message ahead of what has arrived (Homa's
         * rtt_bytes), 0B..64MB (a plain number means bytes); never less than unscheduled-bytes or
         * two full packets. Granted bytes wait in the receiver's queues ahead of short messages
         * that arrive later. Unset (the default): 125000B bound to a loopback address, else what
         * link-mbps carries in 100us (the round trip between two JVM endpoints); 0 the same.
         */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize rttBytes;

        /**
         * How far the pacer may run ahead of the link (Homa's max_nic_queue_ns), as time at
         * link-mbps, 1us..10ms (a plain number means nanoseconds): bytes handed to the kernel but
         * not yet sent, behind which a new short message would wait. Control packets and
         * one-packet messages bypass the pacer.
         */
        @DurationUnit(ChronoUnit.NANOS)
        private Duration maxNicQueue = Duration.ofNanos(50_000);

        public String getLinkMbps() {
            return this.linkMbps;
        }

        public void setLinkMbps(String linkMbps) {
            this.linkMbps = linkMbps;
        }

        /**
         * {@code link-mbps} for the transport: {@link io.homa.reactive.HomaTransportConfig#AUTO_LINK_MBPS}
         * for {@code auto}, else the number (its range is checked by the transport's config).
         *
         * @throws InvalidConfigurationPropertyValueException if it is neither auto nor a whole number
         */
        int resolvedLinkMbps() {
            String value = this.linkMbps == null ? "auto" : this.linkMbps.trim();
            if (value.equalsIgnoreCase("auto")) {
                return io.homa.reactive.HomaTransportConfig.AUTO_LINK_MBPS;
            }
            int mbps;
            try {
                mbps = Integer.parseInt(value);
            } catch (NumberFormatException e) {
                mbps = -1;
            }
            if (mbps < 0) {
                throw new InvalidConfigurationPropertyValueException("homa.protocol.link-mbps", this.linkMbps,
                        "must be auto or a whole number of Mbit/s between 0 and 1000000 (0 = no pacing)");
            }
            return mbps;
        }

        public Duration getMaxNicQueue() {
            return this.maxNicQueue;
        }

        public void setMaxNicQueue(Duration maxNicQueue) {
            this.maxNicQueue = maxNicQueue;
        }

        public int getMaxOvercommit() {
            return this.maxOvercommit;
        }

        public void setMaxOvercommit(int maxOvercommit) {
            this.maxOvercommit = maxOvercommit;
        }

        public int getMaxGrantsPerPeer() {
            return this.maxGrantsPerPeer;
        }

        public void setMaxGrantsPerPeer(int maxGrantsPerPeer) {
            this.maxGrantsPerPeer = maxGrantsPerPeer;
        }

        public DataSize getMaxIncoming() {
            return this.maxIncoming;
        }

        public void setMaxIncoming(DataSize maxIncoming) {
            this.maxIncoming = maxIncoming;
        }

        public double getFifoGrantFraction() {
            return this.fifoGrantFraction;
        }

        public void setFifoGrantFraction(double fifoGrantFraction) {
            this.fifoGrantFraction = fifoGrantFraction;
        }

        public int getPriorityLevels() {
            return this.priorityLevels;
        }

        public void setPriorityLevels(int priorityLevels) {
            this.priorityLevels = priorityLevels;
        }

        public int getIncastThreshold() {
            return this.incastThreshold;
        }

        public void setIncastThreshold(int incastThreshold) {
            this.incastThreshold = incastThreshold;
        }

        public DataSize getIncastUnscheduledBytes() {
            return this.incastUnscheduledBytes;
        }

        public void setIncastUnscheduledBytes(DataSize incastUnscheduledBytes) {
            this.incastUnscheduledBytes = incastUnscheduledBytes;
        }

        public DataSize getRttBytes() {
            return this.rttBytes;
        }

        public void setRttBytes(DataSize rttBytes) {
            this.rttBytes = rttBytes;
        }

        public DataSize getIncastBufferBytes() {
            return this.incastBufferBytes;
        }

        public void setIncastBufferBytes(DataSize incastBufferBytes) {
            this.incastBufferBytes = incastBufferBytes;
        }

        public boolean isAddressValidation() {
            return this.addressValidation;
        }

        public void setAddressValidation(boolean addressValidation) {
            this.addressValidation = addressValidation;
        }

        public Duration getPeerIdleTimeout() {
            return this.peerIdleTimeout;
        }

        public void setPeerIdleTimeout(Duration peerIdleTimeout) {
            this.peerIdleTimeout = peerIdleTimeout;
        }

        public DataSize getMaxInboundBuffer() {
            return this.maxInboundBuffer;
        }

        public void setMaxInboundBuffer(DataSize maxInboundBuffer) {
            this.maxInboundBuffer = maxInboundBuffer;
        }

        public int getMtu() {
            return this.mtu;
        }

        public void setMtu(int mtu) {
            this.mtu = mtu;
        }

        public DataSize getUnscheduledBytes() {
            return this.unscheduledBytes;
        }

        public void setUnscheduledBytes(DataSize unscheduledBytes) {
            this.unscheduledBytes = unscheduledBytes;
        }

        public DataSize getMaxMessageSize() {
            return this.maxMessageSize;
        }

        public void setMaxMessageSize(DataSize maxMessageSize) {
            this.maxMessageSize = maxMessageSize;
        }

        public Duration getResendInterval() {
            return this.resendInterval;
        }

        public void setResendInterval(Duration resendInterval) {
            this.resendInterval = resendInterval;
        }

        public Duration getPeerSilenceTimeout() {
            return this.peerSilenceTimeout;
        }

        public void setPeerSilenceTimeout(Duration peerSilenceTimeout) {
            this.peerSilenceTimeout = peerSilenceTimeout;
        }

        /**
         * Replaced by peer-silence-timeout.
         *
         * @return the value set under the old name, or null
         */
        @Deprecated(since = "0.1.0")
        @DeprecatedConfigurationProperty(replacement = "homa.protocol.peer-silence-timeout",
                reason = "Failure on silence is a wall-clock budget, not a count of 10 ms RESENDs.")
        public @Nullable Integer getTimeoutResends() {
            return this.timeoutResends;
        }

        @Deprecated(since = "0.1.0")
        public void setTimeoutResends(@Nullable Integer timeoutResends) {
            this.timeoutResends = timeoutResends;
        }
    }

    /** Settings of the UDP socket under the engine. */
    public static class Transport {

        /**
         * Socket receive buffer (SO_RCVBUF), 64KB..1GB; the kernel caps it at
         * net.core.rmem_max. Loopback drops datagrams when it overflows.
         */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize receiveBufferSize = DataSize.ofMegabytes(4);

        /** Socket send buffer (SO_SNDBUF), 64KB..1GB; the kernel caps it at net.core.wmem_max. */
        @DataSizeUnit(DataUnit.BYTES)
        private DataSize sendBufferSize = DataSize.ofMegabytes(4);

        /**
         * Whether to use Netty's native epoll transport when it is available (Linux); NIO
         * otherwise.
         */
        private boolean nativeTransport = true;

        /**
         * Whether a transport bound to one address (homa.server.bind-address other than 0.0.0.0
         * or ::) sizes its packets by that interface's MTU, capped at 65535 (loopback: 64 KB
         * datagrams instead of 1500-byte ones), instead of homa.protocol.mtu. A receiver reads
         * datagrams of any size, so endpoints with different settings talk. As Linux Homa, which
         * sizes packets by the route's device.
         */
        private boolean deviceMtu = true;

        /**
         * Whether to send consecutive equal-length packets to one peer in one UDP GSO send
         * (UDP_SEGMENT: each segment a whole Homa packet, at most max-nic-queue at link-mbps per
         * send; a packet longer than half of that goes alone) and receive with UDP_GRO, on Linux
         * with the native transport. What makes a 1500-byte MTU fast: a 1 MiB message is about 17
         * sends instead of 741 system calls; on loopback a burst of short responses to one client
         * is one send and one read.
         * Ignored where the kernel or transport lacks it (NIO, macOS); the start-up line says
         * which path is on.
         */
        private boolean segmentationOffload = true;

        /**
         * How long the endpoint's event loop keeps polling its socket once it has run out of
         * work, yielding the core between polls, before it sleeps, 0..1ms; 0 turns it off. A
         * datagram that arrives meanwhile is read without a wake-up, which on a virtual machine
         * costs tens of microseconds on each side of a round trip (Linux Homa polls 50us for
         * the same reason). The price is CPU, counted against a container's CPU quota: up to
         * this long after every burst of traffic. Native transport only; the start-up line says
         * whether it is on.
         */
        private Duration busyPoll = Duration.ofNanos(50_000);

        public Duration getBusyPoll() {
            return this.busyPoll;
        }

        public void setBusyPoll(Duration busyPoll) {
            this.busyPoll = busyPoll;
        }

        /** Moved to homa.protocol.link-mbps; setting it fails start-up with a message saying so. */
        private @Nullable Integer linkMbps;

        /**
         * Moved to homa.protocol.link-mbps.
         *
         * @return the value set under the old name, or null
         */
        @Deprecated(since = "0.1.0")
        @DeprecatedConfigurationProperty(replacement = "homa.protocol.link-mbps",
                reason = "The pacer's rate is a protocol setting (draft section Pacing).")
        public @Nullable Integer getLinkMbps() {
            return this.linkMbps;
        }

        @Deprecated(since = "0.1.0")
        public void setLinkMbps(@Nullable Integer linkMbps) {
            this.linkMbps = linkMbps;
        }

        /**
         * Whether each packet carries its Homa priority (0-7, control packets 7) in the IP TOS
         * byte as priority << 5 (DSCP class selectors CS0-CS7), for switches with priority queues:
         * on, off, or auto (on unless bound to a loopback address, where nothing reads it).
         * true and false mean on and off.
         */
        private HomaTransportConfig.PriorityTos priorityTos = HomaTransportConfig.PriorityTos.AUTO;

        public HomaTransportConfig.PriorityTos getPriorityTos() {
            return this.priorityTos;
        }

        public void setPriorityTos(HomaTransportConfig.PriorityTos priorityTos) {
            this.priorityTos = priorityTos;
        }

        public boolean isDeviceMtu() {
            return this.deviceMtu;
        }

        public void setDeviceMtu(boolean deviceMtu) {
            this.deviceMtu = deviceMtu;
        }

        public boolean isSegmentationOffload() {
            return this.segmentationOffload;
        }

        public void setSegmentationOffload(boolean segmentationOffload) {
            this.segmentationOffload = segmentationOffload;
        }

        public DataSize getReceiveBufferSize() {
            return this.receiveBufferSize;
        }

        public void setReceiveBufferSize(DataSize receiveBufferSize) {
            this.receiveBufferSize = receiveBufferSize;
        }

        public DataSize getSendBufferSize() {
            return this.sendBufferSize;
        }

        public void setSendBufferSize(DataSize sendBufferSize) {
            this.sendBufferSize = sendBufferSize;
        }

        public boolean isNative() {
            return this.nativeTransport;
        }

        public void setNative(boolean nativeTransport) {
            this.nativeTransport = nativeTransport;
        }
    }
    /**
     * Packet authentication (issue 14, item 2), {@code homa.security.*}: every datagram sealed with
     * AES-256-GCM under a pre-shared key. See {@link HomaSecurityConfig} for the wire format and
     * the key rotation steps.
     */
    public static class Security {

        /** Allowed values of homa.security.mode. */
        static final List<String> MODES = List.of("off", "authenticate", "encrypt");

        /**
         * Packet authentication: off (plain Homa packets, as the draft has them), authenticate
         * (a 41-byte trailer with an AES-256-GCM tag over each packet and its addresses; a peer
         * without the key cannot talk to this endpoint, its packets are dropped and counted), or
         * encrypt (as authenticate, and the packet's header and payload are encrypted).
         */
        private String mode = "off";

        /**
         * Pre-shared keys: key id (0-255) to the base64 of a 32-byte key (e.g. from "openssl rand
         * -base64 32"). Every key listed is accepted; homa.security.active-key sends. Rotate by
         * adding the new key everywhere, then switching the active key, then removing the old one.
         */
        private Map<String, String> keys = new LinkedHashMap<>();

        /** Id of the key that seals the packets this endpoint sends; required unless the mode is off. */
        private @Nullable Integer activeKey;

        public String getMode() {
            return this.mode;
        }

        public void setMode(String mode) {
            this.mode = mode;
        }

        public Map<String, String> getKeys() {
            return this.keys;
        }

        public void setKeys(Map<String, String> keys) {
            this.keys = keys;
        }

        public @Nullable Integer getActiveKey() {
            return this.activeKey;
        }

        public void setActiveKey(@Nullable Integer activeKey) {
            this.activeKey = activeKey;
        }

        /**
         * These properties as the transport's security settings.
         *
         * @throws InvalidConfigurationPropertyValueException naming the first bad property (a key's
         *     value is never shown, only its length) and what it allows
         */
        public HomaSecurityConfig toConfig() {
            String modeValue = this.mode == null ? "" : this.mode.trim().toLowerCase(Locale.ROOT);
            if (!MODES.contains(modeValue)) {
                throw new InvalidConfigurationPropertyValueException("homa.security.mode", this.mode,
                        "must be one of off, authenticate, encrypt");
            }
            HomaSecurityConfig.Mode parsedMode = HomaSecurityConfig.Mode.valueOf(modeValue.toUpperCase(Locale.ROOT));
            Map<Integer, byte[]> parsed = new TreeMap<>();
            this.keys.forEach((id, value) -> {
                String property = "homa.security.keys." + id;
                int keyId;
                try {
                    keyId = Integer.parseInt(id.trim());
                } catch (NumberFormatException ex) {
                    keyId = -1;
                }
                if (keyId < 0 || keyId > HomaSecurityConfig.MAX_KEY_ID) {
                    throw new InvalidConfigurationPropertyValueException(property, redacted(value),
                            "key id (after homa.security.keys.) must be between 0 and " + HomaSecurityConfig.MAX_KEY_ID);
                }
                byte[] key;
                try {
                    key = Base64.getDecoder().decode(value == null ? "" : value.trim());
                } catch (IllegalArgumentException ex) {
                    throw new InvalidConfigurationPropertyValueException(property, redacted(value),
                            "must be the base64 of a " + HomaSecurityConfig.KEY_BYTES
                                    + "-byte key (e.g. from openssl rand -base64 32), was not base64");
                }
                if (key.length != HomaSecurityConfig.KEY_BYTES) {
                    throw new InvalidConfigurationPropertyValueException(property, redacted(value),
                            "must be the base64 of a " + HomaSecurityConfig.KEY_BYTES
                                    + "-byte key (e.g. from openssl rand -base64 32), was " + key.length + " bytes");
                }
                if (parsed.put(keyId, key) != null) {
                    throw new InvalidConfigurationPropertyValueException(property, redacted(value),
                            "names key id " + keyId + " twice");
                }
            });
            Integer active = this.activeKey;
            if (active != null && (active < 0 || active > HomaSecurityConfig.MAX_KEY_ID)) {
                throw new InvalidConfigurationPropertyValueException("homa.security.active-key", active,
                        "must be between 0 and " + HomaSecurityConfig.MAX_KEY_ID);
            }
            if (parsedMode != HomaSecurityConfig.Mode.OFF) {
                if (parsed.isEmpty()) {
                    throw new InvalidConfigurationPropertyValueException("homa.security.keys", this.keys,
                            "must hold at least one key (homa.security.keys.<key-id>=<base64 of " + HomaSecurityConfig.KEY_BYTES
                                    + " bytes>, key id between 0 and 255) when homa.security.mode is " + modeValue);
                }
                if (active == null || !parsed.containsKey(active)) {
                    throw new InvalidConfigurationPropertyValueException("homa.security.active-key", active,
                            "must be the id of one of the keys in homa.security.keys " + parsed.keySet()
                                    + " when homa.security.mode is " + modeValue);
                }
            }
            return new HomaSecurityConfig(parsedMode, parsed,
                    active == null ? HomaSecurityConfig.NO_ACTIVE_KEY : active);
        }

        /** A key's value as error messages show it: never the value itself. */
        private static String redacted(@Nullable String value) {
            return "<redacted, " + (value == null ? 0 : value.length()) + " characters>";
        }
    }
}
