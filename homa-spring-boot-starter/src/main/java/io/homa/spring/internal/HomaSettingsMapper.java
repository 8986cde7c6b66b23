package io.homa.spring.internal;

import io.homa.engine.CongestionControl;
import io.homa.engine.EngineConfig;
import io.homa.engine.InvalidSettingException;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.spring.HomaProperties;
import io.homa.spring.HomaProtocolProperties;
import io.homa.spring.HomaSecurityProperties;
import io.homa.spring.HomaTransportProperties;
import io.homa.spring.LinkSpeed;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.StringUtils;
import org.springframework.util.unit.DataSize;

/**
 * The bound {@code homa.*} properties turned into the settings of the engine, the transport and
 * packet authentication, and the checks of the values only the starter uses. Every failure names
 * the property, its value as written and what it allows.
 */
public final class HomaSettingsMapper {

    /** Longest timeout any homa.client setting accepts: one day. */
    public static final Duration MAX_TIMEOUT = Duration.ofDays(1);

    /** Allowed values of homa.server.reflection.enabled. */
    static final List<String> REFLECTION_VALUES = List.of("auto", "true", "false");

    /** Allowed values of homa.security.mode. */
    static final List<String> SECURITY_MODES = List.of("off", "authenticate", "encrypt");

    private HomaSettingsMapper() {
    }

