package io.homa.reactive.internal.transport;

import io.homa.engine.EngineConfig;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.internal.security.PacketSealer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the host says about the link a transport is bound to, and the engine's settings derived
 * from it: the device's speed (the pacer's rate) and MTU (the engine's packet size), with the
 * defaults that apply on loopback, on the wildcard address and where the device says nothing.
 */
final class LinkProbe {
    private static final Logger log = LoggerFactory.getLogger(LinkProbe.class);

    private LinkProbe() {}

    /**
     * The engine's settings: {@code config.engine()} with the transport's pacer settings
     * ({@link HomaTransportConfig#linkMbps()}, {@link HomaTransportConfig#maxNicQueueNs()}), its
     * incast buffer ({@link HomaTransportConfig#incastBufferBytes()}; automatic: larger on loopback),
     * on loopback a grant window of {@link HomaTransportConfig#LOOPBACK_RTT_BYTES} unless the engine's
     * {@code rttBytes} is set, and with
     * the MTU of the bound interface when {@link HomaTransportConfig#deviceMtu()} is on and the
     * address is not the wildcard (capped at 65,535, and so that a full packet fits in
     * {@code max-incoming}). With packet authentication on ({@link HomaTransportConfig#security()}),
     * that MTU less the {@value PacketSealer#TRAILER_BYTES}-byte trailer, so that a sealed datagram
     * is no longer than an unsealed one would have been (on loopback: 65,466 + 41 = 65,507 bytes).
     */
    static EngineConfig engineConfig(HomaTransportConfig config, InetSocketAddress bindAddress) {
        EngineConfig engine = config.engine();
        EngineConfig.Builder builder = engine.toBuilder().linkMbps(linkMbps(config, bindAddress))
                .maxNicQueueNs(config.maxNicQueueNs());
        if (config.incastBufferBytes() != HomaTransportConfig.AUTO_INCAST_BUFFER) {
            builder.incastBufferBytes(config.incastBufferBytes());
        } else if (bindAddress.getAddress().isLoopbackAddress()) {
            builder.incastBufferBytes((int) Math.min(1 << 30,
                    (long) HomaTransportConfig.LOOPBACK_INCAST_BUFFER_FACTOR * config.receiveBufferBytes()));
        }
        if (engine.rttBytes() == 0 && bindAddress.getAddress().isLoopbackAddress()) {
            builder.rttBytes(HomaTransportConfig.LOOPBACK_RTT_BYTES);
        }
        int mtu = Math.max(deviceMtu(config, bindAddress), engine.mtuBytes());
        builder.mtuBytes(mtu - config.security().overheadBytes());
        return builder.build();
    }

    /**
     * The pacer's rate: {@link HomaTransportConfig#linkMbps()}, or for
     * {@link HomaTransportConfig#AUTO_LINK_MBPS} {@link HomaTransportConfig#LOOPBACK_LINK_MBPS} on a
     * loopback address, the speed the bound device reports, else
     * {@link HomaTransportConfig#DEFAULT_LINK_MBPS}; Mbit/s.
     */
    static int linkMbps(HomaTransportConfig config, InetSocketAddress bindAddress) {
        if (config.linkMbps() != HomaTransportConfig.AUTO_LINK_MBPS) {
            return config.linkMbps();
        }
        if (bindAddress.getAddress().isLoopbackAddress()) {
            return HomaTransportConfig.LOOPBACK_LINK_MBPS;
        }
        int deviceMbps = deviceSpeedMbps(bindAddress);
        return deviceMbps > 0 ? deviceMbps : HomaTransportConfig.DEFAULT_LINK_MBPS;
    }

    /**
     * The speed in Mbit/s that the device of {@code bindAddress} reports (Linux:
     * {@code /sys/class/net/DEVICE/speed}, which loopback and many virtual devices leave unset), or
     * -1: the wildcard address, no such device, no speed, or beyond {@link EngineConfig#MAX_LINK_MBPS}.
     */
    static int deviceSpeedMbps(InetSocketAddress bindAddress) {
        NetworkInterface device = boundDevice(bindAddress);
        if (device == null) {
            return -1;
        }
        try {
            Path speed = Path.of("/sys/class/net", device.getName(), "speed");
            int mbps = Integer.parseInt(Files.readString(speed).trim());
            return mbps > 0 && mbps <= EngineConfig.MAX_LINK_MBPS ? mbps : -1;
        } catch (IOException | NumberFormatException | SecurityException e) {
            // Loopback's speed file cannot be read (EINVAL); other systems have none.
            return -1;
        }
    }

    /** The one device {@code bindAddress} names, or null: the wildcard address, or none found. */
    private static @Nullable NetworkInterface boundDevice(InetSocketAddress bindAddress) {
        if (bindAddress.getAddress().isAnyLocalAddress()) {
            return null;
        }
        try {
            return NetworkInterface.getByInetAddress(bindAddress.getAddress());
        } catch (SocketException e) {
            log.debug("Homa transport: no device for {}", bindAddress, e);
            return null;
        }
    }

    /** The bound interface's MTU as the engine may use it, or -1 where it does not apply. */
    private static int deviceMtu(HomaTransportConfig config, InetSocketAddress bindAddress) {
        EngineConfig engine = config.engine();
        NetworkInterface device = config.deviceMtu() ? boundDevice(bindAddress) : null;
        if (device == null) {
            return -1;
        }
        int deviceMtu;
        try {
            deviceMtu = device.getMTU();
        } catch (SocketException e) {
            log.debug("Homa transport: no MTU for {}; using {}", bindAddress, engine.mtuBytes(), e);
            return -1;
        }
        int fitsIncoming = engine.maxIncomingBytes() + EngineConfig.IP_UDP_HEADER_BYTES + DataHeader.HEADER_LENGTH;
        return Math.min(Math.min(deviceMtu, 65_535), fitsIncoming);
    }
}
