package io.homa.spring.observability;

import io.homa.engine.EngineCounters;
import io.homa.engine.wire.PacketType;
import io.homa.reactive.HomaTransport;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Protocol meters of one {@link HomaTransport}, from its engine's {@link EngineCounters}. The
 * counters live on the transport's event loop, so they are never read on scrape: a snapshot is
 * taken every {@code sampleInterval} ({@link HomaTransport#counters()}, asynchronous) and the
 * meters read the latest one; they lag by at most one interval. Sampling starts when the binder is
 * first bound to a registry and stops on {@link #close()} or when the transport is disposed.
 *
 * <p>Function counters (monotonic, base unit in brackets):
 * <ul>
 *   <li>{@code homa.packets.sent}, {@code homa.packets.received} [packets], tag {@code type}: one
 *       per Homa packet type (DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY, CUTOFFS, NEED_ACK, ACK), so
 *       grants sent are {@code homa.packets.sent{type=GRANT}};</li>
 *   <li>{@code homa.resends} [packets]: RESENDs sent; {@code homa.busy} [packets]: BUSYs sent;</li>
 *   <li>{@code homa.packets.retransmitted} [packets]: DATA sent again;
 *       {@code homa.packets.duplicate}; {@code homa.packets.malformed};
 *       {@code homa.packets.dropped} (tag {@code reason=inbound-buffer-full}): first packets of
 *       new messages dropped for {@code max-inbound-buffer};
 *       {@code homa.datagrams.dropped}: datagrams dropped before the engine saw them;</li>
 *   <li>{@code homa.datagrams.unauthenticated}, {@code homa.datagrams.replayed} [datagrams]: datagrams packet
 *       authentication (homa.security.mode) dropped before the engine saw them;</li>
 *   <li>{@code homa.rpcs.timeouts} [rpcs]: RPCs aborted because the peer went silent;
 *       {@code homa.rpcs.started} and {@code homa.rpcs.completed} [rpcs]: client RPCs;
 *       {@code homa.requests.delivered} and {@code homa.requests.dropped} [requests]: server side
 *       (dropped = no handler);</li>
 *   <li>{@code homa.incast.marked} [requests]: requests sent with the INCAST flag;
 *       {@code homa.peers.forgotten} [peers];</li>
 *   <li>liveness (draft "Timeouts", RFC 6298): {@code homa.resends.deferred} [packets]: RESENDs
 *       and NEED_ACKs not sent because their peer was silent and already probed in this backoff
 *       step; {@code homa.peers.probes} [packets]: the one RESEND or NEED_ACK per step that went
 *       to a silent peer; {@code homa.rtt.samples} [samples]: round-trip samples taken;
 *       {@code homa.rtt.probes} [packets], tag {@code outcome} (sent, answered, lost, ignored): the
 *       RTT probes of congestion control ({@code homa.protocol.congestion-control=rtt}).</li>
 * </ul>
 * The gauge {@code homa.peer.rtt} [seconds], tag {@code peer} (host:port), is each peer's smoothed
 * round-trip time (SRTT) as of the last sample, for peers with at least one sample (at most 256).
 * RPCs in flight are the gauges {@code homa.client.calls.active} and
 * {@code homa.server.calls.active} of the call interceptors.
 */
public class HomaTransportMetrics implements MeterBinder, AutoCloseable {

    private static final String RTT_PROBES_DESCRIPTION = "RTT probes of congestion control (congestion-control rtt):"
            + " sent, answered (one round-trip sample each), lost (given up unanswered), ignored (probes and"
            + " responses received and not acted on)";
    private static final Map<String, ToLongFunction<EngineCounters>> RTT_PROBE_OUTCOMES = Map.of(
            "sent", EngineCounters::rttProbesSent,
            "answered", EngineCounters::rttProbesAnswered,
            "lost", EngineCounters::rttProbesLost,
            "ignored", EngineCounters::rttProbesIgnored);

    /** Default time between two samples of the engine's counters. */
    public static final Duration DEFAULT_SAMPLE_INTERVAL = Duration.ofSeconds(5);

    private final HomaTransport transport;

    private final Duration sampleInterval;

    private final AtomicReference<EngineCounters> latest = new AtomicReference<>(new EngineCounters());

    private final AtomicReference<@Nullable Disposable> sampling = new AtomicReference<>();

    private volatile @Nullable MultiGauge peerRtt;

    private volatile boolean closed;

    /**
     * @param transport the transport whose engine is sampled
     * @param sampleInterval time between samples, positive
     * @throws IllegalArgumentException if {@code sampleInterval} is not positive
     */
    public HomaTransportMetrics(HomaTransport transport, Duration sampleInterval) {
        this.transport = Objects.requireNonNull(transport, "transport must not be null");
        Objects.requireNonNull(sampleInterval, "sampleInterval must not be null");
        if (sampleInterval.isNegative() || sampleInterval.isZero()) {
            throw new IllegalArgumentException("sampleInterval must be positive, was " + sampleInterval);
        }
        this.sampleInterval = sampleInterval;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (PacketType type : PacketType.values()) {
            String tag = type.name();
            counter(registry, "homa.packets.sent", "Homa packets sent, by type", "packets",
                    (counters) -> counters.packetsSent(type), "type", tag);
            counter(registry, "homa.packets.received", "Well-formed Homa packets received, by type", "packets",
                    (counters) -> counters.packetsReceived(type), "type", tag);
        }
        counter(registry, "homa.resends", "RESEND packets sent", "packets", EngineCounters::resendsSent);
        counter(registry, "homa.busy", "BUSY packets sent", "packets", EngineCounters::busySent);
        counter(registry, "homa.packets.retransmitted", "DATA packets sent again after a RESEND", "packets",
                EngineCounters::retransmittedDataPackets);
        counter(registry, "homa.packets.duplicate", "DATA packets whose bytes had all arrived before", "packets",
                EngineCounters::duplicatePackets);
        counter(registry, "homa.packets.malformed", "Packets dropped as short, unknown or inconsistent", "packets",
                EngineCounters::malformedPackets);
        counter(registry, "homa.packets.dropped", "First packets of new messages dropped for max-inbound-buffer",
                "packets", EngineCounters::droppedForBufferSpace, "reason", "inbound-buffer-full");
        counter(registry, "homa.packets.dropped",
                "Request DATA dropped: requests still arriving from its IP address hold their share of max-inbound-buffer",
                "packets", EngineCounters::droppedForAddressBudget, "reason", "address-budget");
        counter(registry, "homa.peers.evicted", "Idle peers forgotten early because the peer table was full", "peers",
                EngineCounters::peersEvicted);
        counter(registry, "homa.packets.dropped", "First request packets dropped: the peer table was full of busy peers",
                "packets", EngineCounters::droppedForPeerTable, "reason", "peer-table-full");
        counter(registry, "homa.requests.refused", "Requests refused unexecuted because the server is shutting down",
                "requests", EngineCounters::requestsRefused, "reason", "shutting-down");
        counter(registry, "homa.requests.refused",
                "Requests refused unexecuted because the server was full (calls in service or queued work over its bounds)",
                "requests", EngineCounters::requestsRefusedOverloaded, "reason", "overloaded");
        counter(registry, "homa.requests.refused",
                "Requests and RESENDs naming an earlier incarnation of this server: answered RPC_UNKNOWN",
                "requests", EngineCounters::staleEpochRefused, "reason", "stale-epoch");
        counter(registry, "homa.first-contacts",
                "Requests from clients that knew no epoch of this server yet: asked for again, naming it, before running",
                "requests", EngineCounters::firstContactResends);
        counter(registry, "homa.addresses.validated",
                "Client addresses that echoed this server's address token (they receive what is sent to them)",
                "peers", EngineCounters::addressesValidated);
        counter(registry, "homa.bytes.held",
                "Response bytes not sent to an address not yet validated: past 3x what it sent",
                "bytes", EngineCounters::bytesHeldForValidation, "reason", "address-validation");
        counter(registry, "homa.rpcs.timeouts", "RPCs aborted because the peer went silent", "rpcs",
                EngineCounters::timeouts);
        counter(registry, "homa.rpcs.started", "Client RPCs started", "rpcs", EngineCounters::rpcsStarted);
        counter(registry, "homa.rpcs.completed", "Client RPCs whose response arrived", "rpcs",
                EngineCounters::rpcsCompleted);
        counter(registry, "homa.requests.delivered", "Requests handed to the server", "requests",
                EngineCounters::requestsDelivered);
        counter(registry, "homa.incast.marked", "Requests sent with the INCAST flag", "requests",
                EngineCounters::incastMarked);
        counter(registry, "homa.peers.forgotten", "Idle peers whose state was dropped", "peers",
                EngineCounters::peersForgotten);
        counter(registry, "homa.resends.deferred",
                "RESENDs and NEED_ACKs not sent: their peer was silent and already probed in this backoff step", "packets",
                EngineCounters::resendsDeferred);
        counter(registry, "homa.peers.probes", "RESENDs or NEED_ACKs sent to a silent peer, one per backoff step",
                "packets", EngineCounters::silentPeerProbes);
        counter(registry, "homa.acks.ignored",
                "Acks of RPCs whose response had not gone out in full (forged or confused): the RPC is kept", "acks",
                EngineCounters::acksIgnored);
        counter(registry, "homa.packets.ignored",
                "CUTOFFS about no RPC held with the sender, or not a non-increasing list: not applied", "packets",
                EngineCounters::cutoffsIgnored, "type", "CUTOFFS");
        counter(registry, "homa.packets.conflicting",
                "DATA whose bytes differ from bytes of the message already received: the message failed", "packets",
                EngineCounters::conflictingDataPackets);
        counter(registry, "homa.rpcs.dropped",
                "Responses given up after being asked for more than 8 times their length in retransmissions", "rpcs",
                EngineCounters::retransmitBudgetExceeded, "reason", "retransmit-budget");
        counter(registry, "homa.rtt.samples", "Round-trip samples taken (GRANT or RESEND to the DATA it released)",
                "samples", EngineCounters::rttSamples);
        for (Map.Entry<String, ToLongFunction<EngineCounters>> outcome : RTT_PROBE_OUTCOMES.entrySet()) {
            counter(registry, "homa.rtt.probes", RTT_PROBES_DESCRIPTION, "packets", outcome.getValue(), "outcome",
                    outcome.getKey());
        }
        this.peerRtt = MultiGauge.builder("homa.peer.rtt")
                .description("Smoothed round-trip time to each peer (RFC 6298 SRTT)")
                .baseUnit("seconds")
                .register(registry);
        FunctionCounter.builder("homa.datagrams.dropped", this.transport, HomaTransport::droppedDatagrams)
                .description("Datagrams dropped before the engine saw them")
                .baseUnit("datagrams")
                .register(registry);
        Gauge.builder("homa.eventloop.lag", this.transport, (t) -> t.eventLoopLagNs() / 1e9)
                .description("How late the transport's event loop ran its latest 100 ms probe task: "
                        + "what a packet waits behind work holding the loop (a blocking handler shows here)")
                .baseUnit("seconds")
                .register(registry);
        FunctionCounter.builder("homa.requests.dropped", this.transport, HomaTransport::droppedRequests)
                .description("Requests dropped unanswered because the endpoint has no handler")
                .baseUnit("requests")
                .register(registry);
        // packet authentication: datagrams dropped before the engine saw them
        FunctionCounter.builder("homa.datagrams.unauthenticated", this.transport,
                HomaTransport::unauthenticatedDatagrams)
                .description("Datagrams dropped because they did not authenticate (homa.security.mode on): short,"
                        + " unknown key id, or a tag that does not verify")
                .baseUnit("datagrams")
                .register(registry);
        FunctionCounter.builder("homa.datagrams.replayed", this.transport, HomaTransport::replayedDatagrams)
                .description("Authentic datagrams dropped as replays (counter seen before or below the window)")
                .baseUnit("datagrams")
                .register(registry);
        startSampling();
    }

    private void counter(MeterRegistry registry, String name, String description, String unit,
            ToLongFunction<EngineCounters> value, String... tags) {
        FunctionCounter.builder(name, this.latest, (holder) -> value.applyAsLong(holder.get()))
                .description(description)
                .baseUnit(unit)
                .tags(tags)
                .register(registry);
    }

    /**
     * Takes a snapshot of the engine's counters now; the meters read it once it arrives.
     *
     * @return the snapshot, emitted on the transport's event loop; an error if the transport is
     *     disposed
     */
    public Mono<EngineCounters> sample() {
        return this.transport.counters().doOnNext((counters) -> {
            this.latest.set(counters);
            MultiGauge gauge = this.peerRtt;
            if (gauge != null) {
                List<MultiGauge.Row<?>> rows = counters.peerSmoothedRttNs().entrySet().stream()
                        .<MultiGauge.Row<?>>map((rtt) -> MultiGauge.Row.of(Tags.of("peer",
                                rtt.getKey().getHostString() + ":" + rtt.getKey().getPort()), rtt.getValue() / 1e9))
                        .toList();
                gauge.register(rows, true);
            }
        });
    }

    /** The snapshot the meters read. */
    public EngineCounters latest() {
        return this.latest.get();
    }

    private void startSampling() {
        if (this.closed || this.sampling.get() != null) {
            return;
        }
        Disposable loop = Flux.interval(Duration.ZERO, this.sampleInterval)
                .onBackpressureDrop()
                .concatMap((tick) -> sample().timeout(this.sampleInterval).onErrorResume((error) -> Mono.empty()), 1)
                .takeUntilOther(this.transport.onDispose())
                .subscribe();
        if (!this.sampling.compareAndSet(null, loop)) {
            loop.dispose();
        }
        else if (this.closed) {
            loop.dispose();
        }
    }

    /** Stops sampling; the meters keep the last snapshot. */
    @Override
    public void close() {
        this.closed = true;
        Disposable loop = this.sampling.get();
        if (loop != null) {
            loop.dispose();
        }
    }
}