    /**
     * Checks the values only the starter uses (server, client); the protocol and transport values
     * are checked where they are used, by the engine's and transport's config builders.
     *
     * @throws InvalidConfigurationPropertyValueException naming the first bad property, its value
     *     and its allowed range
     */
    @SuppressWarnings("deprecation") // reads the replaced properties to fail start-up when they are set
    public static void validate(HomaProperties properties) {
        HomaProperties.Server server = properties.getServer();
        HomaProperties.Client client = properties.getClient();
        if (!StringUtils.hasText(server.getBindAddress())) {
            throw new InvalidConfigurationPropertyValueException(
                    "homa.server.bind-address", server.getBindAddress(), "must be a host name or IP address");
        }
        if (server.getCodecs() != null) {
            checkCodecNames("homa.server.codecs", server.getCodecs());
        }
        checkDuration("homa.server.shutdown-grace-period", server.getShutdownGracePeriod(), Duration.ZERO,
                Duration.ofHours(1), "between 0s and 1h");
        checkDuration("homa.server.shutdown-ack-timeout", server.getShutdownAckTimeout(), Duration.ZERO,
                Duration.ofMinutes(1), "between 0s and 1m");
        reflectionMode(server.getReflection());
        checkRange("homa.server.threads", server.getThreads(), 1, 10_000);
        checkRange("homa.server.queue-capacity", server.getQueueCapacity(), 1, 10_000_000);
        if (server.getMaxCallsInService() != null) {
            checkRange("homa.server.max-calls-in-service", server.getMaxCallsInService(), 1,
                    RpcDispatcher.MAX_CALLS_IN_SERVICE);
        }
        if (server.getMaxBlockingCalls() != null) {
            checkRange("homa.server.max-blocking-calls", server.getMaxBlockingCalls(), 1,
                    RpcDispatcher.MAX_CALLS_IN_SERVICE);
        }
        checkDuration("homa.server.max-queue-delay", server.getMaxQueueDelay(), Duration.ZERO,
                RpcDispatcher.MAX_QUEUE_DELAY, "between 0ms (no bound) and 1m");
        DataSize offloadSize = server.getOffloadSize();
        if (offloadSize == null || offloadSize.toBytes() < 0
                || offloadSize.toBytes() > EngineConfig.MAX_MESSAGE_BYTES_CAP) {
            throw new InvalidConfigurationPropertyValueException("homa.server.offload-size", offloadSize,
                    "must be between 0B and 64MB");
        }
        checkStreamWindow("homa.server.stream-window-size", server.getStreamWindowSize());
        peerAddresses(client);
        checkDuration("homa.client.default-timeout", client.getDefaultTimeout(), Duration.ZERO, MAX_TIMEOUT,
                "between 0 (no deadline) and 1d");
        checkRange("homa.client.stream-batch-size", client.getStreamBatchSize(), 1, 65_536);
        checkStreamWindow("homa.client.stream-window-size", client.getStreamWindowSize());
        if (!StringUtils.hasText(client.getCodec())) {
            throw new InvalidConfigurationPropertyValueException("homa.client.codec", client.getCodec(),
                    "must name a codec, e.g. json, smile or cbor");
        }
        client.getServices().forEach((service, settings) -> {
            String prefix = "homa.client.services." + service;
            if (settings.getTimeout() != null) {
                checkDuration(prefix + ".timeout", settings.getTimeout(), Duration.ZERO, MAX_TIMEOUT,
                        "between 0 (no deadline) and 1d");
            }
            if (settings.getCodec() != null && !StringUtils.hasText(settings.getCodec())) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".codec", settings.getCodec(),
                        "must name a codec, e.g. json, smile or cbor");
            }
            settings.getMethods().forEach((method, methodSettings) -> {
                if (methodSettings.getTimeout() != null) {
                    checkDuration(prefix + ".methods." + method + ".timeout", methodSettings.getTimeout(),
                            Duration.ZERO, MAX_TIMEOUT, "between 0 (no deadline) and 1d");
                }
            });
        });
        HomaProtocolProperties protocol = properties.getProtocol();
        if (protocol.getTimeoutResends() != null) {
            throw new InvalidConfigurationPropertyValueException("homa.protocol.timeout-resends",
                    protocol.getTimeoutResends(), "has been replaced: set homa.protocol.peer-silence-timeout (a"
                    + " duration, default 5s) instead");
        }
        if (properties.getTransport().getLinkMbps() != null) {
            throw new InvalidConfigurationPropertyValueException("homa.transport.link-mbps",
                    properties.getTransport().getLinkMbps(), "has moved: set homa.protocol.link-mbps instead");
        }
        securityConfig(properties.getSecurity());
        // homa.protocol.*, homa.server.port and the socket buffer sizes are validated once, by the
        // engine's and the transport's config builders (transportConfig).
    }

    /**
     * The bound on calls in service of the server's dispatcher ({@link RpcDispatcher#maxCallsInService(int)}):
     * {@code homa.server.max-calls-in-service}, or when unset
     * {@link RpcDispatcher#defaultMaxCallsInService}({@code homa.server.threads}, event loops).
     *
     * @param loops the endpoint's event loops, on which reactive methods run ({@code homa.transport.loops})
     */
    public static int maxCallsInService(HomaProperties.Server server, int loops) {
        Integer configured = server.getMaxCallsInService();
        return configured != null ? configured : RpcDispatcher.defaultMaxCallsInService(server.getThreads(), loops);
    }

    /**
     * The bound on blocking calls in service of the server's dispatcher ({@link RpcDispatcher#maxBlockingCalls(int)}):
     * {@code homa.server.max-blocking-calls}, or when unset
     * {@link RpcDispatcher#defaultMaxBlockingCalls}({@code homa.server.threads}); with virtual threads,
     * whose number has no bound, {@code callsInService} (the bound on all calls).
     *
     * @param virtualThreads whether blocking methods run on a virtual thread each
     * @param callsInService the dispatcher's bound on calls in service ({@link #maxCallsInService})
     */
    public static int maxBlockingCalls(HomaProperties.Server server, boolean virtualThreads, int callsInService) {
        Integer configured = server.getMaxBlockingCalls();
        if (configured != null) {
            return configured;
        }
        return virtualThreads ? callsInService : RpcDispatcher.defaultMaxBlockingCalls(server.getThreads());
    }

    private static void checkStreamWindow(String name, @Nullable DataSize window) {
        if (window == null || window.toBytes() < 0 || window.toBytes() > RpcDispatcher.MAX_STREAM_WINDOW_BYTES) {
            throw new InvalidConfigurationPropertyValueException(name, window, "must be between 0B and 64MB");
        }
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

    /**
     * {@code homa.*} mapped onto the transport's and engine's settings. Their config builders
     * validate every value (once, there); a bad one fails start-up with the property, its value and
     * its allowed range ({@link HomaSettingErrors}).
     *
     * @throws InvalidConfigurationPropertyValueException for a value outside its allowed range
     */
    public static HomaTransportConfig transportConfig(HomaProperties properties) {
        try {
            return buildTransportConfig(properties);
        } catch (InvalidSettingException ex) {
            throw HomaSettingErrors.toPropertyError(ex, properties);
        }
    }

    /** A size in bytes as an int, saturated (so that 4GB cannot wrap round into an allowed value). */
    private static int bytesAsInt(DataSize size) {
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, size.toBytes()));
    }

    private static HomaTransportConfig buildTransportConfig(HomaProperties properties) {
        PropertyMapper map = PropertyMapper.get();
        HomaProtocolProperties protocol = properties.getProtocol();
        EngineConfig.Builder engine = EngineConfig.builder();
        map.from(protocol::getMtu).to(engine::mtuBytes);
        map.from(protocol::getUnscheduledBytes).as(HomaSettingsMapper::bytesAsInt).to(engine::unscheduledBytes);
        map.from(protocol::getMaxMessageSize).as(HomaSettingsMapper::bytesAsInt).to(engine::maxMessageBytes);
        map.from(protocol::getResendInterval).as(Duration::toNanos).to(engine::resendIntervalNs);
        map.from(protocol::getPeerSilenceTimeout).as(Duration::toNanos).to(engine::peerSilenceTimeoutNs);
        map.from(protocol::getPeerIdleTimeout).as(Duration::toNanos).to(engine::peerIdleTimeoutNs);
        map.from(protocol::getMaxInboundBuffer).as(DataSize::toBytes).to(engine::maxInboundBufferBytes);
        map.from(protocol::getMaxOvercommit).to(engine::maxOvercommit);
        map.from(protocol::getMaxGrantsPerPeer).to(engine::maxGrantsPerPeer);
        map.from(protocol::getMaxIncoming).as(HomaSettingsMapper::bytesAsInt).to(engine::maxIncomingBytes);
        map.from(protocol::getFifoGrantFraction).to(engine::fifoGrantFraction);
        map.from(protocol::getPriorityLevels).to(engine::priorityLevels);
        map.from(protocol::getIncastThreshold).to(engine::incastThreshold);
        map.from(protocol::getIncastUnscheduledBytes).as(HomaSettingsMapper::bytesAsInt)
                .to(engine::incastUnscheduledBytes);
        map.from(protocol::isAddressValidation).to(engine::addressValidation);
        map.from(protocol::getCongestionControl).as(HomaSettingsMapper::congestionControl).to(engine::congestionControl);
        map.from(protocol::getRttProbeInterval).as(Duration::toNanos).to(engine::rttProbeIntervalNs);
        map.from(protocol::getRttBytes).as(HomaSettingsMapper::bytesAsInt).to(engine::rttBytes);

        HomaProperties.Server server = properties.getServer();
        HomaTransportProperties transport = properties.getTransport();
        HomaTransportConfig.Builder config = HomaTransportConfig.builder();
        map.from(server::getBindAddress).to(config::bindAddress);
        map.from(server::getPort).to(config::port);
        map.from(transport::getReceiveBufferSize).as(HomaSettingsMapper::bytesAsInt).to(config::receiveBufferBytes);
        map.from(transport::getSendBufferSize).as(HomaSettingsMapper::bytesAsInt).to(config::sendBufferBytes);
        map.from(transport::isNative).to(config::nativeTransport);
        map.from(protocol::getLinkMbps).as(LinkSpeed::mbps).to(config::linkMbps);
        map.from(protocol::getIncastBufferBytes).as(HomaSettingsMapper::bytesAsInt).to(config::incastBufferBytes);
        map.from(protocol::getMaxNicQueue).as(Duration::toNanos).to(config::maxNicQueueNs);
        map.from(transport::isDeviceMtu).to(config::deviceMtu);
        map.from(transport::isSegmentationOffload).to(config::segmentationOffload);
        map.from(transport::getBusyPoll).as(Duration::toNanos).to(config::busyPollNs);
        map.from(transport::getTimetraceEvents).to(config::timetraceEvents);
        map.from(transport::getLoops).to(config::loops);
        map.from(transport::getPriorityTos).to(config::priorityTos);
        config.security(securityConfig(properties.getSecurity()));
        return config.engine(engine.build()).build();
    }

    /**
     * {@code homa.protocol.congestion-control}: rtt or off, in any case.
     *
     * @throws InvalidConfigurationPropertyValueException for anything else
     */
    static CongestionControl congestionControl(String value) {
        String normalized = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        return switch (normalized) {
            case "rtt" -> CongestionControl.RTT;
            case "off" -> CongestionControl.OFF;
            default -> throw new InvalidConfigurationPropertyValueException("homa.protocol.congestion-control", value,
                    "must be one of rtt, off");
        };
    }

    /**
     * The packet authentication settings.
     *
     * @throws InvalidConfigurationPropertyValueException naming the first bad property (a key's
     *     value is never shown, only its length) and what it allows
     */
    public static HomaSecurityConfig securityConfig(HomaSecurityProperties security) {
        String mode = security.getMode();
        String modeValue = mode == null ? "" : mode.trim().toLowerCase(Locale.ROOT);
        if (!SECURITY_MODES.contains(modeValue)) {
            throw new InvalidConfigurationPropertyValueException("homa.security.mode", mode,
                    "must be one of off, authenticate, encrypt");
        }
        HomaSecurityConfig.Mode parsedMode = HomaSecurityConfig.Mode.valueOf(modeValue.toUpperCase(Locale.ROOT));
        Map<Integer, byte[]> parsed = new TreeMap<>();
        security.getKeys().forEach((id, value) -> {
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
        Integer active = security.getActiveKey();
        if (active != null && (active < 0 || active > HomaSecurityConfig.MAX_KEY_ID)) {
            throw new InvalidConfigurationPropertyValueException("homa.security.active-key", active,
                    "must be between 0 and " + HomaSecurityConfig.MAX_KEY_ID);
        }
        if (parsedMode != HomaSecurityConfig.Mode.OFF) {
            if (parsed.isEmpty()) {
                throw new InvalidConfigurationPropertyValueException("homa.security.keys", security.getKeys(),
                        "must hold at least one key (homa.security.keys.<key-id>=<base64 of "
                                + HomaSecurityConfig.KEY_BYTES + " bytes>, key id between 0 and 255) when"
                                + " homa.security.mode is " + modeValue);
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

    /**
     * {@code homa.server.reflection.enabled}, parsed: {@code null} for auto, else true or false.
     *
     * @throws InvalidConfigurationPropertyValueException naming homa.server.reflection.enabled if
     *     it is not auto, true or false
     */
    public static @Nullable Boolean reflectionMode(HomaProperties.Reflection reflection) {
        String enabled = reflection.getEnabled();
        String value = (enabled == null) ? "" : enabled.trim().toLowerCase(Locale.ROOT);
        if (!REFLECTION_VALUES.contains(value)) {
            throw new InvalidConfigurationPropertyValueException("homa.server.reflection.enabled", enabled,
                    "must be one of auto, true, false");
        }
        return value.equals("auto") ? null : Boolean.valueOf(value);
    }

    /**
     * The timeout configured in yml for one method of a service: the method's own
     * ({@code homa.client.services.<service>.methods.<method>.timeout}), else the service's
     * ({@code homa.client.services.<service>.timeout}).
     *
     * @return the timeout ({@link Duration#ZERO} = no deadline), or {@code null} if neither is set
     */
    public static @Nullable Duration configuredTimeout(HomaProperties.Client client, String service, String method) {
        HomaProperties.Client.ServiceSettings settings = client.getServices().get(service);
        if (settings == null) {
            return null;
        }
        HomaProperties.Client.MethodSettings methodSettings = settings.getMethods().get(method);
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
    public static @Nullable String configuredCodec(HomaProperties.Client client, String service) {
        HomaProperties.Client.ServiceSettings settings = client.getServices().get(service);
        return (settings != null && StringUtils.hasText(settings.getCodec())) ? settings.getCodec().trim() : null;
    }

    /**
     * Parses {@code homa.client.peers}. Host names are resolved now, once; a name that does not
     * resolve stays unresolved (calls to it then fail).
     *
     * @return service name to its endpoints (at least one each, in the order written), in
     *     configuration order, unmodifiable
     * @throws InvalidConfigurationPropertyValueException naming {@code homa.client.peers.<service>}
     *     if an entry is not a comma-separated list of {@code host:port} with ports in 1..65535
     */
    public static Map<String, List<InetSocketAddress>> peerAddresses(HomaProperties.Client client) {
        Map<String, List<InetSocketAddress>> addresses = new LinkedHashMap<>();
        client.getPeers().forEach((service, value) -> addresses.put(service, parsePeers(service, value)));
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
        } else if (host.indexOf(':') >= 0 || host.indexOf('[') >= 0 || host.indexOf(']') >= 0) {
            throw new InvalidConfigurationPropertyValueException(name, whole, reason);
        }
        int port;
        try {
            port = Integer.parseInt(trimmed.substring(colon + 1));
        } catch (NumberFormatException ex) {
            throw new InvalidConfigurationPropertyValueException(name, whole, reason);
        }
        if (host.isBlank() || port < 1 || port > 65535) {
            throw new InvalidConfigurationPropertyValueException(name, whole, reason);
        }
        return new InetSocketAddress(host, port);
    }
}
