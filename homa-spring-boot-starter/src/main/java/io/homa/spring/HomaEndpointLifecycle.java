package io.homa.spring;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.spring.reflection.HomaReflectionService;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Mono;

/**
 * The Homa endpoint's lifecycle, in the shape of Spring Boot's own servers: one
 * {@link SmartLifecycle} that starts serving once the context is refreshed and stops with a grace
 * period.
 *
 * <ul>
 *   <li>The socket binds when the {@link HomaTransport} bean is created, so that the
 *       application's own clients can call other services while the context is still being
 *       built; requests that reach this endpoint meanwhile are held by the engine (their clients'
 *       RESENDs are answered BUSY, so they neither time out nor execute twice) and delivered, in
 *       arrival order, when {@link #start()} runs: no caller sees UNIMPLEMENTED for a service that
 *       is still being registered. (A call from this application to its own endpoint during
 *       refresh therefore waits until then: do not block on one in an initializer.)
 *   <li>{@link #start()} logs one INFO line naming the bound address and every exported service
 *       with its methods, and starts a non-daemon thread, {@code homa-server-await}, that keeps
 *       the JVM alive while the endpoint serves (the event loops are daemon threads, so an
 *       application without a web server would otherwise exit as soon as {@code main} returns,
 *       as Spring Boot's own servers keep theirs alive).
 *   <li>{@link #stop(Runnable)}, without blocking the shutdown thread, in two steps. First the
 *       dispatcher answers new calls (and stream opens) with UNAVAILABLE "server is shutting down"
 *       while the calls in flight and open streams go on, until none is left or
 *       {@code homa.server.shutdown-grace-period} has passed (the rest are then cancelled and
 *       answered UNAVAILABLE). Then the transport {@linkplain HomaTransport#drain drains}: it
 *       refuses every new request unexecuted (its client fails with UNAVAILABLE "server is
 *       shutting down" at once and stops sending here) and keeps answering RESENDs and sending
 *       NEED_ACKs until every response is acknowledged, for at most what is left of the grace
 *       period plus {@code homa.server.shutdown-ack-timeout}. The transport is disposed later,
 *       when its bean is destroyed, so outbound calls keep working meanwhile (and requests that
 *       arrive meanwhile are still refused).
 * </ul>
 *
 * <p>Phase {@link #PHASE}: started late and stopped early, like a web server's graceful shutdown.
 */
public final class HomaEndpointLifecycle implements SmartLifecycle {

    /** Default of {@code homa.server.shutdown-ack-timeout}. */
    public static final Duration DEFAULT_ACK_TIMEOUT = Duration.ofSeconds(2);

    /** Same phase as Spring Boot's web server graceful shutdown. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2048;

    private static final Logger logger = LoggerFactory.getLogger(HomaEndpointLifecycle.class);

    private final HomaTransport transport;

    private final RpcDispatcher dispatcher;

    private final Duration gracePeriod;

    private final Duration ackTimeout;

    private volatile boolean running;

    private volatile CountDownLatch serving = new CountDownLatch(0);

    /**
     * With an acknowledgement timeout of {@link #DEFAULT_ACK_TIMEOUT}.
     *
     * @param transport the endpoint, bound with requests held until {@link #start()}
     * @param dispatcher the server side of the RPC layer
     * @param gracePeriod how long {@link #stop(Runnable)} waits for RPCs in flight, at least 0
     */
    public HomaEndpointLifecycle(HomaTransport transport, RpcDispatcher dispatcher, Duration gracePeriod) {
        this(transport, dispatcher, gracePeriod, DEFAULT_ACK_TIMEOUT);
    }

