package io.homa.spring;

import io.homa.engine.EngineConfig;
import io.homa.engine.wire.DataHeader;
import io.homa.reactive.HomaTransportConfig;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
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

    /** Largest message size any Homa setting accepts: 64 MB (64 MiB). */
    static final DataSize MAX_MESSAGE_SIZE_CAP = DataSize.ofMegabytes(64);

    private final Server server = new Server();

    private final Client client = new Client();

    private final Protocol protocol = new Protocol();

    private final Transport transport = new Transport();

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

    /** Validates the bound values; see {@link #validate()}. */
    @Override
    public void afterPropertiesSet() {
        validate();
    }

    /**
     * Checks every value against its allowed range.
     *
     * @throws InvalidConfigurationPropertyValueException naming the first bad property, its value
     *     and its allowed range
     */
    public void validate() {
        checkRange("homa.server.port", this.server.port, 0, 65535);
        if (!StringUtils.hasText(this.server.bindAddress)) {
            throw new InvalidConfigurationPropertyValueException(
                    "homa.server.bind-address", this.server.bindAddress, "must be a host name or IP address");
        }
        this.client.peerAddresses();
        checkRange("homa.protocol.mtu", this.protocol.mtu, 256, 65535);
        checkSize("homa.protocol.unscheduled-bytes", this.protocol.unscheduledBytes,
                DataSize.ofBytes(1), MAX_MESSAGE_SIZE_CAP, "1B and 64MB");
        checkSize("homa.protocol.max-message-size", this.protocol.maxMessageSize,
                DataSize.ofBytes(1), MAX_MESSAGE_SIZE_CAP, "1B and 64MB");
        Duration resendInterval = this.protocol.resendInterval;
        if (resendInterval == null || resendInterval.compareTo(Duration.ofMillis(1)) < 0
                || resendInterval.compareTo(Duration.ofSeconds(60)) > 0) {
            throw new InvalidConfigurationPropertyValueException("homa.protocol.resend-interval", resendInterval,
                    "must be between 1ms and 60s");
        }
        checkRange("homa.protocol.timeout-resends", this.protocol.timeoutResends, 1, 1000);
        Duration peerIdleTimeout = this.protocol.peerIdleTimeout;
        Duration rpcLifetime = resendInterval.multipliedBy(2L * (this.protocol.timeoutResends + 1));
        if (peerIdleTimeout == null || peerIdleTimeout.compareTo(Duration.ofSeconds(1)) < 0
                || peerIdleTimeout.compareTo(Duration.ofDays(1)) > 0 || peerIdleTimeout.compareTo(rpcLifetime) <= 0) {
            throw new InvalidConfigurationPropertyValueException("homa.protocol.peer-idle-timeout", peerIdleTimeout,
                    "must be between 1s and 1d and exceed 2 x (timeout-resends + 1) x resend-interval (" + rpcLifetime + ")");
        }
        checkSize("homa.protocol.max-inbound-buffer", this.protocol.maxInboundBuffer,
                DataSize.ofKilobytes(64), DataSize.ofTerabytes(1), "64KB and 1TB");
        checkRange("homa.protocol.max-overcommit", this.protocol.maxOvercommit, 1, 64);
        checkRange("homa.protocol.max-grants-per-peer", this.protocol.maxGrantsPerPeer, 1, 64);
        int packetPayloadBytes = this.protocol.mtu - EngineConfig.IP_UDP_HEADER_BYTES - DataHeader.HEADER_LENGTH;
        checkSize("homa.protocol.max-incoming", this.protocol.maxIncoming, DataSize.ofBytes(packetPayloadBytes),
                DataSize.ofGigabytes(1), "one DATA packet's payload (mtu - 84 bytes) and 1GB");
        double fifoGrantFraction = this.protocol.fifoGrantFraction;
        if (!(fifoGrantFraction >= 0 && fifoGrantFraction <= 0.5)) {
            throw new InvalidConfigurationPropertyValueException("homa.protocol.fifo-grant-fraction",
                    fifoGrantFraction, "must be between 0 and 0.5");
        }
        checkRange("homa.protocol.priority-levels", this.protocol.priorityLevels, 1, 8);
        checkRange("homa.protocol.incast-threshold", this.protocol.incastThreshold, 1, 1_000_000);
        checkSize("homa.protocol.incast-unscheduled-bytes", this.protocol.incastUnscheduledBytes,
                DataSize.ofBytes(0), MAX_MESSAGE_SIZE_CAP, "0B and 64MB");
        checkSize("homa.transport.receive-buffer-size", this.transport.receiveBufferSize,
                Transport.MIN_BUFFER_SIZE, Transport.MAX_BUFFER_SIZE, "64KB and 1GB");
        checkSize("homa.transport.send-buffer-size", this.transport.sendBufferSize,
                Transport.MIN_BUFFER_SIZE, Transport.MAX_BUFFER_SIZE, "64KB and 1GB");
        checkRange("homa.transport.link-mbps", this.transport.linkMbps, 0, HomaTransportConfig.MAX_LINK_MBPS);
    }

    private static void checkRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new InvalidConfigurationPropertyValueException(name, value,
                    "must be between " + min + " and " + max);
        }
    }

    private static void checkSize(String name, DataSize value, DataSize min, DataSize max, String range) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new InvalidConfigurationPropertyValueException(name, value,
                    "must be between " + range + " (" + min.toBytes() + ".." + max.toBytes() + " bytes)");
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
    }

    /** The calling side: where each remote service lives. */
    public static class Client {

        /**
         * Endpoint of each remote service, as service name to "host:port" (IPv6 in brackets:
         * "[::1]:4000"). Service names containing dots are written in brackets:
         * homa.client.peers[io.example.Echo]=host:4000.
         */
        private Map<String, String> peers = new LinkedHashMap<>();

        public Map<String, String> getPeers() {
            return this.peers;
        }

        public void setPeers(Map<String, String> peers) {
            this.peers = peers;
        }

        /**
         * Parses {@link #getPeers()}. Host names are resolved now, once; a name that does not
         * resolve stays unresolved (calls to it then fail).
         *
         * @return service name to endpoint, in configuration order, unmodifiable
         * @throws InvalidConfigurationPropertyValueException naming {@code homa.client.peers.<service>}
         *     if an entry is not {@code host:port} with a port in 1..65535
         */
        public Map<String, InetSocketAddress> peerAddresses() {
            Map<String, InetSocketAddress> addresses = new LinkedHashMap<>();
            this.peers.forEach((service, value) -> addresses.put(service, parsePeer(service, value)));
            return Collections.unmodifiableMap(addresses);
        }

        static InetSocketAddress parsePeer(String service, String value) {
            String name = "homa.client.peers." + service;
            String reason = "must be host:port with a port between 1 and 65535 (IPv6 addresses in brackets, e.g."
                    + " [::1]:4000)";
            if (!StringUtils.hasText(service)) {
                throw new InvalidConfigurationPropertyValueException(name, value, "the service name must not be empty");
            }
            if (value == null) {
                throw new InvalidConfigurationPropertyValueException(name, null, reason);
            }
            String trimmed = value.trim();
            int colon = trimmed.lastIndexOf(':');
            if (colon <= 0 || colon == trimmed.length() - 1) {
                throw new InvalidConfigurationPropertyValueException(name, value, reason);
            }
            String host = trimmed.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            else if (host.indexOf(':') >= 0 || host.indexOf('[') >= 0 || host.indexOf(']') >= 0) {
                throw new InvalidConfigurationPropertyValueException(name, value, reason);
            }
            int port;
            try {
                port = Integer.parseInt(trimmed.substring(colon + 1));
            }
            catch (NumberFormatException ex) {
                throw new InvalidConfigurationPropertyValueException(name, value, reason);
            }
            if (host.isBlank() || port < 1 || port > 65535) {
                throw new InvalidConfigurationPropertyValueException(name, value, reason);
            }
            return new InetSocketAddress(host, port);
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
         * Silence after which a receiver asks for missing bytes with RESEND, and the period at
         * which it asks again, 1ms..60s (a plain number means milliseconds).
         */
        @DurationUnit(ChronoUnit.MILLIS)
        private Duration resendInterval = Duration.ofMillis(10);

        /**
         * RESENDs sent without any packet from the peer before an RPC is aborted with a timeout,
         * 1..1000.
         */
        private int timeoutResends = 10;

        /**
         * How long a peer with nothing in progress is remembered, with its record of finished
         * rpcids that keeps late duplicates from executing again, 1s..1d; must exceed
         * 2 x (timeout-resends + 1) x resend-interval (a plain number means seconds).
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

        /** Of the messages granted to at once, at most this many from one sending peer, 1..64. */
        private int maxGrantsPerPeer = 1;

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

        public int getTimeoutResends() {
            return this.timeoutResends;
        }

        public void setTimeoutResends(int timeoutResends) {
            this.timeoutResends = timeoutResends;
        }
    }

    /** Settings of the UDP socket under the engine. */
    public static class Transport {

        static final DataSize MIN_BUFFER_SIZE = DataSize.ofKilobytes(64);

        static final DataSize MAX_BUFFER_SIZE = DataSize.ofGigabytes(1);

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
         * Pacer rate in megabits per second, 0..1000000 (0 = no pacing): the endpoint hands
         * packets to the kernel no faster than this, so that its own queue, not the socket's,
         * holds the backlog, in SRPT order, and loopback receivers are not overrun.
         */
        private int linkMbps = 2000; // HomaTransportConfig.DEFAULT_LINK_MBPS, as a literal for the metadata

        /**
         * Whether each packet carries its Homa priority (0-7, control packets 7) in the IP TOS
         * byte as priority << 5 (DSCP class selectors CS0-CS7), for switches with priority queues.
         */
        private boolean priorityTos = true;

        public boolean isPriorityTos() {
            return this.priorityTos;
        }

        public void setPriorityTos(boolean priorityTos) {
            this.priorityTos = priorityTos;
        }

        public int getLinkMbps() {
            return this.linkMbps;
        }

        public void setLinkMbps(int linkMbps) {
            this.linkMbps = linkMbps;
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
}
