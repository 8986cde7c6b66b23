package io.homa.bench.systems;

import io.homa.engine.CongestionControl;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransportConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.Objects;

/**
 * Knobs shared by the client and the server processes of a run.
 *
 * @param homaLinkMbps pacer rate of every Homa transport in Mbit/s (0 = no pacing), or
 *     {@link HomaTransportConfig#AUTO_LINK_MBPS} (the default): the transport's choice,
 *     {@value HomaTransportConfig#LOOPBACK_LINK_MBPS} on loopback; see {@link HomaTransportConfig#linkMbps()}
 * @param homaMtuBytes MTU of every Homa engine (largest IP packet, headers included), 256..65535,
 *     or 0 for the transport's default: the MTU of the bound device, 65,535 on loopback
 *     ({@link HomaTransportConfig#deviceMtu()}), ~17 packets per 1 MiB message instead of ~750
 * @param grpcDirectExecutor whether gRPC runs handlers and callbacks on its event loops
 *     ({@code directExecutor()}, what gRPC's own benchmarks do) instead of a thread pool
 * @param homaSegmentationOffload whether Homa transports use UDP GSO and GRO where available
 *     ({@link HomaTransportConfig#segmentationOffload()})
 * @param homaSecurity packet authentication of every Homa transport, client and servers alike
 *     ({@code --homa-security}): off, authenticate or encrypt, all with
 *     {@link #BENCHMARK_KEY} as key 1 (a fixed key: the benchmark measures the cost, not secrecy)
 * @param homaPriorityTos whether Homa packets carry their priority in the IP TOS byte
 *     ({@code homa.transport.priority-tos}: auto = off on loopback, on elsewhere)
 * @param homaIncastMarking whether Homa clients mark requests INCAST above the engine's
 *     incast-threshold outstanding RPCs (off: a threshold no run reaches)
 * @param bindHost the IPv4 address every server and client of this process binds: 127.0.0.1 on
 *     loopback, the host's address on the testbed ({@code --net=testbed})
 * @param homaIncastBufferBytes the incast buffer of every Homa transport
 *     ({@link HomaTransportConfig#incastBufferBytes()}), or {@link HomaTransportConfig#AUTO_INCAST_BUFFER}
 *     (the transport's choice); the testbed sets its switch's per-class buffer
 * @param homaBusyPollNs how long every Homa transport's event loop busy-polls before it sleeps
 *     ({@link HomaTransportConfig#busyPollNs()}), ns, or {@link #TRANSPORT_DEFAULT} for the transport's default
 * @param homaTimetraceDir where every Homa transport of every process of the run writes its
 *     timetrace when it closes ({@link HomaTransportConfig#timetraceEvents()}, {@link #TIMETRACE_EVENTS}
 *     events per thread), or "" for no timetrace
 * @param homaLoops event loops of every Homa transport ({@code --homa-loops}, issue 37), or 0 for
 *     the transport's default; see {@link HomaLoops}
 * @param homaCongestionControl congestion control of every Homa engine
 *     ({@code homa.protocol.congestion-control}, {@code --homa-congestion-control}): rtt or off
 */
