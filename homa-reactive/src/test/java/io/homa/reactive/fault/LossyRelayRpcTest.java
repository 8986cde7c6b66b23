package io.homa.reactive.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineCounters;
import io.homa.engine.wire.PacketType;
import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Loss recovery and at-most-once end to end: two clients and an echo server, default protocol
 * settings, talking through a {@link LossyUdpRelay} that drops 5% of datagrams in each direction,
 * duplicates 1%, delays 2% by up to 50 ms and reorders 1%. Seeds are fixed; override the relay's
 * with {@code -Dhoma.fault.seed=N}.
 */
class LossyRelayRpcTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final int RPCS = 3_000;
    private static final int CONCURRENCY = 32;
    private static final int CAP_BYTES = 1_000_000;
    private static final long WORKLOAD_SEED = 20_240_601L;
    /** The relay binds here, at the endpoints' ports, so that the ports in Homa headers stay true. */
    private static final String RELAY_HOST = "127.0.0.2";

    private final List<HomaTransport> transports = new ArrayList<>();
    private LossyUdpRelay relay;

    @AfterEach
    void close() {
        transports.forEach(t -> t.disposeNow(TIMEOUT));
        if (relay != null) {
            relay.close();
        }
    }

    private HomaTransport bind(HomaRequestHandler handler) {
        HomaTransportConfig loopback = HomaTransportConfig.builder().bindAddress("127.0.0.1").build();
        HomaTransport transport = HomaTransport.bindNow(loopback, handler, TIMEOUT);
        transports.add(transport);
        return transport;
    }

    @Test
    void shouldCompleteEveryRpcExactlyOnceThroughALossyNetwork() throws Exception {
        Run run = runThroughRelay(true, LossyUdpRelay.Faults.defaults(Long.getLong("homa.fault.seed", 1L)), RPCS);

        run.assertEveryRpcCompletedExactlyOnce(RPCS);
        // The faults really happened and the engines really recovered from them.
        assertThat(run.relay.dropped()).isPositive();
        assertThat(run.relay.duplicated()).isPositive();
        assertThat(run.relay.delayed()).isPositive();
        assertThat(run.relay.reordered()).isPositive();
        assertThat(sum(run.clients, EngineCounters::resendsSent) + run.server.resendsSent()).isPositive();
        assertThat(sum(run.clients, EngineCounters::retransmittedDataPackets)
                + run.server.retransmittedDataPackets()).isPositive();
        assertThat(sum(run.clients, EngineCounters::duplicatePackets) + run.server.duplicatePackets()).isPositive();
    }

    /**
     * A relay that translates ports, as NAT or a container's port mapping does: the ports in
     * Homa headers then name the relay, not the endpoints. Disabled: the engine drops every ACK
     * whose server port is not its own UDP port, so the server keeps each RPC until it is
     * reclaimed, sending NEED_ACK every resend interval meanwhile (hundreds of thousands of them
     * in a 3,000-RPC run, with RPCs failing as RPC_UNKNOWN). Enable once the engine matches ACKs by
     * the datagram's source instead of the header's ports.
     */
    @Test
    void shouldCompleteEveryRpcExactlyOnceThroughAPortTranslatingRelay() throws Exception {
        int rpcs = 500;
        Run run = runThroughRelay(false, LossyUdpRelay.Faults.none(1), rpcs);

        run.assertEveryRpcCompletedExactlyOnce(rpcs);
        assertThat(run.server.packetsSent(PacketType.NEED_ACK)).as("server %s", run.server).isLessThan(rpcs);
        assertThat(run.server.timeouts()).as("server RPCs reclaimed unacknowledged").isZero();
    }

    /** What one run saw. */
    private record Run(EchoWorkload.Result result, ExecutionCountingEcho echo, LossyUdpRelay.Counters relay,
            @Nullable Throwable relayFailure, EngineCounters server, List<EngineCounters> clients) {

        void assertEveryRpcCompletedExactlyOnce(int rpcs) {
            assertThat(relayFailure).isNull();
            assertThat(result.failures()).as("client %s%nserver %s", clients, server).isEmpty();
            assertThat(result.correct()).isEqualTo(rpcs);
            assertThat(echo.executedMoreThanOnce()).as("RPCs executed more than once").isEmpty();
            assertThat(echo.distinctRpcs()).isEqualTo(rpcs);
            assertThat(echo.executions()).isEqualTo(rpcs);
            assertThat(echo.distinctClients()).as("one upstream source per client").isEqualTo(2);
        }
    }

    /**
     * Two clients and a counting echo server on 127.0.0.1, default settings, {@code rpcs} W3
     * requests through a relay on {@link #RELAY_HOST}; prints one block of figures.
     */
    private Run runThroughRelay(boolean mirrorPorts, LossyUdpRelay.Faults faults, int rpcs) throws Exception {
        ExecutionCountingEcho echo = new ExecutionCountingEcho();
        HomaTransport server = bind(echo);
        List<HomaTransport> clients = List.of(bind(null), bind(null));
        relay = LossyUdpRelay.start(server.localAddress(), RELAY_HOST, mirrorPorts, faults);
        int[] lengths = EchoWorkload.sampleLengths("w3", rpcs, WORKLOAD_SEED, CAP_BYTES);

        // The engine times an RPC out after 5 s of silence from its server (peer-silence-timeout);
        // the per-call guard only catches a call that never terminates.
        EchoWorkload.Result result = EchoWorkload.run(clients, relay.address(), lengths, WORKLOAD_SEED, CONCURRENCY,
                Duration.ofSeconds(20), Duration.ofSeconds(50));
        // Until the last ACKs have landed: a drain ends once the server holds no RPC, every
        // response acknowledged (or when its grace period ends, NEED_ACKs sent all along).
        server.drain(Duration.ofSeconds(30)).block(Duration.ofSeconds(40));

        EngineCounters serverCounters = server.counters().block(TIMEOUT);
        List<EngineCounters> clientCounters = clients.stream().map(c -> c.counters().block(TIMEOUT)).toList();
        LossyUdpRelay.Counters relayCounters = relay.counters();
        System.out.printf("Relay (%s, seed %d): %,d RPCs (%,d request bytes) in %,d ms, %d correct, %d failed %s%n"
                        + "  relay  %s%n"
                        + "  client resends=%,d retransmittedData=%,d duplicates=%,d timeouts=%,d%n"
                        + "  server resends=%,d retransmittedData=%,d duplicates=%,d timeouts=%,d needAcks=%,d%n"
                        + "  RTT p50=%,d us p99=%,d us max=%,d us; executions=%,d distinct=%,d%n",
                mirrorPorts ? "mirrored ports" : "translated ports", faults.seed(), result.rpcs(),
                Arrays.stream(lengths).asLongStream().sum(), result.elapsedNs() / 1_000_000, result.correct(),
                result.failures().size(), result.failures().stream().limit(3).toList(), relayCounters,
                sum(clientCounters, EngineCounters::resendsSent),
                sum(clientCounters, EngineCounters::retransmittedDataPackets),
                sum(clientCounters, EngineCounters::duplicatePackets), sum(clientCounters, EngineCounters::timeouts),
                serverCounters.resendsSent(), serverCounters.retransmittedDataPackets(),
                serverCounters.duplicatePackets(), serverCounters.timeouts(),
                serverCounters.packetsSent(PacketType.NEED_ACK),
                result.rttPercentileMicros(0.50), result.rttPercentileMicros(0.99), result.rttPercentileMicros(1.0),
                echo.executions(), echo.distinctRpcs());
        return new Run(result, echo, relayCounters, relay.failure(), serverCounters, clientCounters);
    }

    private static long sum(List<EngineCounters> counters, ToLongFunction<EngineCounters> counter) {
        return counters.stream().mapToLong(counter).sum();
    }
}
