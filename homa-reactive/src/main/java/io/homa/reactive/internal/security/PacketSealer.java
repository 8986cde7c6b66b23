package io.homa.reactive.internal.security;

import io.homa.reactive.HomaSecurityConfig;
import io.netty.buffer.ByteBuf;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * Seals every datagram a transport sends and opens every one it receives, below the engine (packet
 * authentication): the engine never sees a datagram that did not authenticate.
 *
 * <h2>Wire format</h2>
 * A sealed datagram is the Homa packet (in clear with {@link HomaSecurityConfig.Mode#AUTHENTICATE},
 * AES-GCM ciphertext of the same length with {@link HomaSecurityConfig.Mode#ENCRYPT}) followed by a
 * {@value #TRAILER_BYTES}-byte trailer, big-endian:
 * <pre>
 *   offset (from the trailer's start)  bytes  field
 *   0                                   1      key id, 0..255
 *   1                                   16     sender epoch: random (SecureRandom), chosen once per transport at bind
 *   17                                  8      packet counter: 0, 1, 2, ... per transport, never reused under one epoch
 *   25                                  16     AES-256-GCM tag
 * </pre>
 * Every GSO segment is sealed on its own, so equal-length packets stay equal-length segments.
 *
 * <h2>Keys and nonces</h2>
 * Each sender seals under its own subkey, {@code HKDF-SHA256(ikm = pre-shared key, salt = epoch,
 * info = "homa-auth-v1" || key id (1) || sender IP (16) || sender port (2))} (RFC 5869, {@link Hkdf}),
 * with the 12-byte GCM nonce {@code 0x00000000 || counter (8)}. A nonce repeats under one subkey only
 * if a counter repeats under one epoch, which never happens (a fresh 128-bit epoch per transport; a
 * restarted process has another). The sender IP is written in its 16-byte IPv6 form (an IPv4
 * address as {@code ::ffff:a.b.c.d}) so that both sides agree however their sockets name it. A sender
 * bound to the wildcard address uses the source address the kernel's route to each destination picks
 * (looked up once per destination IP and cached); the receiver uses the datagram's source address.
 *
 * <h2>Associated data</h2>
 * {@code sender IP (16) || sender port (2) || destination port (2) || key id (1) || epoch (16) ||
 * counter (8)}, plus, with {@code authenticate}, the Homa packet itself. The destination IP is not in
 * it: a receiver bound to the wildcard address (the default) cannot learn a datagram's destination
 * IP through the JDK or NIO, and a sender cannot know how its peer is bound, so every endpoint uses
 * the destination port only. What this leaves open: a packet can be redirected to the same port of
 * another host that holds the same key (there it is a packet of an RPC that host does not know, or a
 * one-packet request it executes). Give groups of hosts that must not accept each other's traffic
 * different keys.
 *
 * <h2>Receiving</h2>
 * A datagram shorter than the trailer plus one byte, with a key id not accepted, or whose tag does
 * not verify is dropped and counted in {@link #unauthenticated()}; an authentic one whose counter was
 * seen before, or is more than {@value ReplayWindow#WINDOW} below the highest counter of its (source
 * address, epoch), is dropped and counted in {@link #replayed()} (RFC 6479 window, WireGuard style).
 * State is created only for datagrams that authenticated: per (source address, epoch) its subkey and
 * its window, in an LRU of at most {@value #MAX_SENDERS} senders. As in every design without a
 * handshake, replay protection holds for the life of that state: a receiver that restarted, or
 * evicted a sender, accepts each of that sender's earlier datagrams once more (the engine's at-most-once
 * rules then apply, as to any duplicate).
 *
 * <p>Confined to the transport's event loop; {@link #unauthenticated()} and {@link #replayed()} may be
 * read from any thread.
 */
public final class PacketSealer {
    /** Key id (1) + epoch (16) + counter (8) + tag (16). */
    public static final int TRAILER_BYTES = 41;
    static final int KEY_ID_BYTES = 1;
    static final int EPOCH_BYTES = 16;
    static final int COUNTER_BYTES = 8;
    static final int TAG_BYTES = 16;
    /** Trailer bytes before the tag: key id, epoch, counter. */
    static final int HEADER_BYTES = KEY_ID_BYTES + EPOCH_BYTES + COUNTER_BYTES;
    /** Subkeys (and replay windows) kept for this many (source address, epoch) pairs, least recently used out. */
    static final int MAX_SENDERS = 4096;
    /** Route lookups (source address per destination IP) kept by a wildcard-bound sender. */
    static final int MAX_ROUTES = 1024;
    /** HKDF info prefix. */
    static final byte[] LABEL = "homa-auth-v1".getBytes(StandardCharsets.US_ASCII);
    /** Largest sealed datagram: the largest UDP payload over IPv4. */
    static final int MAX_SEALED_BYTES = 65_507;

    private static final String AES_GCM = "AES/GCM/NoPadding";
    /** Associated data: IP (16) + sender port (2) + destination port (2) + trailer header (25). */
    private static final int AD_BYTES = 16 + 2 + 2 + HEADER_BYTES;

    private final HomaSecurityConfig.Mode mode;
    private final byte[] @Nullable [] keys = new byte[HomaSecurityConfig.MAX_KEY_ID + 1][];
    private final int activeKeyId;
    private final byte[] epoch;
    private final int localPort;
    private final @Nullable SendKey boundSendKey;
    private final Function<InetAddress, InetAddress> routeSource;
    private final Map<InetAddress, SendKey> routeSendKeys = lru(MAX_ROUTES);
    private final Map<SenderId, SenderState> senders = lru(MAX_SENDERS);
    private final Hkdf hkdf = new Hkdf();
    private final Cipher sealCipher;
    private final Cipher openCipher;
    private final byte[] ad = new byte[AD_BYTES];
    private final byte[] tag = new byte[TAG_BYTES];
    private final byte[] sealed = new byte[MAX_SEALED_BYTES + TAG_BYTES];
    private final byte[] openIn = new byte[MAX_SEALED_BYTES];
    private final byte[] opened = new byte[MAX_SEALED_BYTES];
    private long counter;
    private final AtomicLong unauthenticated = new AtomicLong();
    private final AtomicLong replayed = new AtomicLong();

    /**
     * @param config mode on, with its keys
     * @param local the bound address; a wildcard address makes the sender look up its source
     *     address per destination
     * @param random where the epoch comes from
     */
    public PacketSealer(HomaSecurityConfig config, InetSocketAddress local, SecureRandom random) {
        this(config, local, random, PacketSealer::routeSource);
    }

    /** As above, with the route lookup of a wildcard-bound sender given (tests). */
    PacketSealer(HomaSecurityConfig config, InetSocketAddress local, SecureRandom random,
            Function<InetAddress, InetAddress> routeSource) {
        if (!config.enabled()) {
            throw new IllegalArgumentException("packet authentication is off");
        }
        this.mode = config.mode();
        config.keys().forEach((id, key) -> keys[id] = key);
        this.activeKeyId = config.activeKeyId();
        this.epoch = new byte[EPOCH_BYTES];
        random.nextBytes(epoch);
        this.localPort = local.getPort();
        this.routeSource = routeSource;
        try {
            this.sealCipher = Cipher.getInstance(AES_GCM);
            this.openCipher = Cipher.getInstance(AES_GCM);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks " + AES_GCM, e);
        }
        InetAddress bound = local.getAddress();
        this.boundSendKey = bound.isAnyLocalAddress() ? null : sendKey(bound);
    }

    // ------------------------------------------------------------------ sending

    /**
     * Seals one packet for {@code destination}.
     *
     * @param packet the Homa packet from its position to its limit; not changed
     * @return the sealed datagram, {@code packet.remaining() + 41} bytes, in a buffer this sealer
     *     reuses at the next call (copy it before then)
     * @throws IllegalArgumentException if the sealed datagram would exceed {@value #MAX_SEALED_BYTES} bytes
     */
    public ByteBuffer seal(InetSocketAddress destination, ByteBuffer packet) {
        int length = packet.remaining();
        if (length + TRAILER_BYTES > MAX_SEALED_BYTES) {
            throw new IllegalArgumentException("a packet of " + length + " bytes does not fit a sealed datagram");
        }
        SendKey key = boundSendKey != null ? boundSendKey : routeSendKey(destination.getAddress());
        long sequence = counter++;
        if (sequence < 0) {
            throw new IllegalStateException("packet counter exhausted under this epoch");
        }
        fillAd(key.ip16, localPort, destination.getPort(), activeKeyId, epoch, sequence);
        try {
            sealCipher.init(Cipher.ENCRYPT_MODE, key.key, nonce(sequence));
            sealCipher.updateAAD(ad);
            if (mode == HomaSecurityConfig.Mode.AUTHENTICATE) {
                packet.duplicate().get(sealed, 0, length);
                sealCipher.updateAAD(sealed, 0, length);
                sealCipher.doFinal(sealed, length + HEADER_BYTES);
                System.arraycopy(ad, AD_BYTES - HEADER_BYTES, sealed, length, HEADER_BYTES);
            } else {
                int written = sealCipher.doFinal(packet.duplicate(), ByteBuffer.wrap(sealed));
                assert written == length + TAG_BYTES;
                System.arraycopy(sealed, length, tag, 0, TAG_BYTES);
                System.arraycopy(ad, AD_BYTES - HEADER_BYTES, sealed, length, HEADER_BYTES);
                System.arraycopy(tag, 0, sealed, length + HEADER_BYTES, TAG_BYTES);
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed to seal a packet", e);
        }
        return ByteBuffer.wrap(sealed, 0, length + TRAILER_BYTES);
    }

    /** This sender's epoch (a copy), the salt of its subkeys: each sealer draws its own, so each has a nonce space of its own. */
    public byte[] epoch() {
        return epoch.clone();
    }

    /** The counter the next sealed packet carries. */
    long nextCounter() {
        return counter;
    }

    private SendKey routeSendKey(InetAddress destination) {
        SendKey key = routeSendKeys.get(destination);
        if (key == null) {
            key = sendKey(routeSource.apply(destination));
            routeSendKeys.put(destination, key);
        }
        return key;
    }

    private SendKey sendKey(InetAddress source) {
        byte[] ip16 = ip16(source);
        return new SendKey(ip16, subkey(keys[activeKeyId], activeKeyId, epoch, ip16, localPort));
    }

    /** The source address the kernel picks toward {@code destination} (a UDP connect, no packet sent). */
    static InetAddress routeSource(InetAddress destination) {
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.connect(destination, 9);
            InetAddress source = socket.getLocalAddress();
            return source.isAnyLocalAddress() ? destination : source;
        } catch (SocketException | RuntimeException e) {
            return destination.isLoopbackAddress() ? destination : InetAddress.getLoopbackAddress();
        }
    }

    // ------------------------------------------------------------------ receiving

    /**
     * Opens one received datagram.
     *
     * @param source the datagram's source address
     * @param datagram its bytes from reader index to writer index; not changed
     * @return the Homa packet (a view of {@code datagram} when authenticating, a buffer this sealer
     *     reuses at the next call when decrypting), or null if the datagram was dropped and counted
     */
    public @Nullable ByteBuffer open(InetSocketAddress source, ByteBuf datagram) {
        int total = datagram.readableBytes();
        if (total < TRAILER_BYTES + 1) {
            unauthenticated.incrementAndGet();
            return null;
        }
        int base = datagram.readerIndex();
        int length = total - TRAILER_BYTES;
        int trailer = base + length;
        int keyId = datagram.getUnsignedByte(trailer);
        byte[] psk = keys[keyId];
        long epochHigh = datagram.getLong(trailer + 1);
        long epochLow = datagram.getLong(trailer + 9);
        long sequence = datagram.getLong(trailer + 17);
        if (psk == null || sequence < 0) {
            unauthenticated.incrementAndGet();
            return null;
        }
        SenderId id = new SenderId(source, epochHigh, epochLow);
        SenderState state = senders.get(id);
        byte[] sourceIp16;
        SecretKeySpec subkey;
        if (state != null && state.keyId == keyId) {
            sourceIp16 = state.ip16;
            subkey = state.subkey;
        } else {
            sourceIp16 = ip16(source.getAddress());
            byte[] senderEpoch = new byte[EPOCH_BYTES];
            datagram.getBytes(trailer + 1, senderEpoch);
            subkey = subkey(psk, keyId, senderEpoch, sourceIp16, source.getPort());
        }
        System.arraycopy(sourceIp16, 0, ad, 0, 16);
        putShort(ad, 16, source.getPort());
        putShort(ad, 18, localPort);
        datagram.getBytes(trailer, ad, 20, HEADER_BYTES);
        ByteBuffer result;
        try {
            openCipher.init(Cipher.DECRYPT_MODE, subkey, nonce(sequence));
            openCipher.updateAAD(ad);
            if (mode == HomaSecurityConfig.Mode.AUTHENTICATE) {
                ByteBuffer packet = datagram.nioBuffer(base, length);
                openCipher.updateAAD(packet.duplicate());
                datagram.getBytes(trailer + HEADER_BYTES, tag);
                openCipher.doFinal(tag);
                result = packet;
            } else {
                datagram.getBytes(base, openIn, 0, length);
                datagram.getBytes(trailer + HEADER_BYTES, openIn, length, TAG_BYTES);
                int n = openCipher.doFinal(openIn, 0, length + TAG_BYTES, opened, 0);
                result = ByteBuffer.wrap(opened, 0, n);
            }
        } catch (AEADBadTagException e) {
            unauthenticated.incrementAndGet();
            return null;
        } catch (GeneralSecurityException e) {
            unauthenticated.incrementAndGet();
            return null;
        }
        if (state == null) {
            state = new SenderState(keyId, subkey, sourceIp16);
            senders.put(id, state);
        } else if (!state.window.check(sequence)) {
            replayed.incrementAndGet();
            return null;
        } else if (state.keyId != keyId) {
            state.keyId = keyId;
            state.subkey = subkey;
        }
        state.window.update(sequence);
        return result;
    }

    /** Datagrams dropped as short, with an unknown key id, or with a tag that did not verify. */
    public long unauthenticated() {
        return unauthenticated.get();
    }

    /** Authentic datagrams dropped because their counter was seen before or fell below the window. */
    public long replayed() {
        return replayed.get();
    }

    /** (source address, epoch) pairs with state now; for tests. */
    int senderCount() {
        return senders.size();
    }

    // ------------------------------------------------------------------ helpers

    private SecretKeySpec subkey(byte[] psk, int keyId, byte[] senderEpoch, byte[] senderIp16, int senderPort) {
        byte[] info = new byte[LABEL.length + 1 + 16 + 2];
        System.arraycopy(LABEL, 0, info, 0, LABEL.length);
        info[LABEL.length] = (byte) keyId;
        System.arraycopy(senderIp16, 0, info, LABEL.length + 1, 16);
        putShort(info, LABEL.length + 17, senderPort);
        return new SecretKeySpec(hkdf.derive(senderEpoch, psk, info, HomaSecurityConfig.KEY_BYTES), "AES");
    }

    private void fillAd(byte[] sourceIp16, int sourcePort, int destinationPort, int keyId, byte[] senderEpoch,
            long sequence) {
        System.arraycopy(sourceIp16, 0, ad, 0, 16);
        putShort(ad, 16, sourcePort);
        putShort(ad, 18, destinationPort);
        ad[20] = (byte) keyId;
        System.arraycopy(senderEpoch, 0, ad, 21, EPOCH_BYTES);
        putLong(ad, 37, sequence);
    }

    private static GCMParameterSpec nonce(long sequence) {
        byte[] nonce = new byte[12];
        putLong(nonce, 4, sequence);
        return new GCMParameterSpec(TAG_BYTES * 8, nonce);
    }

    /** The address in 16 bytes: IPv6 as is, IPv4 as {@code ::ffff:a.b.c.d}. */
    static byte[] ip16(InetAddress address) {
        byte[] raw = address.getAddress();
        if (raw.length == 16) {
            return raw;
        }
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(raw, 0, mapped, 12, 4);
        return mapped;
    }

    private static void putShort(byte[] bytes, int offset, int value) {
        bytes[offset] = (byte) (value >>> 8);
        bytes[offset + 1] = (byte) value;
    }

    private static void putLong(byte[] bytes, int offset, long value) {
        for (int i = 7; i >= 0; i--) {
            bytes[offset + i] = (byte) value;
            value >>>= 8;
        }
    }

    private static <K, V> Map<K, V> lru(int capacity) {
        return new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > capacity;
            }
        };
    }

    /** A sending subkey and the source IP it was derived for. */
    private record SendKey(byte[] ip16, SecretKeySpec key) {
    }

    /** A sender: its source address and epoch. */
    private record SenderId(InetSocketAddress source, long epochHigh, long epochLow) {
    }

    /** What a receiver keeps per sender: its subkey under the key id it last used, and its replay window. */
    private static final class SenderState {
        int keyId;
        SecretKeySpec subkey;
        final byte[] ip16;
        final ReplayWindow window = new ReplayWindow();

        SenderState(int keyId, SecretKeySpec subkey, byte[] ip16) {
            this.keyId = keyId;
            this.subkey = subkey;
            this.ip16 = ip16;
        }
    }
}
