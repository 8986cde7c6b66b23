/**
 * Observability of Homa calls: Micrometer timers for client and server calls
 * ({@code homa.client.calls}, {@code homa.server.calls}), protocol meters from the engine's
 * counters ({@code homa.packets.*}, ...), Micrometer Observations with trace context carried in the
 * envelope metadata, and a DEBUG log line per failed call.
 */
@NullMarked
package io.homa.spring.observability;

import org.jspecify.annotations.NullMarked;
