package io.homa.engine;

/** Client side of one RPC: the request being sent and the response being received. */
final class ClientRpc {
    final long rpcId;
    final Peer server;
    OutboundMessage request;
    InboundMessage response;
    /** Last time any packet for this RPC arrived from the server (or the request started). */
    long lastHeardNs;
    /** When to RESEND next; {@link Long#MAX_VALUE} until the first request packet leaves. */
    long nextResendNs = Long.MAX_VALUE;
    /** Whether the server ever sent a packet about this RPC (so it knows of it). */
    boolean heardAbout;
    /** RESENDs sent since the server was last heard from. */
    int resendsWithoutAnswer;

    ClientRpc(long rpcId, Peer server) {
        this.rpcId = rpcId;
        this.server = server;
    }
}
