package io.homa.grpc.interop;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The interop cases over grpc-java's own HTTP/2 transport (plaintext TCP on loopback): the control
 * that shows the cases, the service and the assertions hold where grpc-java itself is the reference.
 */
class NettyInteropTest extends AbstractInteropTest {
    private Server server;
    private ManagedChannel channel;

    @Override
    protected ManagedChannel start(ServerServiceDefinition service) throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(service)
                .build()
                .start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
        return channel;
    }

    @Override
    protected void stop() throws Exception {
        channel.shutdownNow();
        channel.awaitTermination(30, TimeUnit.SECONDS);
        server.shutdownNow();
        server.awaitTermination(30, TimeUnit.SECONDS);
    }
}
