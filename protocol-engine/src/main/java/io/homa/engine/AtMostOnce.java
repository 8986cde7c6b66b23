package io.homa.engine;

import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.HomaHeader;
import java.net.InetSocketAddress;
import java.util.function.BiConsumer;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * At-most-once execution (draft "At-most-once semantics", "ACK", "NEED_ACK", "RPC_UNKNOWN"): a
 * server keeps an RPC's state, response included, until the client acknowledges the response,
 * then remembers the rpcid as finished (per client, {@link FinishedRpcIds}) so that a late
 * duplicate of the request never executes again; a client owes the server an ACK for every
 * response it received and pays it on its next request DATA to that server or in an explicit ACK
 * packet; RPC_UNKNOWN ends an RPC on either side.
 */
final class AtMostOnce {
    /**
     * Most rpcids one ACK packet may list: what our own senders put in one (the draft sets no
     * limit; Linux Homa sends at most 5). A packet listing more is malformed.
     */
    static final int MAX_ACKS_PER_PACKET = 64;

    private final EngineParams params;
    private final RpcTable rpcs;
    private final ControlQueue control;
    private final TimerQueue timers;
    private final ArrayDeque<HomaEvent> events;
    private final EngineCounters counters;
    private final AckHeader ackRx = new AckHeader();

    AtMostOnce(EngineParams params, RpcTable rpcs, ControlQueue control, TimerQueue timers,
            ArrayDeque<HomaEvent> events, EngineCounters counters) {
        this.counters = counters;
        this.params = params;
        this.rpcs = rpcs;
        this.control = control;
        this.timers = timers;
        this.events = events;
    }

    // ---- server side

    /** Whether first-contact requests are refused as by a server shutting down ({@link #refuseFirstContacts}). */
    private boolean refusingFirstContacts;

    /** From now on {@link #answerFirstContact} refuses (shutting down) instead of asking again. */
    void refuseFirstContacts() {
        refusingFirstContacts = true;
    }

    /** Whether new requests are refused as by an overloaded server ({@link #refuseNewRequests}). */
    private boolean refusingNewRequests;

    /** Sets whether {@link #refuseNewRequest} refuses the requests this server holds no state for. */
    void refuseNewRequests(boolean refusing) {
        refusingNewRequests = refusing;
    }

    boolean refusingNewRequests() {
        return refusingNewRequests;
    }

    /**
     * Request DATA of an RPC this server holds no state for, while it is overloaded: dropped before
     * any state is made for it (no peer, no buffer, no grant), and the first packet (offset 0, which
     * every transmission of a request starts with, a RESEND's answer included) is answered with an
     * RPC_UNKNOWN whose reason byte says "overloaded": the client fails that one RPC, knowing it did
     * not run. Later packets of the same request need no answer: the client has given it up.
     *
     * @return whether the packet was refused so (handled: the caller stores nothing)
     */
    boolean refuseNewRequest(InetSocketAddress client, long rpcId, int dataOffset) {
        if (!refusingNewRequests) {
            return false;
        }
        if (dataOffset == 0) {
            tellOverloaded(client, rpcId);
        }
        return true;
    }

    /**
     * Tells the client at once, with an RPC_UNKNOWN whose reason byte says "overloaded", that its
     * request was refused unexecuted, and counts it ({@link EngineCounters#requestsRefusedOverloaded()}).
     */
    private void tellOverloaded(InetSocketAddress client, long rpcId) {
        control.rpcUnknown(client, rpcId | HomaHeader.FROM_SERVER_BIT, HomaHeader.REASON_OVERLOADED);
        counters.requestsRefusedOverloaded++;
    }

    /**
     * The client says it has the response of {@code rpcId}: release the RPC's state. An ack of an
     * RPC whose response has not gone out in full is ignored and counted
     * ({@link EngineCounters#acksIgnored()}): no client can have that response yet, so the ack is
     * forged (or the client confused), and releasing would drop the response of a live RPC. An ack
     * of an rpcid not held is remembered as finished only up to the highest rpcid the client
     * really sent ({@link FinishedRpcIds#remember}).
     */
    void acknowledge(Peer client, long rpcId) {
        ServerRpc rpc = client.serverRpcs.get(rpcId);
        if (rpc == null) {
            client.finished.remember(rpcId);
        } else if (responseSentInFull(rpc)) {
            release(rpc);
        } else {
            counters.acksIgnored++;
        }
    }