public record SystemSettings(int homaLinkMbps, int homaMtuBytes, boolean grpcDirectExecutor, boolean homaSegmentationOffload,
        HomaSecurityConfig.Mode homaSecurity, HomaTransportConfig.PriorityTos homaPriorityTos, boolean homaIncastMarking,
        String bindHost, int homaIncastBufferBytes, long homaBusyPollNs, String homaTimetraceDir, int homaLoops,
        CongestionControl homaCongestionControl) {
    /** {@code homaBusyPollNs}: the transport's default. */
    public static final long TRANSPORT_DEFAULT = -1;
    /**
     * Events each recording thread of a traced transport keeps, 128 MiB a ring: at 100 Mbit/s a
     * server records about 35,000 events a second (about 3 per packet it sends or receives), so
     * this holds the warm-up and a window of 10,000 W4 calls (64 s); half as many lost the
     * window's first half.
     */
    public static final int TIMETRACE_EVENTS = 4 * 1024 * 1024;
    /** The address every system binds unless told otherwise. */
    public static final String LOOPBACK_HOST = "127.0.0.1";
    /** The key of {@code --homa-security} runs, id 1: bytes 0..31. Public and fixed; never use it elsewhere. */
    public static final byte[] BENCHMARK_KEY = benchmarkKey();

    /** Congestion control off (the engine's default). */
    public SystemSettings(int homaLinkMbps, int homaMtuBytes, boolean grpcDirectExecutor, boolean homaSegmentationOffload,
            HomaSecurityConfig.Mode homaSecurity, HomaTransportConfig.PriorityTos homaPriorityTos, boolean homaIncastMarking,
            String bindHost, int homaIncastBufferBytes, long homaBusyPollNs, String homaTimetraceDir, int homaLoops) {
        this(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity, homaPriorityTos,
                homaIncastMarking, bindHost, homaIncastBufferBytes, homaBusyPollNs, homaTimetraceDir, homaLoops,
                CongestionControl.OFF);
    }

    /** The transport's default number of event loops. */
    public SystemSettings(int homaLinkMbps, int homaMtuBytes, boolean grpcDirectExecutor, boolean homaSegmentationOffload,
            HomaSecurityConfig.Mode homaSecurity, HomaTransportConfig.PriorityTos homaPriorityTos, boolean homaIncastMarking,
            String bindHost, int homaIncastBufferBytes, long homaBusyPollNs, String homaTimetraceDir) {
        this(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity, homaPriorityTos,
                homaIncastMarking, bindHost, homaIncastBufferBytes, homaBusyPollNs, homaTimetraceDir, HomaLoops.TRANSPORT_DEFAULT);
    }

    /** The transport's default busy poll, no timetrace. */
    public SystemSettings(int homaLinkMbps, int homaMtuBytes, boolean grpcDirectExecutor, boolean homaSegmentationOffload,
            HomaSecurityConfig.Mode homaSecurity, HomaTransportConfig.PriorityTos homaPriorityTos, boolean homaIncastMarking,
            String bindHost, int homaIncastBufferBytes) {
        this(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity, homaPriorityTos,
                homaIncastMarking, bindHost, homaIncastBufferBytes, TRANSPORT_DEFAULT, "");
    }

    /** Packet authentication off. */
    public SystemSettings(int homaLinkMbps, int homaMtuBytes, boolean grpcDirectExecutor, boolean homaSegmentationOffload) {
        this(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, HomaSecurityConfig.Mode.OFF);
    }

    /** Priorities as the transport decides (auto), incast marking on, bound to loopback. */
    public SystemSettings(int homaLinkMbps, int homaMtuBytes, boolean grpcDirectExecutor, boolean homaSegmentationOffload,
            HomaSecurityConfig.Mode homaSecurity) {
        this(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity,
                HomaTransportConfig.PriorityTos.AUTO, true, LOOPBACK_HOST, HomaTransportConfig.AUTO_INCAST_BUFFER);
    }

    public SystemSettings {
        Objects.requireNonNull(homaSecurity, "--homa-security must be off, authenticate or encrypt");
        Objects.requireNonNull(homaPriorityTos, "--homa-priority-tos must be auto, on or off");
        Objects.requireNonNull(homaCongestionControl, "--homa-congestion-control must be rtt or off");
        if (bindHost == null || !bindHost.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            throw new IllegalArgumentException("--bind-host must be an IPv4 address, was '" + bindHost + "'");
        }
        if (homaLinkMbps != HomaTransportConfig.AUTO_LINK_MBPS
                && (homaLinkMbps < 0 || homaLinkMbps > HomaTransportConfig.MAX_LINK_MBPS)) {
            throw new IllegalArgumentException("--homa-link-mbps must be between 0 and "
                    + HomaTransportConfig.MAX_LINK_MBPS + " (or -1: the transport's auto), was " + homaLinkMbps);
        }
        if (homaMtuBytes != 0 && (homaMtuBytes < 256 || homaMtuBytes > 65_535)) {
            throw new IllegalArgumentException(
                    "--homa-mtu-bytes must be 0 (the device's) or between 256 and 65535, was " + homaMtuBytes);
        }
        if (homaBusyPollNs != TRANSPORT_DEFAULT && (homaBusyPollNs < 0 || homaBusyPollNs > HomaTransportConfig.MAX_BUSY_POLL_NS)) {
            throw new IllegalArgumentException("--homa-busy-poll-us must be between 0 and "
                    + HomaTransportConfig.MAX_BUSY_POLL_NS / 1_000 + ", was " + homaBusyPollNs / 1_000);
        }
        Objects.requireNonNull(homaTimetraceDir, "homaTimetraceDir");
        HomaLoops.check(homaLoops);
    }

    /** Whether Homa transports record and write a timetrace. */
    public boolean homaTimetrace() {
        return !homaTimetraceDir.isEmpty();
    }

    /** These settings with the busy poll ({@code TRANSPORT_DEFAULT} or ns) and timetrace directory ("" for none) given. */
    public SystemSettings withHomaDiagnostics(long busyPollNs, String timetraceDir) {
        return new SystemSettings(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity,
                homaPriorityTos, homaIncastMarking, bindHost, homaIncastBufferBytes, busyPollNs, timetraceDir, homaLoops,
                homaCongestionControl);
    }

    /**
     * These settings with packet authentication on (mode {@code authenticate}), for the opt-in
     * {@code homa-auth} systems; unchanged when {@code --homa-security} already turns it on.
     */
    public SystemSettings authenticated() {
        return homaSecurity != HomaSecurityConfig.Mode.OFF ? this : new SystemSettings(homaLinkMbps, homaMtuBytes,
                grpcDirectExecutor, homaSegmentationOffload, HomaSecurityConfig.Mode.AUTHENTICATE, homaPriorityTos,
                homaIncastMarking, bindHost, homaIncastBufferBytes, homaBusyPollNs, homaTimetraceDir, homaLoops,
                homaCongestionControl);
    }

    /** These settings for a process bound to {@code host} (an IPv4 address). */
    public SystemSettings withBindHost(String host) {
        return new SystemSettings(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity,
                homaPriorityTos, homaIncastMarking, host, homaIncastBufferBytes, homaBusyPollNs, homaTimetraceDir, homaLoops,
                homaCongestionControl);
    }

    /** These settings with Homa's incast buffer as given (bytes, or {@link HomaTransportConfig#AUTO_INCAST_BUFFER}). */
    public SystemSettings withHomaIncastBuffer(int bytes) {
        return new SystemSettings(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity,
                homaPriorityTos, homaIncastMarking, bindHost, bytes, homaBusyPollNs, homaTimetraceDir, homaLoops,
                homaCongestionControl);
    }

    /** These settings with Homa's priority marking and incast marking as given. */
    public SystemSettings withHomaMarking(HomaTransportConfig.PriorityTos priorityTos, boolean incastMarking) {
        return new SystemSettings(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity,
                priorityTos, incastMarking, bindHost, homaIncastBufferBytes, homaBusyPollNs, homaTimetraceDir, homaLoops,
                homaCongestionControl);
    }

    /** These settings with every Homa transport on {@code loops} event loops (0: the transport's default). */
    public SystemSettings withHomaLoops(int loops) {
        return new SystemSettings(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity,
                homaPriorityTos, homaIncastMarking, bindHost, homaIncastBufferBytes, homaBusyPollNs, homaTimetraceDir, loops,
                homaCongestionControl);
    }

    /** These settings with every Homa engine's congestion control as given. */
    public SystemSettings withHomaCongestionControl(CongestionControl congestionControl) {
        return new SystemSettings(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaSegmentationOffload, homaSecurity,
                homaPriorityTos, homaIncastMarking, bindHost, homaIncastBufferBytes, homaBusyPollNs, homaTimetraceDir,
                homaLoops, congestionControl);
    }

    /** {@link #bindHost()} as an address. */
    public InetAddress bindAddress() {
        try {
            return InetAddress.getByName(bindHost);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // an IPv4 literal (checked above) never needs a lookup
        }
    }

    /** {@link #bindHost()} and {@code port} (0: any free port). */
    public InetSocketAddress bindSocket(int port) {
        return new InetSocketAddress(bindAddress(), port);
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
        return new SystemSettings(HomaTransportConfig.AUTO_LINK_MBPS, 0, true, true);
    }
}
