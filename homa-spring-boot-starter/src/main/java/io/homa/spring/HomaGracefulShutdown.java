package io.homa.spring;

import io.homa.reactive.rpc.RpcDispatcher;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Graceful shutdown of the Homa server: when the context stops, the dispatcher answers new
 * requests with UNAVAILABLE and this lifecycle waits (without blocking the shutdown thread) until
 * the RPCs in flight have finished or {@code homa.server.shutdown-grace-period} has passed. The
 * transport is disposed later, when its bean is destroyed, so the answers of the finished RPCs
 * still go out and outbound calls keep working meanwhile.
 *
 * <p>Phase {@link #PHASE}: stops before lifecycle beans of the default phase (for example those
 * that in-flight handlers may use), like a web server's graceful shutdown.
 */
final class HomaGracefulShutdown implements SmartLifecycle {

    /** Same phase as Spring Boot's web server graceful shutdown. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2048;

    private static final Logger logger = LoggerFactory.getLogger(HomaGracefulShutdown.class);

    private final RpcDispatcher dispatcher;

    private final Duration gracePeriod;

    private volatile boolean running;

    HomaGracefulShutdown(RpcDispatcher dispatcher, Duration gracePeriod) {
        this.dispatcher = dispatcher;
        this.gracePeriod = gracePeriod;
    }

    @Override
    public void start() {
        this.running = true;
    }

    @Override
    public void stop() {
        throw new UnsupportedOperationException("Stop must not be invoked directly");
    }

    @Override
    public void stop(Runnable callback) {
        this.running = false;
        int inFlight = this.dispatcher.inFlight();
        if (inFlight > 0) {
            logger.info("Homa graceful shutdown: waiting up to {} for {} RPC(s) in flight", this.gracePeriod, inFlight);
        }
        this.dispatcher.shutdown(this.gracePeriod)
                .doFinally((signal) -> {
                    int left = this.dispatcher.inFlight();
                    if (left > 0) {
                        logger.warn("Homa graceful shutdown: grace period {} ended with {} RPC(s) still in flight",
                                this.gracePeriod, left);
                    }
                    callback.run();
                })
                .subscribe(null, (error) -> logger.warn("Homa graceful shutdown failed", error));
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
