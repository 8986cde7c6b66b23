/**
 * Spring Boot auto-configuration for Homa RPC: {@code homa.*} properties,
 * {@link io.homa.spring.HomaService @HomaService} export and the
 * {@link io.homa.reactive.rpc.HomaClient} bean.
 */
@NullMarked
package io.homa.spring;

import org.jspecify.annotations.NullMarked;
