package io.homa.reactive.internal.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.InvalidSettingException;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransportConfig;
import io.netty.buffer.Unpooled;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Sealing and opening datagrams, HKDF, the replay window and the config's checks. */
class PacketSealerTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final InetSocketAddress A = new InetSocketAddress(InetAddress.getLoopbackAddress(), 40_001);
    private static final InetSocketAddress B = new InetSocketAddress(InetAddress.getLoopbackAddress(), 40_002);

    private static byte[] key(int seed) {
        byte[] key = new byte[32];
        new Random(seed).nextBytes(key);
        return key;
    }

    private static HomaSecurityConfig config(HomaSecurityConfig.Mode mode, Map<Integer, byte[]> keys, int active) {
        return new HomaSecurityConfig(mode, keys, active);
    }

    private static PacketSealer sealer(HomaSecurityConfig config, InetSocketAddress local) {
        return new PacketSealer(config, local, new SecureRandom());
    }

    private static byte[] packet(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    private static byte[] seal(PacketSealer sealer, InetSocketAddress to, byte[] packet) {
        ByteBuffer sealed = sealer.seal(to, ByteBuffer.wrap(packet));
        byte[] bytes = new byte[sealed.remaining()];
        sealed.get(bytes);
        return bytes;
    }

    private static byte[] open(PacketSealer sealer, InetSocketAddress from, byte[] datagram) {
        ByteBuffer opened = sealer.open(from, Unpooled.wrappedBuffer(datagram));
        if (opened == null) {
            return null;
        }
        byte[] bytes = new byte[opened.remaining()];
        opened.get(bytes);
        return bytes;
    }

    // ------------------------------------------------------------------ HKDF

    @Test
    void shouldMatchRfc5869TestCase1() {
        byte[] ikm = HEX.parseHex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
        byte[] salt = HEX.parseHex("000102030405060708090a0b0c");
        byte[] info = HEX.parseHex("f0f1f2f3f4f5f6f7f8f9");
        Hkdf hkdf = new Hkdf();
        byte[] prk = hkdf.extract(salt, ikm);
        assertThat(HEX.formatHex(prk)).isEqualTo("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5");
        assertThat(HEX.formatHex(hkdf.expand(prk, info, 42))).isEqualTo(
                "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
        assertThat(hkdf.derive(salt, ikm, info, 42)).isEqualTo(hkdf.expand(prk, info, 42));
    }

    @Test
    void shouldMatchRfc5869TestCase3WithAnEmptySalt() {
        byte[] ikm = HEX.parseHex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
        Hkdf hkdf = new Hkdf();
        assertThat(HEX.formatHex(hkdf.derive(new byte[0], ikm, new byte[0], 42))).isEqualTo(
                "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8");
    }

    // ------------------------------------------------------------------ round trips

    @ParameterizedTest
    @EnumSource(value = HomaSecurityConfig.Mode.class, names = {"AUTHENTICATE", "ENCRYPT"})
    void shouldRoundTripAndAppendTheFortyOneByteTrailer(HomaSecurityConfig.Mode mode) {
        HomaSecurityConfig config = config(mode, Map.of(7, key(1)), 7);
        PacketSealer a = sealer(config, A);
        PacketSealer b = sealer(config, B);
        for (int length : new int[] {1, 60, 1_431, 65_466}) {
            byte[] packet = packet(length, length);
            long counter = a.nextCounter();
            byte[] sealed = seal(a, B, packet);
            assertThat(sealed).hasSize(length + 41);
            ByteBuffer trailer = ByteBuffer.wrap(sealed, length, 41);
            assertThat(trailer.get()).isEqualTo((byte) 7);
            byte[] epoch = new byte[16];
            trailer.get(epoch);
            assertThat(epoch).isEqualTo(a.epoch());
            assertThat(trailer.getLong()).isEqualTo(counter);
            byte[] body = java.util.Arrays.copyOf(sealed, length);
            if (mode == HomaSecurityConfig.Mode.AUTHENTICATE) {
                assertThat(body).isEqualTo(packet);
            } else if (length >= 16) {
                assertThat(body).isNotEqualTo(packet);
            }
            assertThat(open(b, A, sealed)).isEqualTo(packet);
        }
        assertThat(b.unauthenticated()).isZero();
        assertThat(b.replayed()).isZero();
        // and the other way
        assertThat(open(a, B, seal(b, A, packet(100, 9)))).isEqualTo(packet(100, 9));
    }

    @Test
    void shouldDrawAFreshEpochPerSealerAndCountFromZero() {
        HomaSecurityConfig config = config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(0, key(1)), 0);
        PacketSealer first = sealer(config, A);
        PacketSealer second = sealer(config, A);
        assertThat(first.epoch()).isNotEqualTo(second.epoch());
        assertThat(first.nextCounter()).isZero();
        seal(first, B, packet(10, 1));
        seal(first, B, packet(10, 1));
        assertThat(first.nextCounter()).isEqualTo(2);
    }

    // ------------------------------------------------------------------ rejections

    @ParameterizedTest
    @EnumSource(value = HomaSecurityConfig.Mode.class, names = {"AUTHENTICATE", "ENCRYPT"})
    void shouldRejectAnyTamperedByte(HomaSecurityConfig.Mode mode) {
        HomaSecurityConfig config = config(mode, Map.of(1, key(1)), 1);
        PacketSealer a = sealer(config, A);
        PacketSealer b = sealer(config, B);
        int length = 200;
        // header byte, payload byte, then key id, epoch, counter and tag bytes of the trailer
        int[] positions = {0, 11, 28, 150, length - 1, length, length + 1, length + 16, length + 17, length + 24,
                length + 25, length + 40};
        long rejected = 0;
        for (int position : positions) {
            byte[] sealed = seal(a, B, packet(length, position));
            sealed[position] ^= 0x01;
            assertThat(open(b, A, sealed)).as("flipped byte %d", position).isNull();
            rejected++;
            assertThat(b.unauthenticated()).isEqualTo(rejected);
        }
        assertThat(b.senderCount()).as("no state for datagrams that did not authenticate").isZero();
        byte[] good = packet(length, 99);
        assertThat(open(b, A, seal(a, B, good))).isEqualTo(good);
        assertThat(b.replayed()).isZero();
    }

    @Test
    void shouldRejectShortDatagramsAndUnknownKeyIds() {
        PacketSealer b = sealer(config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(1, key(1)), 1), B);
        assertThat(open(b, A, new byte[41])).isNull();
        assertThat(open(b, A, new byte[0])).isNull();
        PacketSealer other = sealer(config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(2, key(1)), 2), A);
        assertThat(open(b, A, seal(other, B, packet(100, 1)))).as("key id 2 is not accepted").isNull();
        assertThat(b.unauthenticated()).isEqualTo(3);
    }

    @ParameterizedTest
    @EnumSource(value = HomaSecurityConfig.Mode.class, names = {"AUTHENTICATE", "ENCRYPT"})
    void shouldRejectAnotherKeyUnderTheSameId(HomaSecurityConfig.Mode mode) {
        PacketSealer a = sealer(config(mode, Map.of(1, key(1)), 1), A);
        PacketSealer b = sealer(config(mode, Map.of(1, key(2)), 1), B);
        assertThat(open(b, A, seal(a, B, packet(100, 1)))).isNull();
        assertThat(b.unauthenticated()).isEqualTo(1);
    }

    @Test
    void shouldRejectADatagramFromAnotherSourceOrToAnotherPort() {
        HomaSecurityConfig config = config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(1, key(1)), 1);
        PacketSealer a = sealer(config, A);
        PacketSealer b = sealer(config, B);
        PacketSealer c = sealer(config, new InetSocketAddress(InetAddress.getLoopbackAddress(), 40_003));
        byte[] sealed = seal(a, B, packet(100, 1));
        InetSocketAddress spoofedPort = new InetSocketAddress(A.getAddress(), A.getPort() + 1);
        assertThat(open(b, spoofedPort, sealed)).as("source port forged").isNull();
        assertThat(open(b, new InetSocketAddress("127.0.0.2", A.getPort()), sealed)).as("source IP forged").isNull();
        assertThat(open(c, A, sealed)).as("redirected to another port").isNull();
        assertThat(open(b, A, sealed)).isNotNull();
    }

    @Test
    void shouldRejectAModeMismatch() {
        PacketSealer a = sealer(config(HomaSecurityConfig.Mode.ENCRYPT, Map.of(1, key(1)), 1), A);
        PacketSealer b = sealer(config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(1, key(1)), 1), B);
        assertThat(open(b, A, seal(a, B, packet(100, 1)))).isNull();
        assertThat(open(a, B, seal(b, A, packet(100, 1)))).isNull();
    }

    // ------------------------------------------------------------------ replay

    @Test
    void shouldRejectReplaysAndAcceptReorderingWithinTheWindow() {
        HomaSecurityConfig config = config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(1, key(1)), 1);
        PacketSealer a = sealer(config, A);
        PacketSealer b = sealer(config, B);
        List<byte[]> sealed = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            sealed.add(seal(a, B, packet(64, i)));
        }
        assertThat(open(b, A, sealed.get(5))).isNotNull();
        assertThat(open(b, A, sealed.get(5))).as("the same datagram again").isNull();
        assertThat(b.replayed()).isEqualTo(1);
        // out of order: the newest first, then 1,024 older ones backwards, all inside the window
        assertThat(open(b, A, sealed.get(2_999))).isNotNull();
        for (int i = 2_998; i >= 2_999 - 1_024; i--) {
            assertThat(open(b, A, sealed.get(i))).as("counter %d", i).isEqualTo(packet(64, i));
        }
        assertThat(b.replayed()).isEqualTo(1);
        for (int i = 2_998; i >= 2_999 - 1_024; i -= 97) {
            assertThat(open(b, A, sealed.get(i))).as("replay of counter %d", i).isNull();
        }
        assertThat(open(b, A, sealed.get(6))).as("below the window").isNull();
        assertThat(b.unauthenticated()).isZero();
        assertThat(b.replayed()).isEqualTo(1 + 11 + 1);
        assertThat(b.senderCount()).isEqualTo(1);
    }

    @Test
    void shouldKeepOneReplayWindowPerSenderEpoch() {
        HomaSecurityConfig config = config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(1, key(1)), 1);
        PacketSealer b = sealer(config, B);
        PacketSealer before = sealer(config, A);
        PacketSealer restarted = sealer(config, A); // same address, new epoch, counter from 0 again
        assertThat(open(b, A, seal(before, B, packet(10, 1)))).isNotNull();
        assertThat(open(b, A, seal(restarted, B, packet(10, 2)))).isNotNull();
        assertThat(b.replayed()).isZero();
        assertThat(b.senderCount()).isEqualTo(2);
    }

    @Test
    void shouldSlideTheWindowOverLongGaps() {
        ReplayWindow window = new ReplayWindow();
        assertThat(ReplayWindow.WINDOW).isGreaterThanOrEqualTo(1_024);
        assertThat(window.check(-1)).isFalse();
        for (long counter : new long[] {0, 1, 63, 64, 65, 5_000, 4_999, 1_000_000, 999_999}) {
            assertThat(window.check(counter)).as("new %d", counter).isTrue();
            window.update(counter);
            assertThat(window.check(counter)).as("seen %d", counter).isFalse();
        }
        assertThat(window.check(5_000)).isFalse(); // far below the window now
        assertThat(window.check(1_000_000 - ReplayWindow.WINDOW + 1)).isTrue();
        assertThat(window.check(1_000_000 - ReplayWindow.WINDOW)).isFalse();
        window.update(1_000_000 + 64L * 40);  // a jump longer than the ring clears it
        assertThat(window.check(1_000_000 + 64L * 40 - 100)).as("cleared slot inside the window").isTrue();
        assertThat(window.check(1_000_000)).as("below the window").isFalse();
        assertThat(window.highest()).isEqualTo(1_000_000 + 64L * 40);
    }

    // ------------------------------------------------------------------ keys

    @Test
    void shouldRotateKeysWithoutDowntime() {
        byte[] oldKey = key(1);
        byte[] newKey = key(2);
        HomaSecurityConfig.Mode mode = HomaSecurityConfig.Mode.AUTHENTICATE;
        // step 1: everyone accepts both, still sends with the old one
        PacketSealer a = sealer(config(mode, Map.of(1, oldKey, 2, newKey), 1), A);
        // step 2 at b: it sends with the new key already
        PacketSealer b = sealer(config(mode, Map.of(1, oldKey, 2, newKey), 2), B);
        assertThat(open(b, A, seal(a, B, packet(100, 1)))).isEqualTo(packet(100, 1));
        byte[] fromB = seal(b, A, packet(100, 2));
        assertThat(fromB[100]).as("key id").isEqualTo((byte) 2);
        assertThat(open(a, B, fromB)).isEqualTo(packet(100, 2));
        // step 3 at b: the old key is removed; a must have switched to the new key by then
        PacketSealer bNewOnly = sealer(config(mode, Map.of(2, newKey), 2), B);
        assertThat(open(bNewOnly, A, seal(a, B, packet(100, 3)))).as("old key refused").isNull();
        PacketSealer aSwitched = sealer(config(mode, Map.of(1, oldKey, 2, newKey), 2), A);
        assertThat(open(bNewOnly, A, seal(aSwitched, B, packet(100, 4)))).isEqualTo(packet(100, 4));
        assertThat(bNewOnly.unauthenticated()).isEqualTo(1);
    }

    @Test
    void shouldSealFromTheRoutedSourceAddressWhenBoundToTheWildcard() {
        HomaSecurityConfig config = config(HomaSecurityConfig.Mode.ENCRYPT, Map.of(1, key(1)), 1);
        InetSocketAddress wildcard = new InetSocketAddress("0.0.0.0", A.getPort());
        PacketSealer a = new PacketSealer(config, wildcard, new SecureRandom(), destination -> A.getAddress());
        PacketSealer b = sealer(config, new InetSocketAddress("0.0.0.0", B.getPort()));
        assertThat(open(b, A, seal(a, B, packet(100, 1)))).isEqualTo(packet(100, 1));
        assertThat(PacketSealer.routeSource(InetAddress.getLoopbackAddress()).isLoopbackAddress()).isTrue();
    }

    @Test
    void shouldAgreeOnIpv4AndIpv4MappedAddresses() throws Exception {
        InetAddress v4 = InetAddress.getByName("127.0.0.1");
        byte[] mapped = PacketSealer.ip16(v4);
        assertThat(mapped).hasSize(16);
        assertThat(HEX.formatHex(mapped)).isEqualTo("00000000000000000000ffff7f000001");
        assertThat(PacketSealer.ip16(InetAddress.getByName("::1"))).hasSize(16);
    }

    // ------------------------------------------------------------------ config

    @Test
    void shouldValidateTheConfigNamingTheSetting() {
        assertThat(HomaSecurityConfig.off().enabled()).isFalse();
        assertThat(HomaTransportConfig.defaults().security()).isEqualTo(HomaSecurityConfig.off());
        assertThatThrownBy(() -> config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(), -1))
                .isInstanceOfSatisfying(InvalidSettingException.class,
                        e -> assertThat(e.setting()).isEqualTo("security.keys"))
                .hasMessageContaining("at least one 32-byte key");
        assertThatThrownBy(() -> config(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(1, new byte[16]), 1))
                .isInstanceOfSatisfying(InvalidSettingException.class,
                        e -> assertThat(e.setting()).isEqualTo("security.keys"))
                .hasMessageContaining("key 1 must be 32 bytes (AES-256), was 16 bytes");
        assertThatThrownBy(() -> config(HomaSecurityConfig.Mode.ENCRYPT, Map.of(256, key(1)), 256))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> {
                    assertThat(e.setting()).isEqualTo("security.keys");
                    assertThat(e.maximum()).isEqualTo(255);
                })
                .hasMessageContaining("key id must be between 0 and 255, was 256");
        assertThatThrownBy(() -> config(HomaSecurityConfig.Mode.ENCRYPT, Map.of(1, key(1)), 2))
                .isInstanceOfSatisfying(InvalidSettingException.class,
                        e -> assertThat(e.setting()).isEqualTo("security.active-key"))
                .hasMessageContaining("must be the id of one of the keys [1]");
        assertThatThrownBy(() -> HomaTransportConfig.builder()
                .engine(io.homa.engine.EngineConfig.builder().mtuBytes(280).build())
                .security(HomaSecurityConfig.authenticate(Map.of(1, key(1)), 1)).build())
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("mtu"))
                .hasMessageContaining("between 297 and 65535");
    }

    @Test
    void shouldCopyKeysAndNeverPrintThem() {
        byte[] key = key(1);
        HomaSecurityConfig config = HomaSecurityConfig.encrypt(new java.util.HashMap<>(Map.of(3, key)), 3);
        key[0] ^= 1;
        assertThat(config.key(3)).isNotEqualTo(key);
        config.keys().get(3)[1] ^= 1;
        assertThat(config.key(3)).isEqualTo(key(1));
        assertThat(config).isEqualTo(HomaSecurityConfig.encrypt(Map.of(3, key(1)), 3));
        assertThat(config.toString()).isEqualTo("HomaSecurityConfig[mode=encrypt, keyIds=[3], activeKeyId=3]");
        assertThat(HomaTransportConfig.builder().security(config).build().toString()).doesNotContain(HEX.formatHex(key(1)));
    }
}
