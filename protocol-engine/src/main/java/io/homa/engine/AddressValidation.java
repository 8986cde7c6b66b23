package io.homa.engine;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import java.net.InetSocketAddress;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Address validation before amplification (QUIC's rule, RFC 9000 §8.1). Anyone
 * can write another host's address as a UDP source, so a request or RESEND "from" an address
 * proves nothing about it; a server that answered it in full would let a forger aim a stored 1 MB
 * response, or a few of its retransmissions, at that host. So a server sends a client address at
 * most {@value EngineConfig#VALIDATION_AMPLIFICATION} times the bytes it received from it until
 * that address shows that it receives our packets.
 *
 * <p>The proof: every packet a server sends carries its <em>address token</em> for the client's
 * address ({@link HomaHeader#ADDRESS_TOKEN_OFFSET}, 48 bits), the first 6 bytes of
 * HMAC-SHA256(key, client IP || client port) under a key drawn per engine, so an off-path host can
 * neither compute it nor learn it; a client remembers the latest token each server sent it about
 * an RPC it holds and writes it in every packet to that server. The first packet from that address
 * echoing the right token validates it for the life of the server's {@link Peer}; the token itself
 * is stateless, so a forgotten peer is validated again by its next packet.
 *
 * <p>Until then, only DATA is held: the unscheduled bytes of a response, the bytes a GRANT adds
 * and the ranges a RESEND asks for are each cut to what the credit pays (message bytes plus a
 * DATA header per packet), and the response's {@code incoming} tells the client how much comes
 * unscheduled, so that it grants the rest at once with a GRANT that carries the echo. Control
 * packets are never held (each answers one packet and is no longer than 3x it), but they are
 * charged, and DATA leaves {@link #CONTROL_RESERVE_BYTES} of credit for them, so that all a server
 * sends an address stays within 3x what came from it. With validation off ({@link
 * EngineConfig#addressValidation()}) tokens are still written, so that peers can validate us, but
 * nothing is held.
 */
final class AddressValidation {
    private final boolean enabled;
    private final int payloadBytes;
    private final EngineCounters counters;
    private final Mac mac;
    private final byte[] macOut;
    private final byte[] portBytes = new byte[2];

    /**
     * @param key the token key, at least 16 bytes
     */
    AddressValidation(boolean enabled, int payloadBytes, byte[] key, EngineCounters counters) {
        this.enabled = enabled;
        this.payloadBytes = payloadBytes;
        this.counters = counters;
        try {
            this.mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
        this.macOut = new byte[mac.getMacLength()];
    }

    /** This server's token for the peer's address (computed once per peer), 1..2^48-1. */
    long tokenFor(Peer peer) {
        if (peer.addressToken == 0) {
            peer.addressToken = tokenFor(peer.address);
        }
        return peer.addressToken;
    }

    /** This server's token for an address: the first 48 bits of its HMAC, never 0. */
    long tokenFor(InetSocketAddress address) {
        mac.update(address.getAddress().getAddress());
        portBytes[0] = (byte) (address.getPort() >>> 8);
        portBytes[1] = (byte) address.getPort();
        mac.update(portBytes);
        try {
            mac.doFinal(macOut, 0);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        long token = 0;
        for (int i = 0; i < 6; i++) {
            token = (token << 8) | Byte.toUnsignedLong(macOut[i]);
        }
        return token == 0 ? 1 : token;
    }

    /**
     * Before a packet from a client address is handled: a client that echoes our address token
     * proves it receives our packets, so it is validated (or the packet credited) first, and the
     * GRANT or RESEND the packet carries is not held back more than it must be. A proven address
     * may open state in {@code rpcs}.
     *
     * @return the client's peer, or null if we hold none (yet)
     */
    Peer beforeClientPacket(RpcTable rpcs, InetSocketAddress from, long echoedToken, int lengthBytes, long nowNs) {
        Peer client = rpcs.knownPeer(from);
        if (client == null && echoesToken(from, echoedToken)) {
            client = rpcs.peerForInbound(from, nowNs); // null: the table is full
        }
        if (client != null) {
            onPacketFromClient(client, echoedToken, lengthBytes);
        }
        return client;
    }

    /**
     * After a packet from a client address was handled: if it created the client's peer (a
     * request's first DATA), the packet is credited now.
     *
     * @param client what {@link #beforeClientPacket} returned
     */
    void afterClientPacket(RpcTable rpcs, Peer client, InetSocketAddress from, long echoedToken, int lengthBytes) {
        if (client == null && (client = rpcs.knownPeer(from)) != null) {
            onPacketFromClient(client, echoedToken, lengthBytes);
        }
    }

    /**
     * Whether a packet from an address this server holds no peer for echoes our token for it (so
     * the address is real and receives our packets: a client we answered before we forgot it, or
     * whose first contact left no state). Costs an HMAC for a non-zero token; 0 costs nothing.
     */
    boolean echoesToken(InetSocketAddress address, long echoedToken) {
        return enabled && echoedToken != 0 && echoedToken == tokenFor(address);
    }

    /**
     * A packet of {@code lengthBytes} from the peer in its client role, echoing {@code echoedToken}:
     * if that is our token for its address, the address is validated
     * ({@link EngineCounters#addressesValidated()}); else the packet earns
     * {@value EngineConfig#VALIDATION_AMPLIFICATION} times its length of credit.
     */
    void onPacketFromClient(Peer peer, long echoedToken, int lengthBytes) {
        if (!enabled || peer.addressValidated) {
            return;
        }
        if (echoedToken != 0 && echoedToken == tokenFor(peer)) {
            peer.addressValidated = true;
            counters.addressesValidated++;
        } else {
            peer.validationCreditBytes += (long) EngineConfig.VALIDATION_AMPLIFICATION * lengthBytes;
        }
    }

    /**
     * A control packet of {@code lengthBytes} went to the peer in its client role: charged to its
     * credit if not validated (never held: each answers a packet, see {@link #CONTROL_RESERVE_BYTES}).
     */
    void chargeControl(Peer peer, int lengthBytes) {
        if (enabled && !peer.addressValidated) {
            peer.validationCreditBytes -= lengthBytes;
        }
    }

    /**
     * Credit that DATA leaves for the control packet answering the same packet (a BUSY, RESEND or
     * CUTOFFS, at most 62 bytes), so that what goes out stays within 3x what came in.
     */
    static final int CONTROL_RESERVE_BYTES = 64;

    /**
     * How many of {@code bytes} message bytes the server may now commit to send to the peer (new
     * unscheduled or granted bytes, or a range to send again): all of them once the address is
     * validated or with validation off, else what its credit pays, which is charged. Bytes cut are
     * counted ({@link EngineCounters#bytesHeldForValidation()}).
     *
     * @return 0..{@code bytes}
     */
    int allow(Peer peer, int bytes) {
        if (!enabled || peer.addressValidated || bytes <= 0) {
            return bytes;
        }
        long credit = peer.validationCreditBytes - CONTROL_RESERVE_BYTES;
        int packetBytes = payloadBytes + DataHeader.HEADER_LENGTH;
        long fullPackets = credit / packetBytes;
        long rest = credit - fullPackets * packetBytes;
        long affordable = Math.max(0, fullPackets * payloadBytes + Math.max(0, rest - DataHeader.HEADER_LENGTH));
        int allowed = (int) Math.min(bytes, affordable);
        if (allowed < bytes) {
            counters.bytesHeldForValidation += bytes - allowed;
        }
        long packets = (allowed + payloadBytes - 1L) / payloadBytes;
        peer.validationCreditBytes -= allowed + packets * DataHeader.HEADER_LENGTH;
        return allowed;
    }
}
