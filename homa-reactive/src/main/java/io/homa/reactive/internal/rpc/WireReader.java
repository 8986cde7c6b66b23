package io.homa.reactive.internal.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/** A bounds-checked big-endian reader; every failure is INVALID_ARGUMENT naming the field. */
final class WireReader {
    private final byte[] bytes;
    private final int end;
    private final String kindName;
    private int position;

    WireReader(byte[] bytes, int offset, int length, String kindName) {
        this.bytes = bytes;
        this.position = offset;
        this.end = offset + length;
        this.kindName = kindName;
    }

    void header(int expectedKind) {
        int version = u8();
        if (version != EnvelopeCodec.VERSION) {
            throw malformed("version " + version + " is not supported (expected " + EnvelopeCodec.VERSION
                    + (version == 1 ? "; the peer runs an older Homa RPC layer without metadata" : "") + ")");
        }
        int kind = u8();
        if (kind != expectedKind) {
            throw malformed("kind " + kind + " is not a " + kindName + " (expected " + expectedKind + ")");
        }
    }

    int u8() {
        need(1, "header");
        return bytes[position++] & 0xFF;
    }

    int u16() {
        need(2, "header");
        int value = ((bytes[position] & 0xFF) << 8) | (bytes[position + 1] & 0xFF);
        position += 2;
        return value;
    }

    String utf8(int length, String field) {
        need(length, field);
        if (isAscii(bytes, position, length)) {
            // Service and method names and most metadata: valid UTF-8 as they are, and read
            // without a decoder (which costs four objects a field).
            String value = new String(bytes, position, length, StandardCharsets.US_ASCII);
            position += length;
            return value;
        }
        try {
            String value = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, position, length))
                    .toString();
            position += length;
            return value;
        } catch (CharacterCodingException e) {
            throw malformed(field + " is not valid UTF-8");
        }
    }

    private static boolean isAscii(byte[] bytes, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (bytes[i] < 0) {
                return false;
            }
        }
        return true;
    }

    String ascii(int length, String field) {
        need(length, field);
        if (length == 0) {
            throw malformed(field + " is empty");
        }
        for (int i = position; i < position + length; i++) {
            if (bytes[i] < 0x21 || bytes[i] > 0x7E) {
                throw malformed(field + " is not printable ASCII");
            }
        }
        String value = new String(bytes, position, length, StandardCharsets.US_ASCII);
        position += length;
        return value;
    }

    long u32() {
        need(4, "header");
        long value = ((long) (bytes[position] & 0xFF) << 24) | ((bytes[position + 1] & 0xFF) << 16)
                | ((bytes[position + 2] & 0xFF) << 8) | (bytes[position + 3] & 0xFF);
        position += 4;
        return value;
    }

    byte[] bytes(long length, String field) {
        if (end - position < length) {
            throw malformed(field + " needs " + length + " bytes but only " + (end - position) + " remain");
        }
        byte[] value = Arrays.copyOfRange(bytes, position, position + (int) length);
        position += (int) length;
        return value;
    }

    int position() {
        return position;
    }

    int remaining() {
        return end - position;
    }

    Map<String, String> metadata() {
        int count = u16();
        if (count == 0) {
            return Map.of();
        }
        Map<String, String> metadata = new LinkedHashMap<>(count * 2);
        for (int i = 0; i < count; i++) {
            String key = ascii(u8(), "metadata key");
            String value = utf8(u16(), "metadata value of '" + key + "'");
            if (metadata.put(key, value) != null) {
                throw malformed("metadata key '" + key + "' appears twice");
            }
        }
        return metadata;
    }

    private void need(int length, String field) {
        if (end - position < length) {
            throw malformed(field + " needs " + length + " bytes but only " + (end - position) + " remain");
        }
    }

    HomaException malformed(String why) {
        return new HomaException(HomaStatus.INVALID_ARGUMENT,
                "malformed " + kindName + (kindName.equals("frames") ? ": " : " envelope: ") + why);
    }
}
