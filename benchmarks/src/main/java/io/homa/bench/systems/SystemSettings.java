package io.homa.bench.systems;

import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransportConfig;
import java.util.Map;
import java.util.Objects;

/**
 * Knobs shared by the client and the server processes of a run.
 *
 * @param homaLinkMbps pacer rate of every Homa transport in Mbit/s (0 = no pacing), see
 *     {@link HomaTransportConfig#linkMbps()}
 * @param homaMtuBytes MTU of every Homa engine (largest IP packet, headers included), 256..65535,
 *     or 0 for the transport's default: the MTU of the bound device, 65,535 on loopback
 *     ({@link HomaTransportConfig#deviceMtu()}), ~17 packets per 1 MiB message instead of ~750
 * @param grpcDirectExecutor whether gRPC runs handlers and callbacks on its event loops
 *     ({@code directExecutor()}, what gRPC's own benchmarks do) instead of a thread pool
 * @param homaSegmentationOffload whether Homa transports use UDP GSO and GRO where available
 *     ({@link HomaTransportConfig#segmentationOffload()})
 * @param homaSecurity packet authentication of every Homa transport, client and servers alike
 *     ({@code --homa-security}, issue 14 item 2): off, authenticate or encrypt, all with
 *     {@link #BENCHMARK_KEY} as key 1 (a fixed key: the benchmark measures the cost, not secrecy)
 */
public record SystemSettings(int homaLinkMbps, int homaMtuBytes, boolean grpcDirectExecutor, boolean homaSegmentationOffload,
        HomaSecurityConfig.Mode homaSecurity) {
    /** The key of {@code --homa-security} runs, id 1: bytes 0..31. Public and fixed; never use it elsewhere. */
    public static final byte[] BENCHMARK_KEY = benchmarkKey();

    /** Packet authentication off. */
    public SystemSettings(int homaLinkMbps, int homaMtuBytes, boolean grpcDirectExecutor, boolean homaSegmentationOffload) {
        this(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, HomaSecurityConfig.Mode.OFF);
    }

    public SystemSettings {
        Objects.requireNonNull(homaSecurity, "--homa-security must be off, authenticate or encrypt");
        if (homaLinkMbps < 0 || homaLinkMbps > HomaTransportConfig.MAX_LINK_MBPS) {
            throw new IllegalArgumentException("--homa-link-mbps must be between 0 and "
                    + HomaTransportConfig.MAX_LINK_MBPS + ", was " + homaLinkMbps);
        }
        if (homaMtuBytes != 0 && (homaMtuBytes < 256 || homaMtuBytes > 65_535)) {
            throw new IllegalArgumentException(
                    "--homa-mtu-bytes must be 0 (the device's) or between 256 and 65535, was " + homaMtuBytes);
        }
    }

    /**
     * These settings with packet authentication on (mode {@code authenticate}), for the opt-in
     * {@code homa-auth} systems; unchanged when {@code --homa-security} already turns it on.
     */
    public SystemSettings authenticated() {
        return homaSecurity != HomaSecurityConfig.Mode.OFF ? this : new SystemSettings(homaLinkMbps, homaMtuBytes,
                grpcDirectExecutor, homaSegmentationOffload, HomaSecurityConfig.Mode.AUTHENTICATE);
    }

    /** The transports' security settings for {@link #homaSecurity()}. */
    public HomaSecurityConfig homaSecurityConfig() {
        return homaSecurity == HomaSecurityConfig.Mode.OFF ? HomaSecurityConfig.off()
                : new HomaSecurityConfig(homaSecurity, Map.of(1, BENCHMARK_KEY), 1);
    }

    private static byte[] benchmarkKey() {
        byte[] key = new byte[HomaSecurityConfig.KEY_BYTES];
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) i;
        }
        return key;
    }

    /** The transport's default pacer rate, MTU (the device's) and offloads, and gRPC with a direct executor. */
    public static SystemSettings defaults() {
        return new SystemSettings(HomaTransportConfig.DEFAULT_LINK_MBPS, 0, true, true);
    }
}
