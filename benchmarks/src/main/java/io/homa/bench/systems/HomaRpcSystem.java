package io.homa.bench.systems;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.reactive.rpc.StaticServiceResolver;
import java.lang.reflect.Type;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Homa's RPC layer with the JSON codec: service {@code bench}, method {@code echo}, a
 * {@code byte[]} argument and result (which the codec carries raw, one tag byte before the
 * bytes, not as base64 JSON; the engine's message limit is raised to {@value #MAX_MESSAGE_BYTES}
 * bytes so that the envelope around a 1 MiB payload fits). S10's streams are three more methods of
 * the same service: {@value #ITEMS_METHOD} (server streaming), {@value #UPLOAD_METHOD} (client
 * streaming) and {@value #ECHO_STREAM_METHOD} (bidirectional), {@code byte[]} items.
 */
final class HomaRpcSystem {
    static final String SERVICE = "bench";
    static final String METHOD = "echo";
    /** S11's method: {@link EchoProtocol#SPIN} requests, a blocking method (run on the dispatcher's scheduler). */
    static final String SPIN_METHOD = "spin";
    /** S11's scaling variant: {@link EchoProtocol#SPIN_INLINE} requests, a reactive method (run on the event loop). */
    static final String SPIN_INLINE_METHOD = "spinInline";
    static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
    /** S10's server stream ({@link StreamProtocol#items}): {@code RpcMethod.stream}, consumed with {@code HomaClient.stream}. */
    static final String ITEMS_METHOD = "items";
    /** S10's client stream: a method with a {@code Flux<byte[]>} parameter returning a {@code Mono<Long>}. */
    static final String UPLOAD_METHOD = "upload";
    /** S10's bidirectional stream: a method with a {@code Flux<byte[]>} parameter returning it. */
    static final String ECHO_STREAM_METHOD = "echoStream";
    /** The type {@code Flux<byte[]>}, a request stream's parameter type. */
    static final Type BYTES_FLUX = bytesFlux();

    private HomaRpcSystem() {}

    static EchoServer startServer(SystemSettings settings) {
        // As the starter sets it up with homa.server.threads = the cores, the setting for CPU-bound
        // methods: blocking methods (S11's) run on one thread per core, at most
        // defaultMaxBlockingCalls of them in service.
        RpcDispatcher dispatcher = new RpcDispatcher(new JsonPayloadCodec(),
                        Schedulers.newBoundedElastic(CpuPool.THREADS, 100_000, "homa-rpc-server", 60, true))
                .maxBlockingCalls(RpcDispatcher.defaultMaxBlockingCalls(CpuPool.THREADS))
                .maxResponseBytes(MAX_MESSAGE_BYTES)
                .register(new RpcMethod(SERVICE, METHOD, byte[].class,
                        argument -> Mono.just(EchoProtocol.respond((byte[]) argument))))
                // CPU work the way the RPC layer runs blocking work: a blocking method, called on the
                // dispatcher's scheduler (a request whose deadline passed is not started).
                .register(new RpcMethod(SERVICE, SPIN_METHOD, byte[].class,
                        argument -> Mono.just(EchoProtocol.respond((byte[]) argument))).withBlocking(true))
                // The same work in a reactive method, on the event loop (what more loops would spread).
                .register(new RpcMethod(SERVICE, SPIN_INLINE_METHOD, byte[].class,
                        argument -> Mono.fromCallable(() -> EchoProtocol.respond((byte[]) argument))))
                // S10: streaming methods as an application declares them (reactive, on the event loop).
                .register(RpcMethod.stream(SERVICE, ITEMS_METHOD, new Type[] {byte[].class},
                        arguments -> StreamProtocol.items((byte[]) arguments[0])))
                .register(RpcMethod.clientStream(SERVICE, UPLOAD_METHOD, new Type[] {BYTES_FLUX},
                        arguments -> StreamProtocol.receive(requestStream(arguments[0]))))
                .register(RpcMethod.bidiStream(SERVICE, ECHO_STREAM_METHOD, new Type[] {BYTES_FLUX},
                        arguments -> requestStream(arguments[0])));
        HomaTransport transport = HomaTransport.bindNow(
                HomaMessageSystem.config(settings, MAX_MESSAGE_BYTES), dispatcher, HomaMessageSystem.BIND_TIMEOUT);
        return HomaMessageSystem.server(transport, settings);
    }

    @SuppressWarnings("unchecked")
    private static Flux<byte[]> requestStream(@Nullable Object argument) {
        return (Flux<byte[]>) argument;
    }

    /** A parameter of this method's is the one place Java spells {@code Flux<byte[]>} as a {@link Type}. */
    @SuppressWarnings("unused")
    private static void bytesFluxParameter(Flux<byte[]> items) {}

    private static Type bytesFlux() {
        try {
            return HomaRpcSystem.class.getDeclaredMethod("bytesFluxParameter", Flux.class).getGenericParameterTypes()[0];
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The method that serves a request: echo, or one of S11's spins. */
    static String method(byte[] request) {
        if (request.length >= EchoProtocol.SPIN_HEADER_BYTES) {
            int field = EchoProtocol.responseBytesField(request);
            if (field == EchoProtocol.SPIN) {
                return SPIN_METHOD;
            }
            if (field == EchoProtocol.SPIN_INLINE) {
                return SPIN_INLINE_METHOD;
            }
        }
        return METHOD;
    }

    static EchoClient connect(List<InetSocketAddress> servers, SystemSettings settings) {
        HomaTransport transport = HomaTransport.bindNow(
                HomaMessageSystem.config(settings, MAX_MESSAGE_BYTES), null, HomaMessageSystem.BIND_TIMEOUT);
        JsonPayloadCodec codec = new JsonPayloadCodec();
        HomaClient[] clients = servers.stream()
                .map(server -> new HomaClient(transport, new StaticServiceResolver(Map.of(SERVICE, server)), codec))
                .toArray(HomaClient[]::new);
        return new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                return clients[target].call(SERVICE, method(request), request, byte[].class).toFuture();
            }

            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request, long timeoutMs) {
                return clients[target].call(SERVICE, method(request), new Object[] {request}, byte[].class,
                        CallOptions.defaults().withTimeout(Duration.ofMillis(timeoutMs))).toFuture();
            }

            @Override
            public Map<String, Long> counters() {
                return HomaMessageSystem.counters(transport);
            }

            @Override
            public EchoStreams streams() {
                return streams;
            }

            private final EchoStreams streams = new EchoStreams() {
                @Override
                public Flux<byte[]> serverStream(int target, int itemBytes, long count) {
                    return clients[target].stream(SERVICE, ITEMS_METHOD,
                            new Object[] {StreamProtocol.request(itemBytes, count)}, byte[].class, CallOptions.defaults());
                }

                @Override
                public Mono<Long> upload(int target, Publisher<byte[]> chunks) {
                    return clients[target].channel(SERVICE, UPLOAD_METHOD, new Object[] {Flux.from(chunks)}, Long.class,
                            CallOptions.defaults()).singleOrEmpty();
                }

                @Override
                public Flux<byte[]> echo(int target, Publisher<byte[]> items) {
                    return clients[target].channel(SERVICE, ECHO_STREAM_METHOD, new Object[] {Flux.from(items)},
                            byte[].class, CallOptions.defaults());
                }
            };

            @Override
            public int targets() {
                return clients.length;
            }

            @Override
            public void close() {
                HomaMessageSystem.close(transport, settings);
            }
        };
    }
}
