package io.homa.engine.fuzz;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.SendOptions;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Two engines, A and B, on an in-memory link with a virtual clock, plus any number of stranger
 * addresses that junk claims to come from. Packets between A and B are delivered in order;
 * packets to strangers vanish. Every packet an engine emits is checked: priority 0..7, no larger
 * than the MTU allows. The world answers requests as the {@link Answer} of the step says.
 *
 * <p>The real rpcids of A and B start far from the rpcids junk uses ({@link JunkPackets#junkRpcIds()}),
 * so junk names a real RPC only when a step asks for it.
 */
final class FuzzWorld {
    static final InetSocketAddress A = new InetSocketAddress("10.0.0.1", 5000);
    static final InetSocketAddress B = new InetSocketAddress("10.0.0.2", 4000);
    static final long A_FIRST_RPC_ID = 0x5A5A_0000_0000_0000L;
    static final long B_FIRST_RPC_ID = 0x3C3C_0000_0000_0000L;

    /** What the world does with a {@link HomaEvent.RequestReceived}. */
    enum Answer {
        /** sendResponse with the request's bytes reversed. */
        RESPOND,
        /** abortRequest. */
        ABORT,
        /** Nothing: the application keeps the request until {@link FuzzWorld#releaseHeld()}. */
        HOLD
    }

    final EngineConfig config;
    final HomaEngine a;
    final HomaEngine b;
    long nowNs;
    private final List<Packet> inFlight = new ArrayList<>();
    /** Requests each engine has received, by rpcid (to check at-most-once and content). */
    final Map<Long, List<byte[]>> requestsAtA = new HashMap<>();
    final Map<Long, List<byte[]>> requestsAtB = new HashMap<>();
    /** Outcomes of client RPCs, by rpcid. */
    final Map<Long, HomaEvent> outcomesAtA = new HashMap<>();
    final Map<Long, HomaEvent> outcomesAtB = new HashMap<>();
    /** The real RPCs started with {@link #call}: rpcid to whether A (else B) is the client. */
    final Map<Long, Boolean> realCalls = new HashMap<>();
    private final List<Long> realCallOrder = new ArrayList<>();
    /** Requests the application holds ({@link Answer#HOLD}) until {@link #releaseHeld()}. */
    private final List<Held> held = new ArrayList<>();

    private record Held(HomaEngine engine, HomaEvent.RequestReceived request) {}

    /** Junk packets that an engine accepted as well formed, by type (how deep the junk got). */
    final Map<PacketType, Integer> junkAccepted = new EnumMap<>(PacketType.class);

    private record Packet(InetSocketAddress from, InetSocketAddress to, byte[] bytes) {}

    FuzzWorld(EngineConfig config, long originNs) {
        this.config = config;
        this.a = new HomaEngine(config, A.getPort(), A_FIRST_RPC_ID);
        this.b = new HomaEngine(config, B.getPort(), B_FIRST_RPC_ID);
        this.nowNs = originNs;
    }

    /** A stranger address; index 0 is the real peer of the engine that receives the junk. */
    static InetSocketAddress stranger(int index) {
        return new InetSocketAddress("10.9." + (index / 250) + "." + (1 + index % 250), 1000 + index);
    }

    /**
     * Hands junk to one engine.
     *
     * @param toB whether B (else A) receives it
     * @param fromIndex 0: the junk claims to come from the other engine; else from a stranger
     * @param liveIndex negative: the junk keeps its own rpcid; else it names real RPC number
     *     {@code liveIndex} (modulo the number started so far, S bit kept), as a confused or lying
     *     peer would
     * @return the bytes as delivered
     */
    byte[] inject(boolean toB, int fromIndex, int liveIndex, JunkPackets.Junk junk) {
        HomaEngine to = toB ? b : a;
        InetSocketAddress from = fromIndex == 0 ? (toB ? A : B) : stranger(fromIndex);
        byte[] bytes = junk.bytes();
        if (liveIndex >= 0 && !realCallOrder.isEmpty() && bytes.length >= HomaHeader.COMMON_HEADER_LENGTH) {
            ByteBuffer header = ByteBuffer.wrap(bytes);
            long sBit = header.getLong(HomaHeader.RPC_ID_OFFSET) & HomaHeader.FROM_SERVER_BIT;
            header.putLong(HomaHeader.RPC_ID_OFFSET, realCallOrder.get(liveIndex % realCallOrder.size()) | sBit);
        }
        long before = accounted(to);
        long malformedBefore = to.counters().malformedPackets();
        to.onPacket(nowNs, from, ByteBuffer.wrap(bytes));
        if (accounted(to) <= before) {
            throw new AssertionError("packet neither counted as malformed nor as received by type: " + junk);
        }
        if (to.counters().malformedPackets() == malformedBefore) {
            junkAccepted.merge(PacketType.fromCode(Byte.toUnsignedInt(bytes[HomaHeader.TYPE_OFFSET])), 1, Integer::sum);
        }
        return bytes;
    }

    /** Malformed packets plus well-formed packets received of every type. */
    static long accounted(HomaEngine engine) {
        long sum = engine.counters().malformedPackets();
        for (PacketType type : PacketType.values()) {
            sum += engine.counters().packetsReceived(type);
        }
        return sum;
    }

    /** Advances the clock and runs both engines' timers (whether due or not). */
    void advance(long ns) {
        nowNs += ns;
        a.onTimeout(nowNs);
        b.onTimeout(nowNs);
    }

    /** Starts a real RPC between A and B. */
    long call(boolean fromA, byte[] request) {
        long rpcId = fromA ? a.sendRequest(nowNs, B, SendOptions.of(request)) : b.sendRequest(nowNs, A, SendOptions.of(request));
        realCalls.put(rpcId, fromA);
        realCallOrder.add(rpcId);
        return rpcId;
    }

    /** Requests delivered to either application that no real RPC sent: junk that got all the way. */
    long junkRequestsDelivered() {
        return strangerRequestsDelivered + Stream.of(requestsAtA, requestsAtB)
                .flatMap(m -> m.keySet().stream())
                .filter(id -> !realCalls.containsKey(id))
                .count();
    }

    /** Requests from stranger addresses delivered to either application. */
    long strangerRequestsDelivered;

    /**
     * One round: both engines transmit up to {@code maxPackets} packets each, packets between A and
     * B are delivered (packets to strangers vanish), and both engines' events are handled.
     *
     * @return the number of packets delivered between A and B plus events handled
     */
    int exchange(int maxPackets, Answer answer) {
        a.pollTransmit(nowNs, (to, packet, priority) -> capture(A, to, packet, priority), maxPackets);
        b.pollTransmit(nowNs, (to, packet, priority) -> capture(B, to, packet, priority), maxPackets);
        List<Packet> batch = new ArrayList<>(inFlight);
        inFlight.clear();
        int moved = 0;
        for (Packet packet : batch) {
            if (packet.to().equals(A) && packet.from().equals(B)) {
                a.onPacket(nowNs, B, ByteBuffer.wrap(packet.bytes()));
                moved++;
            } else if (packet.to().equals(B) && packet.from().equals(A)) {
                b.onPacket(nowNs, A, ByteBuffer.wrap(packet.bytes()));
                moved++;
            }
        }
        moved += handleEvents(a, requestsAtA, outcomesAtA, answer);
        moved += handleEvents(b, requestsAtB, outcomesAtB, answer);
        return moved;
    }

    private void capture(InetSocketAddress from, InetSocketAddress to, ByteBuffer packet, int priority) {
        if (priority < 0 || priority > HomaEngine.MAX_PRIORITY) {
            throw new AssertionError("priority " + priority + " outside 0..7");
        }
        if (packet.remaining() > config.maxDatagramBytes()) {
            throw new AssertionError("datagram of " + packet.remaining() + " bytes exceeds the MTU");
        }
        if (to.equals(A) || to.equals(B)) {
            byte[] bytes = new byte[packet.remaining()];
            packet.get(packet.position(), bytes);
            inFlight.add(new Packet(from, to, bytes));
        }
    }

    private int handleEvents(HomaEngine engine, Map<Long, List<byte[]>> requests, Map<Long, HomaEvent> outcomes,
            Answer answer) {
        int handled = 0;
        HomaEvent event;
        while ((event = engine.pollEvent()) != null) {
            handled++;
            if (event instanceof HomaEvent.RequestReceived received) {
                // An RPC is (client, rpcid): a stranger's request that reuses a real RPC's rpcid is
                // another RPC, recorded apart.
                if (received.client().equals(A) || received.client().equals(B)) {
                    requests.computeIfAbsent(received.rpcId(), id -> new ArrayList<>()).add(received.message());
                } else {
                    strangerRequestsDelivered++;
                }
                switch (answer) {
                    case RESPOND -> engine.sendResponse(nowNs, received.client(), received.rpcId(),
                            SendOptions.of(reversed(received.message())));
                    case ABORT -> engine.abortRequest(nowNs, received.client(), received.rpcId());
                    case HOLD -> held.add(new Held(engine, received));
                    default -> throw new IllegalStateException(answer.toString());
                }
            } else if (event instanceof HomaEvent.ResponseReceived response) {
                recordOutcome(outcomes, response.rpcId(), event);
            } else if (event instanceof HomaEvent.RpcFailed failed) {
                recordOutcome(outcomes, failed.rpcId(), event);
            }
        }
        return handled;
    }

    private static void recordOutcome(Map<Long, HomaEvent> outcomes, long rpcId, HomaEvent event) {
        HomaEvent previous = outcomes.put(rpcId, event);
        if (previous != null) {
            throw new AssertionError("second outcome for rpc " + rpcId + ": " + previous + " then " + event);
        }
    }

    static byte[] reversed(byte[] bytes) {
        byte[] out = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = bytes[bytes.length - 1 - i];
        }
        return out;
    }

    /**
     * Exchanges packets (answering every request) until the RPC {@code rpcId} of the given client
     * has an outcome: rounds of 1 µs while packets flow, a resend interval when the link is quiet.
     *
     * @return the outcome, or null if none came within {@code maxVirtualNs}
     */
    HomaEvent runUntilOutcome(boolean clientIsA, long rpcId, long maxVirtualNs) {
        Map<Long, HomaEvent> outcomes = clientIsA ? outcomesAtA : outcomesAtB;
        long deadline = nowNs + maxVirtualNs;
        for (int round = 0; round < 200_000 && nowNs - deadline < 0; round++) {
            if (outcomes.containsKey(rpcId)) {
                return outcomes.get(rpcId);
            }
            if (exchange(Integer.MAX_VALUE, Answer.RESPOND) > 0) {
                // 20 µs a round: RESENDs to silent strangers keep packets moving every round, and
                // their RPCs (holding incoming bytes the real one needs) end only after ~100 ms.
                advance(20_000);
            } else {
                advance(config.resendIntervalNs());
            }
        }
        return outcomes.get(rpcId);
    }

    /** The application answers every request it held; the engine may have given some up already. */
    void releaseHeld() {
        for (Held h : held) {
            h.engine().sendResponse(nowNs, h.request().client(), h.request().rpcId(), SendOptions.of(reversed(h.request().message())));
        }
        held.clear();
    }

    /**
     * Lets {@code virtualNs} of time pass with every packet between A and B delivered and every
     * request answered: rounds of 1 µs while packets flow, a resend interval when the link is quiet.
     */
    void settle(long virtualNs) {
        long deadline = nowNs + virtualNs;
        for (int round = 0; round < 200_000 && nowNs - deadline < 0; round++) {
            if (exchange(Integer.MAX_VALUE, Answer.RESPOND) > 0) {
                // 20 µs a round: RESENDs to silent strangers keep packets moving every round, and
                // their RPCs (holding incoming bytes the real one needs) end only after ~100 ms.
                advance(20_000);
            } else {
                advance(config.resendIntervalNs());
            }
        }
    }
}
