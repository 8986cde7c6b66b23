package io.homa.reactive;

import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;

/**
 * One request delivered to a server's {@link HomaRequestHandler}.
 *
 * @param client the client endpoint
 * @param rpcId the client's rpcid
 * @param payload the request bytes; owned by the transport, valid until the handler's
 *     {@code Mono} terminates (retain it to keep it longer). Its memory is reused for later
 *     messages once it is released: neither it nor an array taken from it may be read afterwards.
 *     A response built on it (an echo) is sent from its arrays, which are then kept from reuse.
 */
public record HomaRequest(InetSocketAddress client, long rpcId, ByteBuf payload) {}
