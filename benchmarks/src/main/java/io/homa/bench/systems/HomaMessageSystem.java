package io.homa.bench.systems;

import io.homa.engine.EngineConfig;
import io.homa.engine.EngineCounters;
import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import reactor.core.publisher.Mono;

/**
 * Homa's message layer: {@link HomaTransport#call(InetSocketAddress, byte[])}, the echo handler on
 * the transport's event loop (the default), answering with the request's own payload.
 */
final class HomaMessageSystem {
    static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);
    /** An incast threshold (outstanding RPCs) no run reaches: incast marking off. */
    static final int NO_INCAST_THRESHOLD = 1_000_000;

    private HomaMessageSystem() {}

    /** Loopback transport settings shared by both Homa systems. */
    static HomaTransportConfig config(SystemSettings settings, int maxMessageBytes) {
        EngineConfig.Builder engine = EngineConfig.builder().maxMessageBytes(maxMessageBytes);
        if (!settings.homaIncastMarking()) {
            engine.incastThreshold(NO_INCAST_THRESHOLD);
        }
        if (settings.homaMtuBytes() != 0) {
            engine.mtuBytes(settings.homaMtuBytes());
        }
        engine.congestionControl(settings.homaCongestionControl());
        HomaTransportConfig.Builder transport = HomaTransportConfig.builder();
        if (settings.homaBusyPollNs() != SystemSettings.TRANSPORT_DEFAULT) {
            transport.busyPollNs(settings.homaBusyPollNs());
        }
        if (settings.homaTimetrace()) {
            transport.timetraceEvents(SystemSettings.TIMETRACE_EVENTS);
        }
        HomaLoops.apply(transport, settings.homaLoops());
        return transport
                .bindAddress(settings.bindHost())
                .priorityTos(settings.homaPriorityTos())
                .linkMbps(settings.homaLinkMbps())
                .deviceMtu(settings.homaMtuBytes() == 0)
                .segmentationOffload(settings.homaSegmentationOffload())
                .incastBufferBytes(settings.homaIncastBufferBytes())
                .security(settings.homaSecurityConfig())
                .engine(engine.build())
                .build();
    }

    /** The engine counters of a transport that matter for the report, by name. */
    static Map<String, Long> counters(HomaTransport transport) {
        EngineCounters c = transport.counters().block(Duration.ofSeconds(5));
        Map<String, Long> map = new LinkedHashMap<>();
        if (c == null) {
            return map;
        }
        map.put("rpcs_completed", c.rpcsCompleted());
        map.put("resends_sent", c.resendsSent());
        map.put("retransmitted_data_packets", c.retransmittedDataPackets());
        map.put("timeouts", c.timeouts());
        map.put("duplicate_packets", c.duplicatePackets());
        map.put("busy_sent", c.busySent());
        map.put("dropped_for_buffer_space", c.droppedForBufferSpace());
        map.put("retransmit_budget_exceeded", c.retransmitBudgetExceeded());
        map.put("dropped_datagrams", transport.droppedDatagrams());
        map.put("unauthenticated_datagrams", transport.unauthenticatedDatagrams());
        map.put("replayed_datagrams", transport.replayedDatagrams());
        c.packetsSentByType().forEach((type, n) -> map.put("sent_" + type.name().toLowerCase(Locale.ROOT), n));
        c.packetsReceivedByType().forEach((type, n) -> map.put("received_" + type.name().toLowerCase(Locale.ROOT), n));
        return map;
    }

    static EchoServer startServer(SystemSettings settings) {
        HomaRequestHandler echo = request -> {
            ByteBuf payload = request.payload();
            int responseBytes = payload.getInt(payload.readerIndex());
            if (responseBytes == EchoProtocol.ECHO) {
                return Mono.just(payload.retain());
            }
            if (responseBytes == EchoProtocol.SPIN || responseBytes == EchoProtocol.SPIN_INLINE) {
                byte[] bytes = ByteBufUtil.getBytes(payload);
                Mono<ByteBuf> work = Mono.fromCallable(() -> Unpooled.wrappedBuffer(EchoProtocol.respond(bytes)));
                // S11: CPU work off the event loop, the way a reactive handler hands it off
                // (subscribeOn a bounded scheduler), unless the request asks for it on the loop.
                return responseBytes == EchoProtocol.SPIN ? work.subscribeOn(CpuPool.scheduler()) : work;
            }
            return Mono.just(Unpooled.wrappedBuffer(new byte[responseBytes]));
        };
        HomaTransport transport = HomaTransport.bindNow(
                config(settings, EngineConfig.DEFAULT_MAX_MESSAGE_BYTES), echo, BIND_TIMEOUT);
        return server(transport, settings);
    }

    /**
     * Disposes a transport, then writes its timetrace, if the run records one, into
     * {@link SystemSettings#homaTimetraceDir()} as {@code homa-<address>-<port>-<pid>.trace}.
     */
    static void close(HomaTransport transport, SystemSettings settings) {
        transport.disposeNow(Duration.ofSeconds(5));
        if (!settings.homaTimetrace()) {
            return;
        }
        InetSocketAddress local = new InetSocketAddress(settings.bindAddress(), transport.localAddress().getPort());
        Path file = Path.of(settings.homaTimetraceDir()).resolve("homa-" + settings.bindHost() + "-" + local.getPort()
                + "-" + ProcessHandle.current().pid() + ".trace");
        try {
            Files.createDirectories(file.getParent());
            transport.timetrace().writeTo(file, local);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the timetrace " + file, e);
        }
    }

    /** An echo server over a bound transport: its port, and closing disposes it. */
    static EchoServer server(HomaTransport transport, SystemSettings settings) {
        return new EchoServer() {
            @Override
            public int port() {
                return transport.localAddress().getPort();
            }

            @Override
            public Map<String, Long> counters() {
                return HomaMessageSystem.counters(transport);
            }

            @Override
            public void close() {
                HomaMessageSystem.close(transport, settings);
            }
        };
    }

    static EchoClient connect(List<InetSocketAddress> servers, SystemSettings settings) {
        HomaTransport transport = HomaTransport.bindNow(
                config(settings, EngineConfig.DEFAULT_MAX_MESSAGE_BYTES), null, BIND_TIMEOUT);
        InetSocketAddress[] targets = servers.toArray(InetSocketAddress[]::new);
        return new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                return transport.call(targets[target], request).toFuture();
            }

            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request, long timeoutMs) {
                // The message layer carries no deadline: the caller cancels the call when it passes.
                return transport.call(targets[target], request).timeout(Duration.ofMillis(timeoutMs)).toFuture();
            }

            @Override
            public Map<String, Long> counters() {
                return HomaMessageSystem.counters(transport);
            }

            @Override
            public int targets() {
                return targets.length;
            }

            @Override
            public void close() {
                HomaMessageSystem.close(transport, settings);
            }
        };
    }
}
