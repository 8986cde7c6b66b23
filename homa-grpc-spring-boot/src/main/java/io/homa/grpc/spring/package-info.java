/**
 * spring-grpc over Homa: a {@code GrpcChannelFactory} for {@code homa://} targets and a
 * {@code GrpcServerFactory} serving {@code BindableService} beans on the application's Homa endpoint.
 */
@NullMarked
package io.homa.grpc.spring;

import org.jspecify.annotations.NullMarked;
