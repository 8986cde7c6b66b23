package io.homa.engine.wire;

/**
 * Homa packet types and their wire codes (draft-ousterhout-tsvwg-homa, "Common Header", field
 * {@code Type}). Code 22 is unused by the draft. The two RTT types are this project's extension
 * (Lu and Zhang, "Leveraging Homa", section "per-peer RTT detection"), with codes clear of the
 * draft's (16-24) and Linux Homa's (up to 25): a peer that knows only the draft drops and counts
 * them as unknown types.
 */
public enum PacketType {
    /** Message data (draft §"DATA packets"); header {@code DataHeader}. */
    DATA(16),
    /** Permission to send scheduled bytes up to an offset, at a priority (draft §"GRANT packets"). */
    GRANT(17),
    /** Request to retransmit a byte range (draft §"RESEND packets"). */
    RESEND(18),
    /** Answer to a RESEND for an RPC the sender does not know (draft §"RPC_UNKNOWN packets"). */
    RPC_UNKNOWN(19),
    /** Server alive, response not ready (draft §"BUSY packets"). */
    BUSY(20),
    /** Unscheduled priority cutoffs for the recipient to use (draft §"CUTOFFS packets"). */
    CUTOFFS(21),
    /** Server asks the client to acknowledge a fully sent response (draft §"NEED_ACK packets"). */
    NEED_ACK(23),
    /** Client acknowledges one or more RPCs, so servers may drop their state (draft §"ACK packets"). */
    ACK(24),
    /**
     * Asks the peer for an {@link #RTT_RESPS} at once (project extension, sent only with
     * congestion control on): the sender's clock, its link rate and its unscheduled ratio.
     */
    RTT_PROBE(0x20),
    /** Answers an {@link #RTT_PROBE}, echoing its timestamp, with the responder's link rate and ratio. */
    RTT_RESPS(0x21);

    private static final PacketType[] BY_CODE = new PacketType[256];

    static {
        for (PacketType type : values()) {
            BY_CODE[type.code] = type;
        }
    }

    private final int code;

    PacketType(int code) {
        this.code = code;
    }

    /** The type's one-byte wire code (16..24, and 32..33 for the RTT extension). */
    public int code() {
        return code;
    }

    /**
     * Looks up a wire code.
     *
     * @param code the unsigned value of the type byte, 0..255
     * @return the type, or {@code null} if the code is not a Homa packet type
     */
    public static PacketType fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