    /**
     * @param transport the endpoint, bound with requests held until {@link #start()}
     * @param dispatcher the server side of the RPC layer
     * @param gracePeriod how long {@link #stop(Runnable)} waits for RPCs in flight, at least 0
     * @param ackTimeout how much longer than the grace period it waits for the responses to be
     *     acknowledged, at least 0
     * @throws IllegalArgumentException if a duration is negative
     */
    public HomaEndpointLifecycle(HomaTransport transport, RpcDispatcher dispatcher, Duration gracePeriod,
            Duration ackTimeout) {
        if (gracePeriod.isNegative() || ackTimeout.isNegative()) {
            throw new IllegalArgumentException("gracePeriod and ackTimeout must not be negative, were " + gracePeriod
                    + " and " + ackTimeout);
        }
        this.transport = transport;
        this.dispatcher = dispatcher;
        this.gracePeriod = gracePeriod;
        this.ackTimeout = ackTimeout;
    }

    @Override
    public void start() {
        this.running = true;
        this.transport.startServing();
        CountDownLatch latch = new CountDownLatch(1);
        this.serving = latch;
        this.transport.onDispose().doFinally((signal) -> latch.countDown()).subscribe(null, (error) -> { });
        Thread await = new Thread(() -> {
            try {
                latch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "homa-server-await");
        await.setDaemon(false);
        await.setContextClassLoader(getClass().getClassLoader());
        await.start();
        logger.info("Homa endpoint on UDP {} serving {} ({})", this.transport.localAddress(), describeServices(),
                this.transport.dataPath());
    }

    /**
     * Every exported service with its methods, e.g. {@code greeting [count, greet], kv [get, put]},
     * then {@code , reflection on} when the built-in reflection service is registered.
     */
    String describeServices() {
        Map<String, TreeSet<String>> methods = new TreeMap<>();
        boolean reflection = false;
        for (RpcMethod method : this.dispatcher.methods()) {
            if (method.service().equals(HomaReflectionService.SERVICE)) {
                reflection = true;
                continue;
            }
            methods.computeIfAbsent(method.service(), (service) -> new TreeSet<>()).add(method.method());
        }
        String services = methods.isEmpty() ? "no services" : methods.entrySet().stream()
                .map((entry) -> entry.getKey() + " " + entry.getValue())
                .collect(Collectors.joining(", "));
        return reflection ? services + ", reflection on" : services;
    }

    @Override
    public void stop() {
        throw new UnsupportedOperationException("Stop must not be invoked directly");
    }

    @Override
    public void stop(Runnable callback) {
        this.running = false;
        this.serving.countDown();
        int inFlight = this.dispatcher.inFlight();
        if (inFlight > 0) {
            logger.info("Homa graceful shutdown: waiting up to {} for {} RPC(s) in flight", this.gracePeriod, inFlight);
        }
        long startNs = System.nanoTime();
        this.dispatcher.shutdown(this.gracePeriod)
                .doOnTerminate(() -> {
                    int left = this.dispatcher.inFlight();
                    if (left > 0) {
                        logger.warn("Homa graceful shutdown: grace period {} ended with {} RPC(s) still in flight",
                                this.gracePeriod, left);
                    }
                })
                .onErrorResume((error) -> {
                    logger.warn("Homa graceful shutdown failed", error);
                    return Mono.empty();
                })
                .then(Mono.defer(() -> this.transport.drain(drainTime(System.nanoTime() - startNs))))
                .doFinally((signal) -> {
                    long refused = this.transport.refusedRequests();
                    if (refused > 0) {
                        logger.info("Homa graceful shutdown: refused {} request(s) that arrived while draining", refused);
                    }
                    callback.run();
                })
                .subscribe(null, (error) -> logger.warn("Homa graceful shutdown failed", error));
    }

    /** What is left of the grace period after {@code elapsedNs}, plus the acknowledgement timeout. */
    private Duration drainTime(long elapsedNs) {
        Duration left = this.gracePeriod.minusNanos(elapsedNs);
        return (left.isNegative() ? Duration.ZERO : left).plus(this.ackTimeout);
    }

    @Override
    public boolean isRunning() {
        return this.running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
