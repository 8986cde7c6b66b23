package io.homa.grpc.interop;

import io.grpc.ManagedChannel;
import io.grpc.ServerServiceDefinition;
import io.homa.engine.EngineConfig;
import io.homa.grpc.HomaGrpcServer;
import io.homa.grpc.HomaManagedChannel;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** The interop cases over Homa: a {@link HomaGrpcServer} and a {@link HomaManagedChannel} on loopback UDP. */
class HomaInteropTest extends AbstractInteropTest {
    private HomaGrpcServer server;
    private HomaTransport clientTransport;
    private HomaManagedChannel channel;

    @Override
    protected ManagedChannel start(ServerServiceDefinition service) throws Exception {
        // Tolerant resends: the test machine is shared and may pause threads for a while.
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .engine(EngineConfig.builder().resendIntervalNs(50_000_000L).build())
                .build();
        server = HomaGrpcServer.builder(config)
                .addService(service)
                .shutdownGracePeriod(Duration.ofSeconds(5))
                .build()
                .start();
        clientTransport = HomaTransport.bindNow(config, null, Duration.ofSeconds(10));
        channel = HomaManagedChannel.builder(clientTransport, "127.0.0.1:" + server.getPort()).build();
        return channel;
    }

    @Override
    protected void stop() throws Exception {
        channel.shutdownNow();
        channel.awaitTermination(30, TimeUnit.SECONDS);
        server.shutdownNow();
        server.awaitTermination(30, TimeUnit.SECONDS);
        clientTransport.disposeNow();
    }
}
