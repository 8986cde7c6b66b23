package io.homa.spring.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.homa.engine.EngineCounters;
import io.homa.engine.wire.PacketType;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.RpcMethod;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Call timers and protocol meters after real calls over loopback UDP. */
class HomaCallMetricsTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private LoopbackRpc rpc;

    private HomaClient client;

    @BeforeEach
    void start() {
        this.rpc = new LoopbackRpc();
        this.rpc.dispatcher()
                .register(RpcMethod.unary("kv", "get", new Type[] { String.class },
                        (args) -> Mono.just("value-of-" + args[0])))
                .register(RpcMethod.unary("kv", "put", new Type[] { String.class },
                        (args) -> Mono.error(new HomaException(HomaStatus.NOT_FOUND, "no such key"))))
                .register(RpcMethod.stream("kv", "scan", new Type[] { Integer.class },
                        (args) -> Flux.range(0, (Integer) args[0]).map((i) -> "key-" + i)))
                .addInterceptor(new HomaServerMetricsInterceptor(this.registry));
        this.client = this.rpc.client(List.of(new HomaClientMetricsInterceptor(this.registry)), "kv");
    }

    @AfterEach
    void stop() {
        this.rpc.close();
    }

    @Test
    void shouldTimeClientAndServerCallsByServiceMethodAndStatus() {
        for (int i = 0; i < 3; i++) {
            assertThat(call("get")).isEqualTo("value-of-k");
        }
        assertThatThrownBy(() -> call("put")).isInstanceOf(HomaRemoteException.class);

        assertThat(timer("homa.client.calls", "kv", "get", "OK").count()).isEqualTo(3);
        assertThat(timer("homa.client.calls", "kv", "put", "NOT_FOUND").count()).isEqualTo(1);
        assertThat(timer("homa.client.calls", "kv", "get", "OK").totalTime(java.util.concurrent.TimeUnit.NANOSECONDS))
                .isPositive();
        assertThat(timer("homa.server.calls", "kv", "get", "OK").count()).isEqualTo(3);
        assertThat(timer("homa.server.calls", "kv", "put", "NOT_FOUND").count()).isEqualTo(1);
        assertThat(this.registry.get("homa.client.calls.active").gauge().value()).isZero();
        assertThat(this.registry.get("homa.server.calls.active").gauge().value()).isZero();
    }

    @Test
    void shouldTimeAStreamOnceOnEachSide() {
        List<String> keys = this.client.<String>stream("kv", "scan", new Object[] { 300 }, String.class,
                CallOptions.defaults()).collectList().block(WAIT);
        assertThat(keys).hasSize(300).startsWith("key-0");
        assertThat(timer("homa.client.calls", "kv", "scan", "OK").count()).isEqualTo(1);
        assertThat(timer("homa.server.calls", "kv", "scan", "OK").count()).isEqualTo(1);
    }

    @Test
    void shouldTimeLocalFailuresWithTheirStatus() {
        assertThatThrownBy(() -> this.client.call("nowhere", "get", new Object[] { "k" }, String.class,
                CallOptions.defaults()).block(WAIT)).isInstanceOf(HomaException.class);
        assertThat(timer("homa.client.calls", "nowhere", "get", "UNAVAILABLE").count()).isEqualTo(1);
    }

    @Test
    void shouldCountProtocolPacketsFromSampledEngineCounters() {
        HomaTransportMetrics serverMetrics = new HomaTransportMetrics(this.rpc.server(), Duration.ofMinutes(1));
        serverMetrics.bindTo(this.registry);
        for (int i = 0; i < 5; i++) {
            call("get");
        }
        serverMetrics.sample().block(WAIT);
        EngineCounters sampled = serverMetrics.latest();
        assertThat(this.registry.get("homa.requests.delivered").functionCounter().count()).isEqualTo(5);
        assertThat(this.registry.get("homa.packets.received").tag("type", "DATA").functionCounter().count())
                .isGreaterThanOrEqualTo(5);
        assertThat(this.registry.get("homa.packets.sent").tag("type", "DATA").functionCounter().count())
                .isGreaterThanOrEqualTo(5);
        assertThat(this.registry.get("homa.packets.sent").tag("type", "GRANT").functionCounter().count())
                .isEqualTo(sampled.packetsSent(PacketType.GRANT));
        assertThat(this.registry.find("homa.packets.sent").functionCounters()).hasSize(PacketType.values().length);
        // Issue 14: the client's first request made first contact, which validated its address.
        assertThat(this.registry.get("homa.first-contacts").functionCounter().count()).isGreaterThanOrEqualTo(1);
        assertThat(this.registry.get("homa.addresses.validated").functionCounter().count()).isGreaterThanOrEqualTo(1);
        assertThat(this.registry.get("homa.bytes.held").tag("reason", "address-validation").functionCounter().count())
                .isZero();
        // A busy machine may delay a packet past the resend interval: RESEND, BUSY and retransmissions
        // are then legitimate, so those are checked to report the sampled counters, whatever they are.
        Map<String, ToLongFunction<EngineCounters>> sampledOnly = Map.of("homa.resends", EngineCounters::resendsSent,
                "homa.busy", EngineCounters::busySent, "homa.packets.retransmitted",
                EngineCounters::retransmittedDataPackets, "homa.packets.duplicate", EngineCounters::duplicatePackets);
        sampledOnly.forEach((name, counter) -> assertThat(this.registry.get(name).functionCounter().count()).as(name)
                .isEqualTo(counter.applyAsLong(sampled)));
        for (String name : List.of("homa.rpcs.timeouts", "homa.incast.marked", "homa.packets.malformed",
                "homa.packets.dropped", "homa.datagrams.dropped", "homa.rpcs.started", "homa.rpcs.completed",
                "homa.requests.dropped", "homa.peers.forgotten", "homa.acks.ignored", "homa.packets.ignored",
                "homa.packets.conflicting", "homa.rpcs.dropped", "homa.requests.refused")) {
            assertThat(this.registry.get(name).functionCounter().count()).as(name).isZero();
        }
        // Congestion control is off by default: no probe either way.
        assertThat(this.registry.find("homa.rtt.probes").functionCounters()).hasSize(4)
                .allSatisfy((counter) -> assertThat(counter.count()).isZero());
        serverMetrics.close();
    }

    @Test
    void shouldReportLivenessCountersAndEachPeersRoundTripTime() {
        HomaTransportMetrics serverMetrics = new HomaTransportMetrics(this.rpc.server(), Duration.ofMinutes(1));
        serverMetrics.bindTo(this.registry);
        // A request longer than its unscheduled bytes: the DATA that the server's GRANTs release
        // time round trips (the RPC layer then rejects the raw bytes; only the transfer matters).
        this.rpc.clientTransport().call(this.rpc.server().localAddress(), new byte[300_000])
                .onErrorResume((error) -> reactor.core.publisher.Mono.empty()).block(WAIT);
        serverMetrics.sample().block(WAIT);
        EngineCounters sampled = serverMetrics.latest();
        assertThat(this.registry.get("homa.rtt.samples").functionCounter().count()).isPositive()
                .isEqualTo(sampled.rttSamples());
        assertThat(this.registry.get("homa.resends.deferred").functionCounter().count())
                .isEqualTo(sampled.resendsDeferred());
        assertThat(this.registry.get("homa.peers.probes").functionCounter().count())
                .isEqualTo(sampled.silentPeerProbes());
        // The client's calls leave from one of its sockets (one per event loop): the server knows
        // one peer, on the client's host.
        assertThat(this.registry.get("homa.peer.rtt").gauges()).singleElement().satisfies((gauge) -> {
            assertThat(gauge.getId().getTag("peer")).startsWith("127.0.0.1:");
            assertThat(gauge.value()).as("the client's smoothed RTT, in seconds").isPositive().isLessThan(1.0);
        });
        // The transport's latest lag, in seconds, once a probe has measured one: read between two
        // equal readings of it, as the probe replaces it every 100 ms.
        await().atMost(WAIT).pollInterval(Duration.ofMillis(1)).untilAsserted(() -> {
            long lagNs = this.rpc.server().eventLoopLagNs();
            double gauge = this.registry.get("homa.eventloop.lag").gauge().value();
            assertThat(this.rpc.server().eventLoopLagNs()).isEqualTo(lagNs).isPositive();
            assertThat(gauge).as("seconds").isEqualTo(lagNs / 1e9);
        });
        serverMetrics.close();
    }

    @Test
    void shouldSampleClientCountersPeriodically() {
        HomaTransportMetrics clientMetrics = new HomaTransportMetrics(this.rpc.clientTransport(),
                Duration.ofMillis(50));
        clientMetrics.bindTo(this.registry);
        call("get");
        call("get");
        await().atMost(WAIT).until(() -> clientMetrics.latest().rpcsCompleted() >= 2);
        clientMetrics.close();
        assertThat(this.registry.get("homa.rpcs.started").functionCounter().count()).isEqualTo(2);
        assertThat(this.registry.get("homa.rpcs.completed").functionCounter().count()).isEqualTo(2);
    }

    private String call(String method) {
        return this.client.<String>call("kv", method, new Object[] { "k" }, String.class, CallOptions.defaults())
                .block(WAIT);
    }

    private Timer timer(String name, String service, String method, String status) {
        return this.registry.get(name).tags("service", service, "method", method, "status", status).timer();
    }
}
