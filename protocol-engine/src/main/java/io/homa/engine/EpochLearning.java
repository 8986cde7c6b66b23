package io.homa.engine;

import io.homa.engine.internal.wire.HomaHeader;

/**
 * What a client learns from the common header of a server's packets: the server's epoch (its
 * incarnation, {@link HomaHeader#EPOCH_OFFSET}) and its address token
 * ({@link HomaHeader#ADDRESS_TOKEN_OFFSET}). Later requests to the server name that epoch
 * ({@link ClientRpc#epoch}), so that a restarted server refuses them rather than running them
 * twice (at-most-once across a restart, see {@link AtMostOnce}); every packet to it echoes the
 * token ({@link AddressValidation}). A peer that knows only the draft sends 0 for both, which
 * teaches nothing.
 *
 * <p>Only packets about an RPC we hold count (the caller checks), so an off-path forger must know
 * a live rpcid; and even then:
 * <ul>
 * <li>A RESEND answering first contact binds the RPC it names, and only that one, to its
 *     epoch: a forged one fails at most the RPC it names.</li>
 * <li>The server's epoch becomes known (later requests name it at once) when another packet
 *     about an RPC bound to that epoch (a GRANT, the response's DATA, CUTOFFS, BUSY) names the
 *     same epoch: the server confirms what the RESEND said. A stray or forged DATA, GRANT or
 *     BUSY naming another epoch plants nothing.</li>
 * <li>An epoch that contradicts the one known is not taken on its word (it may be forged): the
 *     server's epoch becomes unknown again, so the next requests ask for it (first contact)
 *     and learn the real one from the answer.</li>
 * </ul>
 */
final class EpochLearning {
    private EpochLearning() {}

    /**
     * A server spoke about {@code rpc}, one of ours, in a packet the engine accepted.
     *
     * @param rpc the client RPC the packet named (read even if the packet ended it)
     * @param epoch the packet's epoch field
     * @param token the packet's address token field
     * @param resend whether the packet was a RESEND
     */
    static void onPacketFromServer(ClientRpc rpc, int epoch, long token, boolean resend) {
        Peer peer = rpc.server;
        if (epoch != 0 && epoch != HomaHeader.EPOCH_ASK) {
            if (peer.serverEpoch == 0) {
                if (resend && !rpc.epochBound) {
                    rpc.epochBound = true; // its request is sent again naming the epoch
                    rpc.epoch = epoch;
                } else if (!resend && rpc.epochBound && rpc.epoch == epoch) {
                    peer.serverEpoch = epoch;
                }
            } else if (peer.serverEpoch != epoch) {
                peer.serverEpoch = 0;
            }
        }
        if (token != 0) {
            peer.echoToken = token;
        }
    }
}
