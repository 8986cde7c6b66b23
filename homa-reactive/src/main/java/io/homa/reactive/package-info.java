/**
 * The message layer of Homa for Java: {@link io.homa.reactive.HomaTransport} sends requests and
 * answers them over one UDP socket driven by a sans-IO {@link io.homa.engine.HomaEngine}.
 * Requests and responses are whole messages of 1 byte to {@code maxMessageBytes}; failures are
 * {@link io.homa.reactive.HomaException}s carrying a {@link io.homa.reactive.HomaStatus}.
 */
@NullMarked
package io.homa.reactive;

import org.jspecify.annotations.NullMarked;
