/**
 * The RPC layer on top of {@link io.homa.reactive.HomaTransport}: a request names a service and a
 * method and carries one encoded argument ({@link io.homa.reactive.rpc.RpcEnvelope}); a response
 * carries a {@link io.homa.reactive.HomaStatus}, an error message and the encoded result.
 * {@link io.homa.reactive.rpc.HomaClient} is the client, {@link io.homa.reactive.rpc.RpcDispatcher}
 * the server; {@link io.homa.reactive.rpc.PayloadCodec} (JSON by default) encodes values.
 */
@NullMarked
package io.homa.reactive.rpc;

import org.jspecify.annotations.NullMarked;
