package io.homa.bench.jmh;

import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Encode and decode of every Homa packet type with the engine's flyweights
 * ({@code io.homa.engine.wire}): encode writes every header field into a reused heap buffer,
 * decode wraps a ready packet and reads every field. DATA is the 56-byte header only (the
 * payload copy is part of {@link EngineReceiveBenchmark}); ACK carries 4 acks; RPC_UNKNOWN, BUSY
 * and NEED_ACK are the bare common header.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class WireCodecBenchmark {
    private static final int SOURCE_PORT = 4000;
    private static final int DEST_PORT = 5000;
    private static final int ACKS = 4;

    private final ByteBuffer txBuffer = ByteBuffer.allocate(1500);
    private final DataHeader dataTx = new DataHeader();
    private final GrantHeader grantTx = new GrantHeader();
    private final ResendHeader resendTx = new ResendHeader();
    private final CutoffsHeader cutoffsTx = new CutoffsHeader();
    private final AckHeader ackTx = new AckHeader();
    private final ControlHeader controlTx = new ControlHeader();

    private final DataHeader dataRx = new DataHeader();
    private final GrantHeader grantRx = new GrantHeader();
    private final ResendHeader resendRx = new ResendHeader();
    private final CutoffsHeader cutoffsRx = new CutoffsHeader();
    private final AckHeader ackRx = new AckHeader();
    private final ControlHeader controlRx = new ControlHeader();

    private ByteBuffer dataPacket;
    private ByteBuffer grantPacket;
    private ByteBuffer resendPacket;
    private ByteBuffer unknownPacket;
    private ByteBuffer busyPacket;
    private ByteBuffer cutoffsPacket;
    private ByteBuffer needAckPacket;
    private ByteBuffer ackPacket;

    /** Varies per call so that the JIT cannot fold the written values into constants. */
    private long rpcId = 1_000_000_000_000L;

    @Setup
    public void encodeInputs() {
        dataPacket = copyOfTx(encodeData());
        grantPacket = copyOfTx(encodeGrant());
        resendPacket = copyOfTx(encodeResend());
        unknownPacket = copyOfTx(encodeControl(PacketType.RPC_UNKNOWN));
        busyPacket = copyOfTx(encodeControl(PacketType.BUSY));
        cutoffsPacket = copyOfTx(encodeCutoffs());
        needAckPacket = copyOfTx(encodeControl(PacketType.NEED_ACK));
        ackPacket = copyOfTx(encodeAck());
    }

    private ByteBuffer copyOfTx(int length) {
        ByteBuffer copy = ByteBuffer.allocate(length);
        copy.put(0, txBuffer, 0, length);
        return copy;
    }

    private long nextRpcId() {
        rpcId += 2;
        return rpcId;
    }

    // ------------------------------------------------------------------ encode

    @Benchmark
    public int encodeData() {
        long id = nextRpcId();
        int offset = (int) id & 0xFFFF00;
        dataTx.wrap(txBuffer, 0);
        dataTx.writeCommon(PacketType.DATA, SOURCE_PORT, DEST_PORT, id)
                .messageLength(1_000_000)
                .incoming(60_000 + offset)
                .cutoffVersion(3)
                .retransmitted(false)
                .flags(0)
                .dataOffset(offset)
                .segmentOffset(offset);
        dataTx.doff(DataHeader.DOFF);
        dataTx.ackRpcId(id - 2).ackServerPort(DEST_PORT);
        return DataHeader.HEADER_LENGTH;
    }

    @Benchmark
    public int encodeGrant() {
        long id = nextRpcId();
        grantTx.wrap(txBuffer, 0).writeCommon(PacketType.GRANT, SOURCE_PORT, DEST_PORT, id);
        grantTx.grantOffset((int) id & 0xFFFFF).priority(5).resendAll(false);
        return GrantHeader.HEADER_LENGTH;
    }

    @Benchmark
    public int encodeResend() {
        long id = nextRpcId();
        resendTx.wrap(txBuffer, 0).writeCommon(PacketType.RESEND, SOURCE_PORT, DEST_PORT, id);
        resendTx.resendOffset((int) id & 0xFFFFF).length(1416).priority(7);
        return ResendHeader.HEADER_LENGTH;
    }

    @Benchmark
    public int encodeUnknown() {
        return encodeControl(PacketType.RPC_UNKNOWN);
    }

    @Benchmark
    public int encodeBusy() {
        return encodeControl(PacketType.BUSY);
    }

    @Benchmark
    public int encodeNeedAck() {
        return encodeControl(PacketType.NEED_ACK);
    }

    private int encodeControl(PacketType type) {
        controlTx.wrap(txBuffer, 0).writeCommon(type, SOURCE_PORT, DEST_PORT, nextRpcId());
        return ControlHeader.HEADER_LENGTH;
    }

    @Benchmark
    public int encodeCutoffs() {
        long id = nextRpcId();
        cutoffsTx.wrap(txBuffer, 0).writeCommon(PacketType.CUTOFFS, SOURCE_PORT, DEST_PORT, id);
        int length = (int) id & 0xFFF;
        for (int i = 0; i < CutoffsHeader.NUM_PRIORITIES; i++) {
            cutoffsTx.cutoff(i, length << (CutoffsHeader.NUM_PRIORITIES - i));
        }
        cutoffsTx.cutoffVersion((int) id & 0xFFFF);
        return CutoffsHeader.HEADER_LENGTH;
    }

    @Benchmark
    public int encodeAck() {
        long id = nextRpcId();
        ackTx.wrap(txBuffer, 0).writeCommon(PacketType.ACK, SOURCE_PORT, DEST_PORT, id);
        ackTx.numAcks(ACKS);
        for (int i = 0; i < ACKS; i++) {
            ackTx.ack(i, id - 2 * (i + 1), DEST_PORT);
        }
        return AckHeader.packetLength(ACKS);
    }

    // ------------------------------------------------------------------ decode

    @Benchmark
    public long decodeData() {
        DataHeader data = dataRx;
        data.wrap(dataPacket, 0);
        return common(data) + data.messageLength() + data.incoming() + data.ackRpcId() + data.ackServerPort()
                + data.cutoffVersion() + (data.retransmitted() ? 1 : 0) + data.flags() + data.dataOffset()
                + data.segmentOffset();
    }

    @Benchmark
    public long decodeGrant() {
        GrantHeader grant = grantRx;
        grant.wrap(grantPacket, 0);
        return common(grant) + grant.grantOffset() + grant.priority() + (grant.resendAll() ? 1 : 0);
    }

    @Benchmark
    public long decodeResend() {
        ResendHeader resend = resendRx;
        resend.wrap(resendPacket, 0);
        return common(resend) + resend.resendOffset() + resend.length() + resend.priority();
    }

    @Benchmark
    public long decodeUnknown() {
        return common(controlRx.wrap(unknownPacket, 0));
    }

    @Benchmark
    public long decodeBusy() {
        return common(controlRx.wrap(busyPacket, 0));
    }

    @Benchmark
    public long decodeNeedAck() {
        return common(controlRx.wrap(needAckPacket, 0));
    }

    @Benchmark
    public long decodeCutoffs() {
        CutoffsHeader cutoffs = cutoffsRx;
        cutoffs.wrap(cutoffsPacket, 0);
        long sum = common(cutoffs) + cutoffs.cutoffVersion();
        for (int i = 0; i < CutoffsHeader.NUM_PRIORITIES; i++) {
            sum += cutoffs.cutoff(i);
        }
        return sum;
    }

    @Benchmark
    public long decodeAck() {
        AckHeader ack = ackRx;
        ack.wrap(ackPacket, 0);
        int count = ack.numAcks();
        long sum = common(ack) + count;
        for (int i = 0; i < count; i++) {
            sum += ack.ackRpcId(i) + ack.ackServerPort(i);
        }
        return sum;
    }

    /** Reads the common header the way the engine does: type, then the rpcid and S bit. */
    private static long common(HomaHeader header) {
        PacketType type = header.type();
        return type.code() + header.sourcePort() + header.destPort() + header.clientRpcId()
                + (header.fromServer() ? 1 : 0);
    }
}