    /** Whether every byte of the RPC's response has been sent at least once. */
    private static boolean responseSentInFull(ServerRpc rpc) {
        OutboundMessage response = rpc.response;
        return response != null && response.nextOffset >= response.lengthBytes
                && (rpc.state() == ServerRpc.State.SENDING_RESPONSE || rpc.state() == ServerRpc.State.AWAITING_ACK);
    }

    /**
     * A packet about an RPC this server does not hold names {@code epoch}: if that is another
     * incarnation's, the request may have run there, so it must not run here; the
     * client is told with RPC_UNKNOWN (reason: restarted) and the refusal counted.
     *
     * @return whether the packet was refused so
     */
    boolean refuseStaleEpoch(InetSocketAddress client, long rpcId, int epoch) {
        if (epoch == 0 || epoch == HomaHeader.EPOCH_ASK || rpcs.localEpoch == 0 || epoch == rpcs.localEpoch) {
            return false;
        }
        control.rpcUnknown(client, rpcId | HomaHeader.FROM_SERVER_BIT, HomaHeader.REASON_RESTARTED);
        counters.staleEpochRefused++;
        return true;
    }

    /**
     * Tells the client at once, with an RPC_UNKNOWN whose reason byte says "shutting down", that
     * its request was refused unexecuted, and counts it ({@link EngineCounters#requestsRefused()}).
     */
    void tellShuttingDown(InetSocketAddress client, long rpcId) {
        control.rpcUnknown(client, rpcId | HomaHeader.FROM_SERVER_BIT, HomaHeader.REASON_SHUTTING_DOWN);
        counters.requestsRefused++;
    }

    /**
     * First contact: request DATA naming {@link HomaHeader#EPOCH_ASK} comes from a client
     * that knows no epoch of this server yet. Running it would leave the request unbound to any
     * incarnation, so that a copy the network delays past a restart could run again; instead the
     * packet is dropped, and the first one (offset 0) is answered with a RESEND for the request's
     * unscheduled bytes, which carries this server's epoch and address token: the client sends the
     * request again naming both, and that copy may run. One extra round trip per server a client
     * talks to, which also validates its address ({@link AddressValidation}).
     *
     * @return whether the packet was such a request (handled: the caller stores nothing)
     */
    boolean answerFirstContact(InetSocketAddress client, long rpcId, int epoch, int dataOffset) {
        if (epoch != HomaHeader.EPOCH_ASK || rpcs.localEpoch == 0) {
            return false;
        }
        if (refusingFirstContacts) {
            if (dataOffset == 0) {
                tellShuttingDown(client, rpcId);
            }
            return true;
        }
        if (dataOffset == 0) {
            control.resend(client, rpcId | HomaHeader.FROM_SERVER_BIT, 0, params.unscheduledBytes());
            counters.firstContactResends++;
        }
        return true;
    }

    /**
     * Ends a server RPC; if its request reached the application, its rpcid is remembered as
     * finished, so that it never executes again.
     */
    void release(ServerRpc rpc) {
        boolean delivered = rpc.state().delivered();
        rpcs.removeServerRpc(rpc);
        if (delivered) {
            rpc.client.finished.remember(rpc.rpcId);
        }
    }

    /**
     * Server: gives up the RPC {@code rpcId} from {@code client} unanswered ({@link #abort(ServerRpc)}).
     *
     * @return false if we do not hold it
     */
    boolean abort(InetSocketAddress client, long rpcId) {
        ServerRpc rpc = rpcs.serverRpc(client, rpcId);
        if (rpc == null) {
            return false;
        }
        abort(rpc);
        return true;
    }

