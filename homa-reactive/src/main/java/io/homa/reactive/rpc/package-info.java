/**
 * The RPC layer on top of {@link io.homa.reactive.HomaTransport}. A request names a service, a
 * method and a codec, carries metadata (deadline, trace context, ...) and the encoded arguments
 * ({@link io.homa.reactive.rpc.RpcEnvelope}, wire version 2); a response carries a
 * {@link io.homa.reactive.HomaStatus}, an error message, metadata (e.g. the remote exception type)
 * and the encoded result.
 *
 * <p>{@link io.homa.reactive.rpc.HomaClient} is the client (unary calls and demand-driven
 * streams, deadlines, {@link io.homa.reactive.rpc.HomaClientInterceptor interceptors});
 * {@link io.homa.reactive.rpc.RpcDispatcher} the server (exported
 * {@link io.homa.reactive.rpc.RpcMethod methods}, {@link io.homa.reactive.rpc.RpcExceptionMapper
 * exception mappers}, {@link io.homa.reactive.rpc.HomaServerInterceptor interceptors}, graceful
 * shutdown). {@link io.homa.reactive.rpc.PayloadCodec}s (JSON by default, Smile, CBOR) encode
 * values; {@link io.homa.reactive.rpc.PayloadCodecs} holds the ones a peer speaks.
 */
@NullMarked
package io.homa.reactive.rpc;

import org.jspecify.annotations.NullMarked;
