package io.homa.bench.systems;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** The systems under test, with their command-line ids. */
public enum SystemKind {
    HOMA("homa", "Homa message layer (HomaTransport.call, byte[])", false, 1024 * 1024, true),
    HOMA_RPC("homa-rpc", "Homa RPC layer (HomaClient + RpcDispatcher, JSON)", false, 1024 * 1024, true),
    GRPC("grpc", "gRPC-java (grpc-netty-shaded, unary, byte[] marshaller)", false, 1024 * 1024, true),
    GRPC_HOMA("grpc-homa", "gRPC-java over Homa (homa-grpc: HomaManagedChannel and HomaGrpcRegistrar, grpc's service and"
            + " stubs)", false, 1024 * 1024, true),
    RSOCKET("rsocket", "RSocket-java (TCP transport, request-response)", false, 1024 * 1024, true),
    UDP("udp", "floor: plain Java UDP ping-pong (DatagramChannel)", true, UdpFloor.MAX_BODY_BYTES, true),
    TCP("tcp", "floor: plain Java TCP ping-pong (length-prefixed)", true, 1024 * 1024, true),
    /** Opt-in: {@code homa} with packet authentication, to measure its cost in the same run. */
    HOMA_AUTH("homa-auth", "Homa message layer with packet authentication (homa.security.mode=authenticate, or"
            + " --homa-security's mode when that is not off)", false, 1024 * 1024, false),
    /** Opt-in: {@code homa-rpc} with packet authentication. */
    HOMA_RPC_AUTH("homa-rpc-auth", "Homa RPC layer with packet authentication (as homa-auth)", false, 1024 * 1024,
            false);

    private final String id;
    private final String description;
    private final boolean floor;
    private final int maxMessageBytes;
    private final boolean byDefault;

    SystemKind(String id, String description, boolean floor, int maxMessageBytes, boolean byDefault) {
        this.id = id;
        this.description = description;
        this.floor = floor;
        this.maxMessageBytes = maxMessageBytes;
        this.byDefault = byDefault;
    }

    /** The command-line id, e.g. {@code homa-rpc}. */
    public String id() {
        return id;
    }

    public String description() {
        return description;
    }

    /** Whether this is a floor (plain socket ping-pong), not an RPC system. */
    public boolean floor() {
        return floor;
    }

    /** Whether this is one of the Homa systems (gRPC over Homa included: its transport is Homa's). */
    public boolean homa() {
        return this == HOMA || this == HOMA_RPC || this == HOMA_AUTH || this == HOMA_RPC_AUTH || this == GRPC_HOMA;
    }

    /** Largest request or response the benchmark sends through this system, in bytes. */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /** Starts this system's echo server on a free port of {@link SystemSettings#bindHost()}. */
    public EchoServer startServer(SystemSettings settings) throws Exception {
        return switch (this) {
            case HOMA -> HomaMessageSystem.startServer(settings);
            case HOMA_RPC -> HomaRpcSystem.startServer(settings);
            case HOMA_AUTH -> HomaMessageSystem.startServer(settings.authenticated());
            case HOMA_RPC_AUTH -> HomaRpcSystem.startServer(settings.authenticated());
            case GRPC -> GrpcSystem.startServer(settings);
            case GRPC_HOMA -> GrpcHomaSystem.startServer(settings);
            case RSOCKET -> RSocketSystem.startServer(settings);
            case UDP -> UdpFloor.startServer(settings);
            case TCP -> TcpFloor.startServer(settings);
        };
    }

    /**
     * Connects a client, bound to {@link SystemSettings#bindHost()} where the system binds clients,
     * to servers of this system at the given addresses (target i is {@code servers.get(i)}).
     */
    public EchoClient connect(List<InetSocketAddress> servers, SystemSettings settings) throws Exception {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("servers must not be empty");
        }
        return switch (this) {
            case HOMA -> HomaMessageSystem.connect(servers, settings);
            case HOMA_RPC -> HomaRpcSystem.connect(servers, settings);
            case HOMA_AUTH -> HomaMessageSystem.connect(servers, settings.authenticated());
            case HOMA_RPC_AUTH -> HomaRpcSystem.connect(servers, settings.authenticated());
            case GRPC -> GrpcSystem.connect(servers, settings);
            case GRPC_HOMA -> GrpcHomaSystem.connect(servers, settings);
            case RSOCKET -> RSocketSystem.connect(servers);
            case UDP -> UdpFloor.connect(servers, settings);
            case TCP -> TcpFloor.connect(servers);
        };
    }

    /**
     * Looks up a system by id.
     *
     * @throws IllegalArgumentException naming {@code --systems} and the allowed ids
     */
    public static SystemKind fromId(String id) {
        String key = id == null ? "" : id.trim().toLowerCase(Locale.ROOT);
        for (SystemKind kind : values()) {
            if (kind.id.equals(key)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("--systems: unknown system '" + id + "'; allowed: " + ids());
    }

    /** All ids, comma-separated. */
    public static String ids() {
        return Arrays.stream(values()).map(SystemKind::id).collect(Collectors.joining(","));
    }

    /** The ids a run measures when {@code --systems} is not given: all but the opt-in ones, comma-separated. */
    public static String defaultIds() {
        return Arrays.stream(values()).filter(kind -> kind.byDefault).map(SystemKind::id).collect(Collectors.joining(","));
    }
}
