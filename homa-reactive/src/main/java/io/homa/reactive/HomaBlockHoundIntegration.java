package io.homa.reactive;

import io.homa.reactive.internal.transport.BusyPollLoops;
import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * What BlockHound should know about the transport, loaded by BlockHound's {@code ServiceLoader}
 * wherever an application installs it ({@code BlockHound.install()}), as Reactor Netty ships its
 * own: the event loop's busy poll ({@link HomaTransportConfig#busyPollNs()}) yields the core
 * between polls with {@link Thread#yield()}, which BlockHound counts as blocking. The loop has
 * nothing to do then; nothing waits on it.
 */
public final class HomaBlockHoundIntegration implements BlockHoundIntegration {
    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside(BusyPollLoops.class.getName() + "$LoopPoll", "strategy");
    }
}
