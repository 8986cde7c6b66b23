/**
 * Spring Cloud discovery and load balancing for Homa clients: services without a static peer
 * ({@code homa.client.peers}) are resolved through Spring Cloud's {@code ReactiveDiscoveryClient},
 * spread over their instances by Spring Cloud LoadBalancer, and resolved again on every call.
 * Active only when Spring Cloud Commons is on the classpath.
 */
@NullMarked
package io.homa.spring.discovery;

import org.jspecify.annotations.NullMarked;
