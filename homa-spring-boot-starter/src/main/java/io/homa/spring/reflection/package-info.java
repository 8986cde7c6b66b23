/**
 * Server reflection: the built-in service {@value io.homa.spring.reflection.HomaReflectionService#SERVICE}
 * that lists the exported services and methods with JSON Schemas of their parameters and results,
 * for tools such as the {@code homa} command-line client (as gRPC's server reflection serves
 * {@code grpcurl}).
 */
@NullMarked
package io.homa.spring.reflection;

import org.jspecify.annotations.NullMarked;
