package io.homa.engine;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.trace.Timetrace;
import io.homa.engine.trace.Timetrace.Event;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The engine's events in its {@link Timetrace}, named as the engine knows them: which end of the
 * RPC this endpoint is, and the offset and length each packet type carries. Each method returns at
 * once when the trace is off; callers test {@link #enabled()} only to skip work of their own.
 */
final class EngineTrace {
    private final Timetrace trace;
    /**
     * The message last recorded as held, until a DATA packet is written: a held pacer is polled
     * again at every wake-up, and one event per hold is all a breakdown needs (more filled the
     * ring several times faster than the packets did).
     */
    private OutboundMessage lastHeld;

    EngineTrace(Timetrace trace) {
        this.trace = trace;
    }

    boolean enabled() {
        return trace.enabled();
    }

    /** A request ({@code server} false) or response handed to the engine. */
    void queued(long nowNs, boolean server, InetSocketAddress peer, long rpcId, byte[][] parts) {
        if (trace.enabled()) {
            trace.record(nowNs, Event.QUEUED, server, peer, rpcId, null, 0, (int) MessageBytes.lengthBytes(parts));
        }
    }

    /** A well-typed packet read from the socket: DATA with its offset and data length. */
    void received(long nowNs, InetSocketAddress peer, ByteBuffer packet, int offset, int length, PacketType type,
            boolean fromServer, long rpcId) {
        if (trace.enabled()) {
            boolean data = type == PacketType.DATA && length >= DataHeader.HEADER_LENGTH;
            trace.record(nowNs, Event.RECV, !fromServer, peer, rpcId, type,
                    data ? packet.getInt(offset + DataHeader.DATA_OFFSET_OFFSET) : 0,
                    data ? length - DataHeader.HEADER_LENGTH : length);
        }
    }

    /** The pacer has no credit for {@code held}, the head of the sender's queues (nothing if null). */
    void pacerHold(long nowNs, OutboundMessage held) {
        if (trace.enabled() && held != null && held != lastHeld) {
            lastHeld = held;
            trace.record(nowNs, Event.PACER_HOLD, held.serverRpc != null, held.peer.address, held.wireRpcId, null,
                    held.nextOffset, held.lengthBytes);
        }
    }

    /** A DATA packet of {@code message} written. */
    void sentData(long nowNs, OutboundMessage message, int dataOffset, int dataBytes) {
        lastHeld = null;
        trace.record(nowNs, Event.XMIT, message.serverRpc != null, message.peer.address, message.wireRpcId,
                PacketType.DATA, dataOffset, dataBytes);
    }

    /** A control packet written: a GRANT's or RESEND's offset, a RESEND's length. */
    void sentControl(long nowNs, PendingControl control) {
        trace.record(nowNs, Event.XMIT, (control.wireRpcId & HomaHeader.FROM_SERVER_BIT) != 0, control.peer,
                control.wireRpcId, control.type,
                control.type == PacketType.GRANT || control.type == PacketType.RESEND ? control.offset : 0,
                control.length);
    }

    /** A whole request ({@code server} true) or response delivered to the application. */
    void delivered(long nowNs, boolean server, InetSocketAddress peer, long rpcId, long lengthBytes) {
        trace.record(nowNs, Event.DELIVERED, server, peer, rpcId, null, 0, (int) Math.min(Integer.MAX_VALUE, lengthBytes));
    }
}
