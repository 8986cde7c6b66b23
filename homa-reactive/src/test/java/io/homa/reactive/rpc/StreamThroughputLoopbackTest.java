package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.lang.reflect.Type;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A throughput check, not a benchmark: a 16 MiB client stream and a 16 MiB server stream of
 * 64 KiB chunks over loopback, printing MiB/s (the median and best of a few runs, after a warm-up). It asserts
 * only that every byte arrives: machines are shared and noisy, so no timing is asserted.
 */
class StreamThroughputLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int CHUNK_BYTES = 64 * 1024;
    private static final int CHUNKS = 256;
    private static final long TOTAL_BYTES = (long) CHUNK_BYTES * CHUNKS;
    private static final int RUNS = 5;
    private static final Type CHUNK_FLUX = TestTypes.fluxOf(byte[].class);

    private final Scheduler scheduler = Schedulers.newBoundedElastic(4, 1000, "throughput");
    private final byte[] chunk = new byte[CHUNK_BYTES];
    private HomaTransport serverTransport;
    private HomaTransport clientTransport;
    private InetSocketAddress server;

    @BeforeEach
    void start() {
        for (int i = 0; i < chunk.length; i++) {
            chunk[i] = (byte) i;
        }
        RpcDispatcher dispatcher = new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec()), scheduler)
                .maxResponseBytes(EngineConfig.DEFAULT_MAX_MESSAGE_BYTES)
                .register(RpcMethod.clientStream("bulk", "upload", new Type[] {CHUNK_FLUX},
                        args -> chunks(args[0]).map(bytes -> (long) bytes.length).reduce(0L, Long::sum)))
                .register(RpcMethod.stream("bulk", "download", new Type[] {int.class},
                        args -> Flux.range(0, (Integer) args[0]).map(i -> chunk)));
        HomaTransportConfig config = HomaTransportConfig.builder().bindAddress("127.0.0.1").build();
        serverTransport = HomaTransport.bindNow(config, dispatcher, Duration.ofSeconds(10));
        clientTransport = HomaTransport.bindNow(config, null, Duration.ofSeconds(10));
        server = new InetSocketAddress(InetAddress.getLoopbackAddress(), serverTransport.localAddress().getPort());
    }

    @AfterEach
    void stop() {
        clientTransport.disposeNow();
        serverTransport.disposeNow();
        scheduler.dispose();
    }

    @SuppressWarnings("unchecked")
    private static Flux<byte[]> chunks(Object argument) {
        return (Flux<byte[]>) argument;
    }

    /**
     * Prints the throughput with a window of 0 (one batch RPC and one push in flight at a time, as
     * before streams pipelined) and with the default window; {@code -Dhoma.test.streamWindows=0,1048576,...}
     * prints other windows (bytes) instead.
     */
    @Test
    void shouldPrintTheThroughputOfA16MiBClientStreamAndServerStream() {
        String windows = System.getProperty("homa.test.streamWindows", "0," + HomaClient.DEFAULT_STREAM_WINDOW_BYTES);
        for (String window : windows.split(",")) {
            int windowBytes = Integer.parseInt(window.trim());
            HomaClient client = HomaClient.builder(clientTransport)
                    .resolver(StaticServiceResolver.ofPeers(Map.of("bulk", List.of(server))))
                    .streamWindowBytes(windowBytes)
                    .build();
            String upload = rate(() -> {
                Long received = client.channel("bulk", "upload", new Object[] {Flux.range(0, CHUNKS).map(i -> chunk)},
                        Long.class, CallOptions.defaults()).singleOrEmpty().block(TIMEOUT);
                assertThat(received).isEqualTo(TOTAL_BYTES);
            });
            String download = rate(() -> {
                Long received = client.stream("bulk", "download", new Object[] {CHUNKS}, byte[].class,
                        CallOptions.defaults()).map(bytes -> (long) bytes.length).reduce(0L, Long::sum).block(TIMEOUT);
                assertThat(received).isEqualTo(TOTAL_BYTES);
            });
            System.out.printf("stream throughput (16 MiB of 64 KiB chunks, loopback, json, median of %d), window %d"
                    + " bytes: client stream %s, server stream %s%n", RUNS, windowBytes, upload, download);
        }
    }

    /** MiB/s of {@link #RUNS} runs after one warm-up run: the median and the best. */
    private static String rate(Runnable transfer) {
        transfer.run();
        double[] rates = new double[RUNS];
        for (int i = 0; i < RUNS; i++) {
            long startNs = System.nanoTime();
            transfer.run();
            double seconds = (System.nanoTime() - startNs) / 1e9;
            rates[i] = TOTAL_BYTES / (1024.0 * 1024.0) / seconds;
        }
        java.util.Arrays.sort(rates);
        return String.format("%.0f MiB/s (best %.0f)", rates[RUNS / 2], rates[RUNS - 1]);
    }
}
