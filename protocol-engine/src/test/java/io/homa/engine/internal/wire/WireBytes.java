package io.homa.engine.internal.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/** Test helpers for the wire codec tests: hand-written byte arrays and guarded buffers. */
final class WireBytes {
    /** Filler for bytes that an encoder must not touch. */
    static final byte CANARY = (byte) 0xA5;

    private static final HexFormat HEX = HexFormat.ofDelimiter(" ").withUpperCase();

    private WireBytes() {
    }

    /** Bytes from unsigned literals, e.g. {@code bytes(0x12, 0xAB)}; each value must be 0..255. */
    static byte[] bytes(int... values) {
        byte[] result = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            if (values[i] < 0 || values[i] > 0xFF) {
                throw new IllegalArgumentException("values[" + i + "] must be 0..255, was " + values[i]);
            }
            result[i] = (byte) values[i];
        }
        return result;
    }

    /** A heap or direct buffer of {@code capacityBytes}, every byte set to {@link #CANARY}. */
    static ByteBuffer canaryBuffer(int capacityBytes, boolean direct) {
        ByteBuffer buffer = direct ? ByteBuffer.allocateDirect(capacityBytes) : ByteBuffer.allocate(capacityBytes);
        for (int i = 0; i < capacityBytes; i++) {
            buffer.put(i, CANARY);
        }
        return buffer;
    }

    /** Zeroes {@code lengthBytes} bytes from {@code from}: a fresh packet region inside a canary buffer. */
    static void zero(ByteBuffer buffer, int from, int lengthBytes) {
        for (int i = 0; i < lengthBytes; i++) {
            buffer.put(from + i, (byte) 0);
        }
    }

    /** Copies {@code bytes} into {@code buffer} at absolute index {@code at}. */
    static void place(ByteBuffer buffer, int at, byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            buffer.put(at + i, bytes[i]);
        }
    }

    /** The {@code lengthBytes} bytes at absolute index {@code from}, without moving the position. */
    static byte[] slice(ByteBuffer buffer, int from, int lengthBytes) {
        ByteBuffer all = wholeCapacity(buffer);
        byte[] result = new byte[lengthBytes];
        for (int i = 0; i < lengthBytes; i++) {
            result[i] = all.get(from + i);
        }
        return result;
    }

    /** A view of all of {@code buffer}'s bytes, whatever its position and limit (absolute gets check the limit). */
    private static ByteBuffer wholeCapacity(ByteBuffer buffer) {
        return buffer.duplicate().clear();
    }

    /** Compares as upper-case hex, so a failure shows the differing byte positions readably. */
    static void assertBytes(byte[] actual, byte[] expected) {
        assertThat(HEX.formatHex(actual)).isEqualTo(HEX.formatHex(expected));
    }

    /** Asserts that every byte outside {@code [from, from + lengthBytes)} still holds {@link #CANARY}. */
    static void assertUntouchedOutside(ByteBuffer buffer, int from, int lengthBytes) {
        ByteBuffer all = wholeCapacity(buffer);
        int firstChanged = -1;
        for (int i = 0; i < all.capacity() && firstChanged < 0; i++) {
            if ((i < from || i >= from + lengthBytes) && all.get(i) != CANARY) {
                firstChanged = i;
            }
        }
        assertThat(firstChanged).as("index of the first changed byte outside the packet [%d, %d) (-1 = none)",
                from, from + lengthBytes).isEqualTo(-1);
    }
}
