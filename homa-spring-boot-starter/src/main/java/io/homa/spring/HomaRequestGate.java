package io.homa.spring;

import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaRequestHandler;
import io.netty.buffer.ByteBuf;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The handler the auto-configured transport binds with. The transport binds while the context is
 * still being built (the {@code HomaClient} bean needs it), before every {@code @HomaService} is
 * registered; requests that arrive then wait here and are dispatched once the context has started
 * (the last lifecycle phase), so no early caller sees UNIMPLEMENTED for a service that exists.
 * Once open, the gate stays open until the transport is disposed.
 */
final class HomaRequestGate implements SmartLifecycle {

    private final HomaRequestHandler delegate;

    private final Sinks.Empty<Void> opened = Sinks.empty();

    private final Mono<Void> whenOpen = this.opened.asMono();

    private volatile boolean open;

    private volatile boolean running;

    HomaRequestGate(HomaRequestHandler delegate) {
        this.delegate = delegate;
    }

    /** Dispatches now if open, else once the gate opens. */
    Mono<ByteBuf> handle(HomaRequest request) {
        if (this.open) {
            return this.delegate.handle(request);
        }
        return this.whenOpen.then(Mono.defer(() -> this.delegate.handle(request)));
    }

    boolean isOpen() {
        return this.open;
    }

    @Override
    public void start() {
        this.running = true;
        this.open = true;
        this.opened.tryEmitEmpty();
    }

    /** Stopping leaves the gate open: requests in flight and arriving until dispose are served. */
    @Override
    public void stop() {
        this.running = false;
    }

    @Override
    public boolean isRunning() {
        return this.running;
    }
}
