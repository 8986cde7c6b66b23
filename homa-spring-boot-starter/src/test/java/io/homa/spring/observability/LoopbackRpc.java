package io.homa.spring.observability;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.StaticServiceResolver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.scheduler.Schedulers;

/** A server endpoint with an {@link RpcDispatcher} and a client endpoint, on loopback UDP port 0. */
public final class LoopbackRpc implements AutoCloseable {

    private static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);

    private final RpcDispatcher dispatcher = new RpcDispatcher(new JsonPayloadCodec(), Schedulers.boundedElastic());

    private final HomaTransport server;

    private final HomaTransport clientTransport;

    public LoopbackRpc() {
        HomaTransportConfig config = config();
        this.server = HomaTransport.bindNow(config, this.dispatcher, BIND_TIMEOUT);
        this.clientTransport = HomaTransport.bindNow(config, null, BIND_TIMEOUT);
    }

    /** Loopback, port 0, RESENDs after 20 ms of silence at the earliest. */
    public static HomaTransportConfig config() {
        return HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .port(0)
                .engine(EngineConfig.builder().resendIntervalNs(20_000_000L).build())
                .build();
    }

    /** What {@link #config()} sets, as {@code homa.*} properties. */
    public static String[] properties() {
        return new String[] { "homa.server.port=0", "homa.server.bind-address=127.0.0.1",
                "homa.protocol.resend-interval=20ms" };
    }

    public RpcDispatcher dispatcher() {
        return this.dispatcher;
    }

    public HomaTransport server() {
        return this.server;
    }

    public HomaTransport clientTransport() {
        return this.clientTransport;
    }

    /** A client that finds each of {@code services} at the server. */
    public HomaClient client(List<? extends HomaClientInterceptor> interceptors, String... services) {
        Map<String, InetSocketAddress> peers = new HashMap<>();
        InetSocketAddress address = this.server.localAddress();
        for (String service : services) {
            peers.put(service, address);
        }
        return HomaClient.builder(this.clientTransport)
                .resolver(new StaticServiceResolver(peers))
                .defaultTimeout(Duration.ofSeconds(5))
                .interceptors(interceptors)
                .build();
    }

    @Override
    public void close() {
        this.clientTransport.disposeNow();
        this.server.disposeNow();
    }
}