    /**
     * Server: refuses the request of an RPC in service because we are shutting down: given up as
     * by {@link #abort(ServerRpc)}, and the client told at once ({@link #tellShuttingDown}).
     *
     * @return false if we do not hold it in service
     */
    boolean refuse(InetSocketAddress client, long rpcId) {
        return refuseInService(client, rpcId, this::tellShuttingDown);
    }

    /**
     * Server: refuses the request of an RPC in service because we are overloaded: given up as by
     * {@link #abort(ServerRpc)} (so a late copy never runs), and the client told at once
     * ({@link #tellOverloaded}).
     *
     * @return false if we do not hold it in service
     */
    boolean refuseOverloaded(InetSocketAddress client, long rpcId) {
        return refuseInService(client, rpcId, this::tellOverloaded);
    }

    /** Gives up an RPC we hold in service, as by {@link #abort(ServerRpc)}, and tells the client why with {@code tell}. */
    private boolean refuseInService(InetSocketAddress client, long rpcId, BiConsumer<InetSocketAddress, Long> tell) {
        ServerRpc rpc = rpcs.serverRpc(client, rpcId);
        if (rpc == null || rpc.state() != ServerRpc.State.IN_SERVICE) {
            return false;
        }
        abort(rpc);
        tell.accept(client, rpcId);
        return true;
    }

    /**
     * The application gave up a request without answering: the engine forgets the RPC and
     * remembers it as finished; the client's next RESEND is answered RPC_UNKNOWN.
     */
    void abort(ServerRpc rpc) {
        rpcs.removeServerRpc(rpc);
        rpc.client.finished.remember(rpc.rpcId);
    }

    /**
     * An ACK packet from a client: its header's rpcid and every rpcid it lists are released (each
     * as {@link #acknowledge} says).
     *
     * @return false if the packet is malformed (short, from a server, or listing more than
     *     {@value #MAX_ACKS_PER_PACKET} rpcids)
     */
    boolean onAck(InetSocketAddress from, ByteBuffer packet, int offset, int length, boolean fromServer, long rpcId) {
        if (length < AckHeader.HEADER_LENGTH || fromServer) {
            return false;
        }
        ackRx.wrap(packet, offset);
        int numAcks = ackRx.numAcks();
        if (numAcks > MAX_ACKS_PER_PACKET || length < AckHeader.packetLength(numAcks)) {
            return false;
        }
        Peer peer = rpcs.knownPeer(from);
        if (peer == null) {
            return true;
        }
        // Ports in the packet are not checked: one socket is one Homa port (see Receiver).
        acknowledge(peer, rpcId);
        for (int i = 0; i < numAcks; i++) {
            acknowledge(peer, ackRx.ackRpcId(i) & ~HomaHeader.FROM_SERVER_BIT);
        }
        return true;
    }

    /** Fails every client RPC with {@code reason}, one event each (the caller then drops all state). */
    void failAll(HomaEvent.Reason reason, String message) {
        for (ClientRpc rpc : rpcs.clientRpcs()) {
            events.add(new HomaEvent.RpcFailed(rpc.rpcId, rpc.server.address, reason, message));
        }
    }

    /**
     * A server refused a request because it is shutting down: every RPC to it whose request has
     * not left yet fails with {@link HomaEvent.Reason#SERVER_SHUTTING_DOWN}, one event each. None
     * of them reached the server, so none ran.
     *
     * @return how many RPCs failed
     */
    int failUnsentRequests(InetSocketAddress server) {
        Peer peer = rpcs.knownPeer(server);
        if (peer == null || peer.clientRpcCount == 0) {
            return 0;
        }
        java.util.List<ClientRpc> unsent = new java.util.ArrayList<>();
        for (ClientRpc rpc : rpcs.clientRpcs()) {
            if (rpc.state() == ClientRpc.State.QUEUED && rpc.server == peer) {
                unsent.add(rpc);
            }
        }
        for (ClientRpc rpc : unsent) {
            rpcs.removeClientRpc(rpc);
            events.add(new HomaEvent.RpcFailed(rpc.rpcId, server, HomaEvent.Reason.SERVER_SHUTTING_DOWN,
                    "request to " + server + " not sent: the server is shutting down (it refused another request)"));
        }
        return unsent.size();
    }

