/**
 * gRPC over Homa: a grpc-java {@link io.homa.grpc.HomaManagedChannel} and a way to serve
 * {@code ServerServiceDefinition}s on a Homa endpoint ({@link io.homa.grpc.HomaGrpcRegistrar} on an
 * existing dispatcher, {@link io.homa.grpc.HomaGrpcServer} standalone), built on grpc-java's
 * public API only.
 *
 * <p>Wire mapping: gRPC calls ride on the RPC layer of {@code homa-reactive}, not on raw Homa
 * messages. A gRPC method {@code package.Service/Method} is the RPC layer's service
 * {@code package.Service} and method {@code Method}, so it shares the port, the dispatcher, the
 * overload control, the graceful shutdown and the deadline checks of {@code @HomaService} methods;
 * its payloads are raw bytes (the marshaller's, no JSON) framed as {@code GrpcWire} describes. A
 * unary call is one Homa RPC; streaming calls are the RPC layer's streams, whose batches, pushes,
 * window and cancel give gRPC's flow control ({@code request(n)}, {@code isReady}) and
 * cancellation; a unary call's cancel is an RPC of its own. Raw Homa messages would have meant
 * rebuilding all of that for gRPC alone. See docs/grpc.md.
 */
@NullMarked
package io.homa.grpc;

import org.jspecify.annotations.NullMarked;
