package io.homa.bench.jmh;

import io.homa.engine.EngineCounters;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The RPC layer's own cost per call, without the transport: a {@link HomaClient} call of a
 * {@code byte[]} echo method (JSON codec) whose request goes straight to an
 * {@link RpcDispatcher} in the same thread and whose response comes straight back. One op = the
 * client's encode, the server's decode, dispatch (interceptor chain, method, response envelope)
 * and encode, and the client's decode: the work the RPC layer adds to each message-layer RPC.
 * The B/op column is the RPC layer's allocation per call, payload copies included.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RpcLayerBenchmark {
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 4000);

    @Param({"100"})
    public int payloadBytes;

    private Scheduler scheduler;
    private HomaClient client;
    private byte[] payload;

    @Setup(Level.Trial)
    public void start() {
        scheduler = Schedulers.newSingle("rpc-bench");
        RpcDispatcher dispatcher = new RpcDispatcher(new JsonPayloadCodec(), scheduler)
                .register(new RpcMethod("bench", "echo", byte[].class, argument -> Mono.just(argument)));
        HomaTransport transport = new DirectTransport(dispatcher);
        client = new HomaClient(transport, new StaticServiceResolver(Map.of("bench", SERVER)), new JsonPayloadCodec());
        payload = new byte[payloadBytes];
        Arrays.fill(payload, (byte) 7);
        if (!Arrays.equals(echo(), payload)) {
            throw new IllegalStateException("the echo did not return the payload");
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        scheduler.dispose();
    }

    /** One call, completed synchronously (the method does not block, so nothing hops threads). */
    @Benchmark
    public byte[] echo() {
        AtomicReference<byte[]> result = new AtomicReference<>();
        client.call("bench", "echo", payload, byte[].class).subscribe(result::set);
        byte[] value = result.get();
        if (value == null) {
            throw new IllegalStateException("the call did not complete synchronously");
        }
        return value;
    }

    /** Hands each request to the dispatcher on the calling thread, as the event loop would. */
    private static final class DirectTransport extends HomaTransport {
        private final RpcDispatcher dispatcher;
        private long rpcId;

        DirectTransport(RpcDispatcher dispatcher) {
            this.dispatcher = dispatcher;
        }

        @Override
        public Mono<byte[]> call(InetSocketAddress server, byte[] request) {
            return Mono.defer(() -> dispatcher.handle(new HomaRequest(SERVER, rpcId += 2, Unpooled.wrappedBuffer(request)))
                    .map(response -> {
                        try {
                            return ByteBufUtil.getBytes(response);
                        } finally {
                            response.release();
                        }
                    }));
        }

        @Override
        public Mono<ByteBuf> call(InetSocketAddress server, ByteBuf request) {
            byte[] bytes = ByteBufUtil.getBytes(request);
            request.release();
            return call(server, bytes).map(Unpooled::wrappedBuffer);
        }

        @Override
        public InetSocketAddress localAddress() {
            return SERVER;
        }

        @Override
        public Mono<EngineCounters> counters() {
            return Mono.empty();
        }

        @Override
        public void startServing() {}

        @Override
        public boolean isServing() {
            return true;
        }

        @Override
        public long droppedDatagrams() {
            return 0;
        }

        @Override
        public void dispose() {}

        @Override
        public void disposeNow(Duration timeout) {}

        @Override
        public Mono<Void> onDispose() {
            return Mono.empty();
        }
    }
}
