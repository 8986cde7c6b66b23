package io.homa.reactive;

import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;

/**
 * One request delivered to a server's {@link HomaRequestHandler}.
 *
 * @param client the client endpoint
 * @param rpcId the client's rpcid
 * @param payload the request bytes; owned by the transport, valid until the handler's
 *     {@code Mono} terminates (retain it to keep it longer)
 */
public record HomaRequest(InetSocketAddress client, long rpcId, ByteBuf payload) {}
