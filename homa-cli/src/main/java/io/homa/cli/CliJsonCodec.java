package io.homa.cli;

import io.homa.reactive.rpc.JacksonPayloadCodec;
import io.homa.reactive.rpc.JsonPayloadCodec;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.Base64;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * The JSON codec as the server's ({@code "json"}), reading every result as a {@link JsonNode}, also
 * a raw {@code byte[]} result (which the server sends as the bytes after one 0xFF tag byte, not as
 * JSON): that one becomes a base64 string, what JSON carries for {@code byte[]}.
 */
final class CliJsonCodec extends JacksonPayloadCodec {

    /** The byte before a raw {@code byte[]} value ({@code JacksonPayloadCodec}'s tag). */
    private static final byte RAW_BYTES_TAG = (byte) 0xFF;

    CliJsonCodec(ObjectMapper mapper) {
        super(JsonPayloadCodec.NAME, "JSON", mapper);
    }

    @Override
    public @Nullable Object decode(byte[] bytes, int offset, int length, Type type) {
        if (type == JsonNode.class && length > 0 && bytes[offset] == RAW_BYTES_TAG) {
            return JsonNodeFactory.instance.stringNode(Base64.getEncoder()
                    .encodeToString(Arrays.copyOfRange(bytes, offset + 1, offset + length)));
        }
        return super.decode(bytes, offset, length, type);
    }
}
