/**
 * Packet protection below the engine: sealing and opening datagrams, key derivation and the
 * replay window. Not API: nothing here is for use outside homa-reactive.
 */
@NullMarked
package io.homa.reactive.internal.security;

import org.jspecify.annotations.NullMarked;
