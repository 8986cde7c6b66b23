/**
 * The implementation of {@link io.homa.reactive.HomaTransport} on Netty, in its parts: the datagram
 * bootstrap and the offloads it picks, the link probe, the engine driver's duty cycle, the pending
 * client calls, request dispatch, the drain, and error mapping. Not API: nothing here is for use
 * outside homa-reactive, and any of it may change without notice.
 */
@NullMarked
package io.homa.reactive.internal.transport;

import org.jspecify.annotations.NullMarked;
