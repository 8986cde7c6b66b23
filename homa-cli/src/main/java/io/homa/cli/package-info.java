/**
 * The {@code homa} command: lists the services of a Homa endpoint through its reflection service
 * ({@code homa.reflection}) and calls their methods with JSON arguments, printing JSON results, as
 * {@code grpcurl} does for gRPC. Built on {@code homa-reactive}'s {@code HomaTransport} and
 * {@code HomaClient}, without Spring.
 */
@NullMarked
package io.homa.cli;

import org.jspecify.annotations.NullMarked;
