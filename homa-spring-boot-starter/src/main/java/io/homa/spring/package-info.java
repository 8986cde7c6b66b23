/**
 * Spring Boot auto-configuration for Homa RPC: {@code homa.*} properties,
 * {@link io.homa.spring.HomaService @HomaService} export with
 * {@link io.homa.spring.HomaMethod @HomaMethod} and
 * {@link io.homa.spring.HomaExceptionHandler @HomaExceptionHandler}, graceful shutdown, and the
 * {@link io.homa.reactive.rpc.HomaClient} bean (declarative clients: {@link io.homa.spring.client}).
 */
@NullMarked
package io.homa.spring;

import org.jspecify.annotations.NullMarked;