    /**
     * RPC_UNKNOWN. From a server: it has finished with (or given up) an RPC we still wait for, so
     * the response is lost; sending the request again could execute it twice, so the RPC fails
     * (a server that never saw the request asks for it with RESEND instead). From a client: it no
     * longer knows an RPC we hold, so it cannot want the response. A server's RPC_UNKNOWN whose
     * reason byte says "shutting down" ({@link HomaEngine#refuseRequest}) fails the RPC with
     * {@link HomaEvent.Reason#SERVER_SHUTTING_DOWN} instead: the request was not executed; one
     * whose reason byte says "overloaded" fails it with {@link HomaEvent.Reason#SERVER_OVERLOADED}
     * (not executed either), and nothing else changes: the server is up, other RPCs to it go on.
     *
     * @return true: the packet is well formed whatever it names
     */
    boolean onRpcUnknown(InetSocketAddress from, boolean fromServer, long rpcId, int reason) {
        if (fromServer) {
            ClientRpc rpc = rpcs.clientRpc(rpcId, from);
            if (rpc != null) {
                rpcs.removeClientRpc(rpc);
                if (reason == HomaHeader.REASON_RESTARTED) {
                    events.add(new HomaEvent.RpcFailed(rpcId, rpc.server.address, HomaEvent.Reason.SERVER_LOST_RPC,
                            "server " + rpc.server.address + " restarted (its epoch changed) after the request reached"
                                    + " its earlier incarnation, which may have executed it"));
                    return true;
                }
                if (reason == HomaHeader.REASON_SHUTTING_DOWN) {
                    events.add(new HomaEvent.RpcFailed(rpcId, rpc.server.address, HomaEvent.Reason.SERVER_SHUTTING_DOWN,
                            "server " + rpc.server.address + " refused the RPC without executing it: it is shutting down"));
                    return true;
                }
                if (reason == HomaHeader.REASON_OVERLOADED) {
                    events.add(new HomaEvent.RpcFailed(rpcId, rpc.server.address, HomaEvent.Reason.SERVER_OVERLOADED,
                            "server " + rpc.server.address + " refused the RPC without executing it: it is overloaded"));
                    return true;
                }
                if (reason == HomaHeader.REASON_RETRANSMIT_BUDGET) {
                    events.add(new HomaEvent.RpcFailed(rpcId, rpc.server.address, HomaEvent.Reason.SERVER_LOST_RPC,
                            "server " + rpc.server.address + " gave the RPC up after retransmitting its response more than "
                                    + SenderFeedback.RETRANSMIT_BUDGET_FACTOR + " times over (its retransmission budget);"
                                    + " the request was executed"));
                    return true;
                }
                events.add(new HomaEvent.RpcFailed(rpcId, rpc.server.address, HomaEvent.Reason.SERVER_LOST_RPC,
                        "server " + rpc.server.address + " no longer knows the RPC (RPC_UNKNOWN: it finished with it,"
                                + " for example reclaimed it after the client fell silent, or the rpcid is older than the"
                                + " finished ones it remembers one by one; or it restarted)"));
            }
            return true;
        }
        ServerRpc rpc = rpcs.serverRpc(from, rpcId);
        if (rpc != null) {
            release(rpc);
        }
        return true;
    }

    // ---- client side

    /**
     * We received the whole response of {@code rpcId} from {@code server}: we owe it an ACK, sent
     * with our next request DATA to it or, after {@link EngineParams#ackDelayNs()}, in an ACK.
     */
    void owe(Peer server, long rpcId, long nowNs) {
        if (server.pendingAckCount == 0) {
            server.ackFlushNs = nowNs + params.ackDelayNs();
            timers.armAtOrBefore(server, server.ackFlushNs);
        }
        server.addPendingAck(rpcId);
    }

    /** Sends every ack still owed to {@code server} in explicit ACK packets. */
    void flushAcks(Peer server) {
        while (server.pendingAckCount > 0) {
            control.ack(server, server.takePendingAck());
        }
    }
}
