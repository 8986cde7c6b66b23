package io.homa.demo;

import io.homa.demo.workload.HeadOfLineBenchmark;
import io.homa.demo.workload.HeadOfLineResult;
import io.homa.demo.workload.LoadGenerator;
import io.homa.demo.workload.UnloadedRtt;
import io.homa.workloads.Workload;
import io.homa.demo.workload.WorkloadResult;
import io.homa.engine.EngineCounters;
import io.homa.engine.wire.PacketType;
import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.spring.HomaProperties;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Runs the demo's main job once the application has started: the echo server, the workload
 * client, or both (see {@link DemoProperties#mode()}). The workload's two endpoints are
 * {@link HomaTransport}s of their own at the message layer, separate from the starter's transport
 * that serves {@code @HomaService} beans, with the same {@code homa.protocol.*} and
 * {@code homa.transport.*} settings (the starter's {@link HomaTransportConfig}) but their own
 * address and port.
 *
 * <p>Shutdown (the context closes, e.g. on SIGTERM): in server mode the echo server first
 * {@linkplain HomaTransport#drain drains} for at most {@code homa.server.shutdown-grace-period}
 * plus {@code homa.server.shutdown-ack-timeout}: requests that arrive are refused unexecuted (their
 * clients fail with UNAVAILABLE "server is shutting down" at once, not with a timeout), the echoes
 * already given out are retransmitted until acknowledged; then it closes.
 *
 * <p>Exit code ({@link ExitCodeGenerator}): 0 when every RPC succeeded, 1 otherwise.
 */
@Component
@Order(Ordered.LOWEST_PRECEDENCE)
public class DemoRunner implements ApplicationRunner, ExitCodeGenerator, DisposableBean {
    private static final Logger log = LoggerFactory.getLogger(DemoRunner.class);
    private static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration DISPOSE_TIMEOUT = Duration.ofSeconds(5);
    /** The starter's defaults: a 10 s grace period plus a 2 s acknowledgement timeout. */
    static final Duration DEFAULT_SHUTDOWN_DRAIN = Duration.ofSeconds(12);

    /** The message-layer echo: the response is the request's bytes. */
    static final HomaRequestHandler ECHO = request -> Mono.just(request.payload().retainedDuplicate());

    private final DemoProperties properties;
    private final HomaTransportConfig transportConfig;
    private final Duration shutdownDrain;
    private final PrintStream out;
    private final ObjectProvider<HomaTransport> endpoint;
    private volatile int exitCode = 1;
    private volatile HomaTransport server;
    private volatile HomaTransport client;
    private volatile WorkloadResult result;
    private volatile HeadOfLineResult headOfLineResult;

    /**
     * @param properties the demo's arguments
     * @param transportConfig protocol and socket settings of the workload's transports (bind
     *     address and port are replaced)
     * @param homaProperties the starter's settings: {@code homa.server.shutdown-grace-period} and
     *     {@code homa.server.shutdown-ack-timeout} bound the echo server's drain on shutdown
     * @param endpoint the starter's endpoint, which a {@code shard} mode run serves until it closes
     */
    @Autowired
    public DemoRunner(DemoProperties properties, HomaTransportConfig transportConfig, HomaProperties homaProperties,
            ObjectProvider<HomaTransport> endpoint) {
        this(properties, transportConfig, homaProperties.getServer().getShutdownGracePeriod()
                .plus(homaProperties.getServer().getShutdownAckTimeout()), System.out, endpoint);
    }

    /** With the default transport and shutdown settings. */
    DemoRunner(DemoProperties properties, PrintStream out) {
        this(properties, HomaTransportConfig.defaults(), DEFAULT_SHUTDOWN_DRAIN, out);
    }

    /**
     * @param shutdownDrain the longest drain of the echo server on shutdown, at least 0
     */
    DemoRunner(DemoProperties properties, HomaTransportConfig transportConfig, Duration shutdownDrain, PrintStream out) {
        this(properties, transportConfig, shutdownDrain, out, null);
    }

    private DemoRunner(DemoProperties properties, HomaTransportConfig transportConfig, Duration shutdownDrain,
            PrintStream out, ObjectProvider<HomaTransport> endpoint) {
        this.properties = properties;
        this.transportConfig = transportConfig;
        this.shutdownDrain = shutdownDrain;
        this.out = out;
        this.endpoint = endpoint;
    }

    /**
     * Runs the demo: in {@code local} and {@code client} mode the whole workload, in {@code hol}
     * mode the head-of-line test, returning when it is done; in {@code server} mode binds the echo
     * server and returns (see {@link #awaitServerClosed()}).
     */
    @Override
    public void run(ApplicationArguments args) {
        try {
            switch (properties.mode()) {
                case SERVER -> serve();
                case CLIENT -> exitCode = runWorkload(resolve(properties.peerAddress()));
                case LOCAL -> {
                    server = bind("127.0.0.1", 0, ECHO);
                    exitCode = runWorkload(server.localAddress());
                }
                case HOL -> exitCode = runHeadOfLine();
                // The starter's endpoint serves kv (KvShardMode prints it); ShardWatch runs the watch.
                case SHARD, WATCH -> exitCode = 0;
            }
        } catch (RuntimeException e) {
            exitCode = 1;
            log.error("Demo failed: {}", e.toString());
            log.debug("Demo failure", e);
        } finally {
            if (properties.mode() != DemoProperties.Mode.SERVER) {
                disposeTransports();
            }
        }
    }

    @Override
    public int getExitCode() {
        return exitCode;
    }

    /** The loaded run's measurements, once it has finished; {@code null} before or in server mode. */
    public WorkloadResult result() {
        return result;
    }

    /** The head-of-line test's measurements ({@code hol} mode), once it has finished; else {@code null}. */
    public HeadOfLineResult headOfLineResult() {
        return headOfLineResult;
    }

    /** The echo server's transport while it runs (local and server mode), else {@code null}. */
    HomaTransport server() {
        return server;
    }

    @Override
    public void destroy() {
        HomaTransport serving = server;
        if (properties.mode() == DemoProperties.Mode.SERVER && serving != null) {
            drain(serving);
            printCounters("server", serving); // e.g. how many malformed datagrams were dropped
        }
        disposeTransports();
    }

    /** Server mode, on shutdown: refuses new requests and waits until the echoes given out are acknowledged. */
    private void drain(HomaTransport serving) {
        log.info("Homa echo server on UDP {} shutting down: refusing new requests, waiting up to {} for the responses"
                + " to be acknowledged", serving.localAddress(), shutdownDrain);
        try {
            serving.drain(shutdownDrain).block(shutdownDrain.plus(DISPOSE_TIMEOUT));
        } catch (RuntimeException e) {
            log.warn("Draining the echo server failed: {}", e.toString());
        }
        log.info("Homa echo server drained: {} request(s) refused while shutting down", serving.refusedRequests());
    }

    private void serve() {
        server = bind("0.0.0.0", properties.port(), ECHO);
        log.info("Homa echo server listening on UDP {}; stop it with Ctrl-C", server.localAddress());
        exitCode = 0;
    }

    /**
     * In server mode, waits until the echo server is closed (when the application context
     * closes, e.g. on SIGTERM or Ctrl-C), in shard mode until the starter's endpoint is; returns
     * at once in the other modes.
     *
     * @return whether it waited (server mode with a bound server, shard mode with an endpoint)
     */
    public boolean awaitServerClosed() {
        HomaTransport serving = switch (properties.mode()) {
            case SERVER -> server;
            case SHARD -> endpoint == null ? null : endpoint.getIfAvailable();
            default -> null;
        };
        if (serving == null) {
            return false;
        }
        serving.onDispose().block();
        return true;
    }

    private int runWorkload(InetSocketAddress serverAddress) {
        Workload distribution = Workload.load(properties.workload());
        client = bind(properties.mode() == DemoProperties.Mode.LOCAL ? "127.0.0.1" : "0.0.0.0", 0, null);
        HomaTransport transport = client;
        LoadGenerator generator = new LoadGenerator(
                request -> transport.call(serverAddress, request),
                distribution,
                properties.seed(),
                properties.rpcTimeout(),
                out);
        out.printf(Locale.ROOT, "Homa echo workload %s (%,d..%,d bytes, mean %,.0f bytes), %d outstanding RPCs for %s,"
                        + " server %s, client %s, seed %d%n",
                distribution.name(), distribution.minLengthBytes(), distribution.maxLengthBytes(),
                distribution.meanLengthBytes(), properties.concurrency(), format(properties.duration()),
                serverAddress, client.localAddress(), properties.seed());
        if (!properties.warmup().isZero()) {
            long rpcs = generator.warmUp(properties.warmup(), properties.concurrency());
            out.printf(Locale.ROOT, "Warm-up: %,d RPCs in %s%n", rpcs, format(properties.warmup()));
        }
        UnloadedRtt unloaded = generator.measureUnloaded(UnloadedRtt.probeLengths(distribution), properties.probeSamples());
        out.printf("Unloaded RTT (median of %d sequential RPCs per length):%n", properties.probeSamples());
        out.print(unloaded.format());
        WorkloadResult result = generator.run(properties.duration(), properties.concurrency(), unloaded);
        out.print(result.report());
        this.result = result;
        printCounters("client", client);
        if (server != null) {
            printCounters("server", server);
        }
        long failures = generator.failedRpcs();
        if (failures > 0) {
            out.printf(Locale.ROOT, "%,d RPCs failed in all (warm-up, probes and run); first: %s%n",
                    failures, generator.firstFailure());
            out.printf(Locale.ROOT, "Failures by kind: %s%n", generator.failuresByKind());
            return 1;
        }
        return 0;
    }

    /** {@code hol} mode: an echo server and a client on loopback, then {@link HeadOfLineBenchmark}. */
    private int runHeadOfLine() {
        server = bind("127.0.0.1", 0, ECHO);
        client = bind("127.0.0.1", 0, null);
        InetSocketAddress serverAddress = server.localAddress();
        HomaTransport transport = client;
        out.printf(Locale.ROOT, "Homa head-of-line test: %d-byte echo RPCs alone, then while %d %,d-byte echo RPCs stay"
                        + " outstanding between the same client %s and server %s; %s under load%n",
                HeadOfLineBenchmark.SHORT_LENGTH_BYTES, HeadOfLineBenchmark.LONG_RPCS_OUTSTANDING,
                HeadOfLineBenchmark.LONG_LENGTH_BYTES, client.localAddress(), serverAddress,
                format(properties.duration()));
        HeadOfLineBenchmark benchmark = new HeadOfLineBenchmark(
                request -> transport.call(serverAddress, request), properties.seed(), properties.rpcTimeout(), out);
        headOfLineResult = benchmark.run(properties.warmup(), properties.duration());
        printCounters("client", client);
        printCounters("server", server);
        return benchmark.failedRpcs() == 0 ? 0 : 1;
    }

    private void printCounters(String name, HomaTransport transport) {
        try {
            EngineCounters counters = transport.counters().block(DISPOSE_TIMEOUT);
            if (counters != null) {
                out.printf(Locale.ROOT, "Homa %s engine: %,d RESENDs sent (%,d of them the one probe per backoff step of a"
                                + " silent peer; %,d more deferred), %,d BUSY received, %,d DATA packets retransmitted,"
                                + " %,d timeouts, %,d malformed packets; smoothed RTT %s%n",
                        name, counters.resendsSent(), counters.silentPeerProbes(), counters.resendsDeferred(),
                        counters.packetsReceived(PacketType.BUSY), counters.retransmittedDataPackets(),
                        counters.timeouts(), counters.malformedPackets(), formatRtts(counters));
                if (transport.unauthenticatedDatagrams() > 0 || transport.replayedDatagrams() > 0) {
                    out.printf(Locale.ROOT, "Homa %s transport: %,d unauthenticated and %,d replayed datagrams dropped%n",
                            name, transport.unauthenticatedDatagrams(), transport.replayedDatagrams());
                }
            }
        } catch (RuntimeException e) {
            log.debug("No counters from the {} transport", name, e);
        }
    }

    private static String formatRtts(EngineCounters counters) {
        if (counters.peerSmoothedRttNs().isEmpty()) {
            return "(no sample)";
        }
        StringBuilder text = new StringBuilder();
        counters.peerSmoothedRttNs().forEach((peer, rttNs) -> text.append(text.isEmpty() ? "" : ", ")
                .append(peer.getHostString()).append(':').append(peer.getPort())
                .append(String.format(Locale.ROOT, " %.0f µs", rttNs / 1e3)));
        return text.toString();
    }

    private HomaTransport bind(String address, int port, HomaRequestHandler handler) {
        HomaTransportConfig config = transportConfig.toBuilder().bindAddress(address).port(port).build();
        return HomaTransport.bindNow(config, handler, BIND_TIMEOUT);
    }

    private static InetSocketAddress resolve(InetSocketAddress unresolved) {
        InetSocketAddress address = new InetSocketAddress(unresolved.getHostString(), unresolved.getPort());
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("--peer host '" + unresolved.getHostString() + "' does not resolve");
        }
        return address;
    }

    private void disposeTransports() {
        HomaTransport c = client;
        HomaTransport s = server;
        client = null;
        server = null;
        for (HomaTransport transport : new HomaTransport[] {c, s}) {
            if (transport != null) {
                try {
                    transport.disposeNow(DISPOSE_TIMEOUT);
                } catch (RuntimeException e) {
                    log.warn("Closing a Homa transport failed: {}", e.toString());
                }
            }
        }
    }

    private static String format(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
    }
}
